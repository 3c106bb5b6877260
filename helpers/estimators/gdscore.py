"""GdScore (Xie, Odonnat, Feofanov, Redko, Zhang & An, TMLR 2025): the norm of the classification layer's gradient.

A model that generalises poorly to the target would move its last layer more: GdScore is the Lp norm of the
gradient of the mean cross-entropy over the target, with respect to the classification layer's weight matrix
W (K × d), under pseudo-labels (paper §4, Algorithm 1):

* pseudo-label ``ŷ_i = argmax_k p_ik`` where the confidence ``max_k p_ik ≥ τ`` (τ = 0.5), else a class drawn
  uniformly at random (seeded by ``random_state``);
* for a linear last layer ``z = W h + b`` the gradient has a closed form:
  ``G = ∂/∂W (1/n) Σ_i CE(z_i, ŷ_i) = (1/n) Σ_i (p_i − e_{ŷ_i}) h_iᵀ``;
* ``GdScore = ‖G‖_p = (Σ_kd |G_kd|^p)^{1/p}`` with p = 0.3.

A larger score means a lower accuracy; paper 5's line over labelled shifted sets maps it to an accuracy, as for the
other set-level scores.  The score reads the penultimate features ``h`` (the last layer's input) and the logits:
as arrays (``features=``, ``logits=``), or from the model itself (``GdScore(model=...)``, ``estimate(inputs=...)``),
which runs it in evaluation mode under ``torch.inference_mode`` and restores every module's mode afterwards, so
that parameters, buffers (BatchNorm statistics) and modes are the same before and after.

Departures from the authors' released code (docs/estimators.md): their script puts the model in training mode,
so BatchNorm layers normalise with, and update their running statistics from, the target batches before the
score is read; we read the model as deployed (evaluation mode, nothing updated).  They accumulate the gradient by
backpropagation over batches; we use the closed form above (the same gradient of the weight; the bias is not
part of the score), which needs no backward pass and no change to the model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import n_classes_of, resolve_logits
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_matrix

__all__ = ["gdscore", "gdscore_inputs", "GdScore"]


def gdscore(features: np.ndarray, logits: np.ndarray, *, threshold: float = 0.5, p: float = 0.3,
            random_state: int | None = 0) -> float:  # fmt: skip
    """GdScore of one set from its penultimate ``features`` (n, d) and ``logits`` (n, K) (module docstring).

    >>> h = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> z = np.array([[2.0, 0.0], [0.0, 0.0]])   # confident on row 0; row 1 at 0.5, kept (>= threshold)
    >>> round(gdscore(h, z, p=1.0), 4)           # G = [[-0.0596, -0.25], [0.0596, 0.25]] / ... summed |G|
    0.6192
    """
    return float(_norm(_outer_rows(features, logits, threshold, random_state).mean(axis=0), p))


def _pseudo_labels(probs: np.ndarray, threshold: float, random_state: int | None) -> np.ndarray:
    random = np.random.default_rng(random_state).integers(0, probs.shape[1], probs.shape[0])
    return np.where(probs.max(axis=1) >= threshold, probs.argmax(axis=1), random)


def _outer_rows(h: np.ndarray, z: np.ndarray, threshold: float, random_state: int | None) -> np.ndarray:
    """Per-example gradients ``(p_i − e_ŷi) h_iᵀ`` flattened: (n, K·d), float64."""
    from helpers.estimators._common import softmax

    p = softmax(np.asarray(z, dtype=np.float64))
    r = p.copy()
    r[np.arange(len(r)), _pseudo_labels(p, threshold, random_state)] -= 1.0
    return (r[:, :, None] * np.asarray(h, dtype=np.float64)[:, None, :]).reshape(len(r), -1)


def _norm(g: np.ndarray, p: float) -> np.ndarray:
    return (np.abs(g) ** p).sum(axis=-1) ** (1.0 / p)


def gdscore_inputs(
    model: Any, inputs: Any, *, layer: Any = None, batch_size: int = 256
) -> dict[str, np.ndarray]:
    """``{"features", "logits"}`` of ``model`` on ``inputs`` (a tensor or array batch-able along its first axis):
    the input and output of ``layer`` (default the model's last ``nn.Linear``), captured by a forward hook with
    the model in evaluation mode; every module's mode is restored afterwards and nothing else changes."""
    import torch
    from torch import nn

    layer = layer or next((m for m in reversed(list(model.modules())) if isinstance(m, nn.Linear)), None)
    if not isinstance(layer, nn.Linear):
        raise InputValidationError(
            "layer: expected the model's classification layer (an nn.Linear); none found"
        )
    modes = {m: m.training for m in model.modules()}
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    hook = layer.register_forward_hook(lambda m, a, out: seen.append((a[0].float().cpu().numpy(),
                                                                       out.float().cpu().numpy())))  # fmt: skip
    try:
        model.eval()
        x = torch.as_tensor(np.asarray(inputs)) if not torch.is_tensor(inputs) else inputs
        with torch.inference_mode():
            for i in range(0, len(x), batch_size):
                model(x[i : i + batch_size])
    finally:
        hook.remove()
        for m, mode in modes.items():
            m.train(mode)
    return {"features": np.concatenate([s[0] for s in seen]), "logits": np.concatenate([s[1] for s in seen])}


class GdScore(LabelFreeEstimator):
    """GdScore as an estimator (module docstring): a score, mapped to accuracy by the line fitted on
    ``fit(shifted={name: {"features", "logits", "labels"}})`` or by ``regressor``; ``estimate(features=,
    logits=)``, or ``estimate(inputs=)`` with ``model=`` given.  ``threshold`` τ and ``p`` as in the paper.

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> proj = np.array([[1.0, 0.5], [0.2, 1.0], [0.7, 0.3]])  # stand-in penultimate features: tanh(z @ proj)
    >>> sets = {n: {"logits": v[0], "labels": v[1], "features": np.tanh(v[0] @ proj)} for n, v in shifted.items()}
    >>> est = GdScore().fit(logits=z, shifted=sets)
    >>> round(est.measure(logits=target, features=np.tanh(target @ proj)).score, 4)  # the raw score
    12.3281
    """

    name = "gdscore"
    output = "score"
    requires_fit = False
    direction = -1  # a larger gradient norm, a lower accuracy
    target_inputs = ("features", "logits", "inputs")
    shifted_inputs = ("features", "logits")

    def __init__(self, *, model: Any = None, threshold: float = 0.5, p: float = 0.3, regressor: Any = None,
                 n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):  # fmt: skip
        self.model, self.threshold, self.p, self.regressor = model, threshold, p, regressor
        self.n_boot, self.level, self.random_state = n_boot, level, random_state

    def fit(self, *, logits: Any = None, probs: Any = None, shifted: Any = None) -> GdScore:
        """Record the reference class count; with ``shifted``, fit the line score -> accuracy."""
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_logits)
        return self

    def _prepare_target(self, *, features: Any = None, logits: Any = None, inputs: Any = None) -> Prepared:
        if inputs is not None:
            if self.model is None:
                raise InputValidationError(
                    "inputs: GdScore reads inputs through its model; pass GdScore(model=...)"
                )
            features, logits = gdscore_inputs(self.model, inputs).values()
        z = resolve_logits(logits=logits, where="GdScore.estimate")
        self._check_target_classes(n_classes_of(z))
        if features is None:
            raise InputValidationError("features: GdScore needs the penultimate features (the classification "
                                       "layer's input, (n, d)) beside the logits, or inputs= with model=")  # fmt: skip
        h = check_matrix(features, "features")
        if h.shape[0] != z.shape[0]:
            raise InputValidationError(
                f"features: expected {z.shape[0]} rows (one per row of logits), got {h.shape[0]}"
            )
        if not (0 < float(self.p) and 0 <= float(self.threshold) <= 1):
            raise InputValidationError(f"p, threshold: expected p > 0 and threshold in [0, 1], got {self.p}, "
                                       f"{self.threshold}")  # fmt: skip
        return Prepared(
            n=z.shape[0], arrays={"g": _outer_rows(h, z, float(self.threshold), self.random_state)}
        )

    def _point(self, prep: Prepared) -> float:
        return float(_norm(prep.arrays["g"].mean(axis=0), float(self.p)))

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["g"]

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        return _norm(means, float(self.p))
