"""Dispersion score (Xie et al., NeurIPS 2023, "On the importance of feature separability in predicting
out-of-distribution error"): how far apart the target's pseudo-label clusters lie in feature space.

Each target example is pseudo-labelled with the model's prediction ``ŷ_i = argmax_k z_ik``; with ``x_i`` its
penultimate features, ``n_k`` the number of examples predicted ``k``, ``μ_k`` their mean and ``μ`` the mean of all:

    S = log( Σ_k n_k ‖μ_k − μ‖² / (K − 1) )                       (natural log; features' units squared)

the between-class term of the Calinski–Harabasz index without its within-class denominator.  Better separated
clusters = a larger score = a higher accuracy: a score, mapped to accuracy by paper 5's line over labelled shifted
sets (``fit(shifted={name: {"features": ..., "logits": ..., "labels": ...}})``) or a ``regressor``.  Computed as
``Σ_k ‖s_k‖² / n_k − ‖s‖² / N`` from the per-class feature sums ``s_k`` (a class nobody is predicted adds 0), so
it merges over chunks and its bootstrap re-weights sums, never re-clusters.

``K`` is the number of classes of the logits, as in the paper; the authors' code (github.com/Renchunzi-Xie/
Dispersion) divides by the number of classes *predicted* on the set minus one, which differs when a class is
never predicted.  The score is not normalised by N: ``Σ_k n_k ‖·‖²`` grows with the set size (``log N`` in S), so
the line should be fitted on shifted sets of the target's size, as the paper's are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import n_classes_of, resolve_logits
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_matrix

__all__ = ["dispersion_score", "Dispersion"]


def _between_class(features: np.ndarray, pred: np.ndarray, k: int, weights: np.ndarray | None = None) -> float:
    """``Σ_k n_k ‖μ_k − μ‖²`` from the (weighted) per-class sums; classes without examples add 0."""
    from scipy import sparse

    n = features.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = np.bincount(pred, weights=w, minlength=k)
    sums = np.asarray(sparse.csr_matrix((w, (pred, np.arange(n))), shape=(k, n)) @ features, dtype=np.float64)
    total = sums.sum(axis=0)
    seen = counts > 0
    between = float((np.einsum("kd,kd->k", sums[seen], sums[seen]) / counts[seen]).sum() - total @ total / w.sum())
    return max(between, 0.0)


def dispersion_score(features: Any, logits: Any) -> float:
    """``S = log(Σ_k n_k ‖μ_k − μ‖² / (K − 1))`` of the target (module docstring); ``-inf`` when every example is
    predicted as one class (no dispersion)."""
    z = resolve_logits(logits=logits, probs=None, where="dispersion_score")
    x = _check_features(features, z.shape[0])
    return _score(_between_class(x, z.argmax(axis=1), z.shape[1]), z.shape[1])


def _score(between: float, k: int) -> float:
    with np.errstate(divide="ignore"):
        return float(np.log(between / (k - 1)))


def _check_features(features: Any, n: int) -> np.ndarray:
    if features is None:
        raise InputValidationError(
            "features: Dispersion needs the penultimate features of the target set (an (n, d) array beside the "
            "logits); a setup that gives logits only cannot use it"
        )
    x = check_matrix(features, "features", min_rows=2)
    if x.shape[0] != n:
        raise InputValidationError(f"features: expected {n} rows (one per row of logits), got {x.shape[0]}")
    return x


class Dispersion(LabelFreeEstimator):
    """Dispersion score of the target's pseudo-label clusters in feature space (module docstring).

    ``fit(*, logits=None, probs=None, shifted=None)`` records the class count and, with labelled ``shifted`` sets
    given as ``{name: {"features", "logits", "labels"}}``, fits paper 5's line score -> accuracy;
    ``estimate(*, features, logits)`` needs both.

    Parameters
    ----------
    regressor : object with ``predict`` or callable, optional
        Maps the score to an accuracy fraction; default: the line fitted on ``fit(shifted=...)``.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0): multinomial weights on the target rows re-weight the
        per-class sums (pseudo-labels fixed).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> f = {n: {"logits": v[0], "labels": v[1], "features": np.tanh(v[0] @ [[1.0, 0.5], [0.2, 1.0], [0.7, 0.3]])} for n, v in shifted.items()}
    >>> est = Dispersion().fit(logits=z, shifted=f)
    >>> round(est.estimate(logits=target, features=np.tanh(target @ [[1.0, 0.5], [0.2, 1.0], [0.7, 0.3]])).accuracy, 4)
    0.7772
    """

    name = "dispersion"
    target_inputs = ("features", "logits", "probs")
    output = "score"
    requires_fit = False
    shifted_inputs = ("features", "logits")  # what each labelled shifted set must give for its score

    def __init__(self, *, regressor: Any = None, n_boot: int = 200, level: float = 0.95,
                 random_state: int | None = 0):  # fmt: skip
        self.regressor = regressor
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(self, *, logits: Any = None, probs: Any = None, shifted: Any = None) -> Dispersion:
        """Record the reference class count; with ``shifted``, fit the line score -> accuracy."""
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_logits)
        return self

    def _prepare_target(self, *, features=None, logits=None, probs=None) -> Prepared:
        z = resolve_logits(logits=logits, probs=probs, where="Dispersion.estimate")
        self._check_target_classes(n_classes_of(z))
        x = _check_features(features, z.shape[0])
        if z.shape[1] < 2:
            raise InputValidationError(f"logits: Dispersion needs at least 2 classes, got {z.shape[1]}")
        pred = z.argmax(axis=1)
        k = z.shape[1]
        return Prepared(n=z.shape[0], arrays={"X": x, "pred": pred, "k": np.array(k)},
                        details={"predicted_classes": int(np.unique(pred).size)})  # fmt: skip

    def _point(self, prep: Prepared) -> float:
        k = int(prep.arrays["k"])
        return _score(_between_class(prep.arrays["X"], prep.arrays["pred"], k), k)

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:
        k = int(prep.arrays["k"])
        return _score(_between_class(prep.arrays["X"], prep.arrays["pred"], k, counts), k)
