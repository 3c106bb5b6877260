"""Agreement-on-the-line: ALine-S and ALine-D (Baek, Jiang, Raghunathan & Kolter, NeurIPS 2022, §4).

Across a collection of models, the probit-scaled out-of-distribution (OOD) agreement of every pair of models lies on
a line against their in-distribution (ID) agreement, with the slope and bias of the line of OOD against ID accuracy
(when accuracy is on the line).  Agreement needs no labels, so the accuracy line is read off the agreement line.
With Φ⁻¹ the probit (inverse standard normal CDF):

* the agreement line: ``Φ⁻¹(agr_OOD(i, j)) ≈ a · Φ⁻¹(agr_ID(i, j)) + b``, (a, b) fitted by least squares over all
  pairs i < j;
* **ALine-S**: ``acc_OOD(i) = Φ(a · Φ⁻¹(acc_ID(i)) + b)``;
* **ALine-D**: for every pair, ``½(x_i + x_j) = Φ⁻¹(agr_OOD(i, j)) + a · (½(Φ⁻¹(acc_ID(i)) + Φ⁻¹(acc_ID(j)))
  − Φ⁻¹(agr_ID(i, j)))``, the unknowns ``x_i = Φ⁻¹(acc_OOD(i))`` solved by least squares over the pairs (b
  cancels), ``acc_OOD(i) = Φ(x_i)``.

Both need three models at least (two pairs to fit a line; as many pair equations as models for ALine-D).
A rate of 0 or 1 has an infinite probit: rates are clipped to ``[1 / (2n), 1 − 1 / (2n)]`` on n examples (our
choice; the paper does not say).  Units: accuracies and agreements are fractions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

from helpers.errors import InputValidationError
from helpers.estimators._common import n_classes_of, resolve_probs
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_labels

__all__ = ["MIN_MODELS", "aline_accuracies", "ALineS", "ALineD"]

#: the fewest models (the one estimated included) either method works with
MIN_MODELS = 3


def _probit(rate: np.ndarray, n: float) -> np.ndarray:
    return norm.ppf(np.clip(rate, 0.5 / n, 1.0 - 0.5 / n))


def _pair_agreement(pred: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pairs i < j as two index arrays, weighted agreement rate of each pair) of an (M, n) prediction matrix."""
    i, j = np.triu_indices(pred.shape[0], 1)
    agree = (pred[i] == pred[j]).astype(np.float64) @ weights / weights.sum()
    return (i, j), agree


def aline_accuracies(id_predictions: np.ndarray, id_labels: np.ndarray, ood_predictions: np.ndarray, *,
                     method: str = "d", ood_weights: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Every model's estimated OOD accuracy (fractions, shape (M,)) from ALine-S (``method="s"``) or ALine-D
    (``"d"``), given the (M, n_id) predicted classes on the labelled ID set and the (M, n_ood) ones on the target.

    ``ood_weights``: integer or real weights of the target examples (a bootstrap replicate); default all 1.

    >>> ood = np.array([[0, 1, 1, 0], [0, 1, 0, 0], [1, 1, 1, 0]])
    >>> ida = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 1], [0, 1, 1, 1, 1]])
    >>> aline_accuracies(ida, np.array([0, 1, 1, 0, 1]), ood, method="s").round(3)
    array([0.881, 0.75 , 0.75 ])
    """
    if method not in ("s", "d"):
        raise InputValidationError(f"method: expected 's' (ALine-S) or 'd' (ALine-D), got {method!r}")
    m, n_id = id_predictions.shape
    if m < MIN_MODELS:
        raise InputValidationError(
            f"models: ALine needs at least {MIN_MODELS} models of one collection, got {m}"
        )
    w = (
        np.ones(ood_predictions.shape[1])
        if ood_weights is None
        else np.asarray(ood_weights, dtype=np.float64)
    )
    n_ood = float(w.sum())
    (i, j), agr_id = _pair_agreement(id_predictions, np.ones(n_id))
    _, agr_ood = _pair_agreement(ood_predictions, w)
    x_id, y_ood = _probit(agr_id, n_id), _probit(agr_ood, n_ood)
    if np.ptp(x_id) == 0:
        raise InputValidationError(
            "models: every pair agrees equally often in distribution; no agreement line"
        )
    a, b = np.polyfit(x_id, y_ood, 1)
    acc_id = _probit((id_predictions == id_labels[None, :]).mean(axis=1), n_id)
    if method == "s":
        return norm.cdf(a * acc_id + b)
    design = np.zeros((i.size, m))
    design[np.arange(i.size), i] = design[np.arange(i.size), j] = 0.5
    rhs = y_ood + a * (0.5 * (acc_id[i] + acc_id[j]) - x_id)
    return norm.cdf(np.linalg.lstsq(design, rhs, rcond=None)[0])


def _predictions(where: str, logits: Any, probs: Any, others: Any) -> np.ndarray:
    """(M, n) predicted classes: the estimated model first, then ``others`` (a mapping name -> logits)."""
    if not isinstance(others, dict) or len(others) < MIN_MODELS - 1:
        got = f"{len(others)} other models" if isinstance(others, dict) else type(others).__name__
        raise InputValidationError(f"others: expected a dict of at least {MIN_MODELS - 1} other models' logits "
                                   f"(name -> (n, K) array on the same examples), got {got}")  # fmt: skip
    rows = [resolve_probs(logits=logits, probs=probs, where=where)]
    rows += [resolve_probs(logits=v, where=f"{where}: others[{k!r}]") for k, v in others.items()]
    if len({r.shape for r in rows}) != 1:
        raise InputValidationError(f"others: every model's outputs must have the shape of logits= "
                                   f"{rows[0].shape}, got {[r.shape for r in rows]}")  # fmt: skip
    return np.stack([r.argmax(axis=1) for r in rows])


class _ALine(LabelFreeEstimator):
    """Shared by ALine-S / ALine-D: ``fit`` takes the collection on the labelled ID set, ``estimate`` on the
    target; the estimated model is the one of ``logits=``, ``others`` maps the collection's other models (the same
    names in both calls) to their outputs.  The interval reweights the target's examples (one solve each)."""

    method = "d"
    target_inputs = ("logits", "probs", "others")

    def __init__(self, *, n_boot: int = 200, level: float = 0.95, random_state: int = 0):
        self.n_boot, self.level, self.random_state = n_boot, level, random_state

    def fit(self, *, logits: Any = None, probs: Any = None, labels: Any = None, others: Any = None) -> _ALine:
        self._check_params()
        where = f"{type(self).__name__}.fit"
        self.id_predictions_ = _predictions(where, logits, probs, others)
        self.others_, self.n_classes_ = list(others), n_classes_of(logits, probs)
        self.id_labels_ = check_labels(labels, "labels", n_classes=self.n_classes_, n=self.id_predictions_.shape[1])
        return self

    def _prepare_target(self, *, logits: Any = None, probs: Any = None, others: Any = None) -> Prepared:
        pred = _predictions(f"{type(self).__name__}.estimate", logits, probs, others)
        if list(others) != self.others_:
            raise InputValidationError(
                f"others: expected the models given to fit, {self.others_}, got {list(others)}"
            )
        return Prepared(n=pred.shape[1], arrays={"pred": pred}, details={"models": 1 + len(self.others_)})

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:
        return float(aline_accuracies(self.id_predictions_, self.id_labels_, prep.arrays["pred"],
                                      method=self.method, ood_weights=counts)[0])  # fmt: skip

    def _point(self, prep: Prepared) -> float:
        return self._weighted(prep, np.ones(prep.n))


class ALineS(_ALine):
    """ALine-S: the agreement line's slope and bias applied to the model's probit ID accuracy (module docstring).

    Examples
    --------
    >>> from helpers.estimators.examples import example_collection
    >>> ref, ref_y, target = example_collection()  # four 3-class models: logits on 200 ID and 150 target rows
    >>> est = ALineS().fit(logits=ref["a"], labels=ref_y, others={m: ref[m] for m in "bcd"})
    >>> round(est.estimate(logits=target["a"], others={m: target[m] for m in "bcd"}).accuracy, 4)
    0.5699
    """

    name = "aline_s"
    method = "s"


class ALineD(_ALine):
    """ALine-D: every model's probit OOD accuracy by least squares over the pair equations (module docstring).

    Examples
    --------
    >>> from helpers.estimators.examples import example_collection
    >>> ref, ref_y, target = example_collection()
    >>> est = ALineD().fit(logits=ref["a"], labels=ref_y, others={m: ref[m] for m in "bcd"})
    >>> round(est.estimate(logits=target["a"], others={m: target[m] for m in "bcd"}).accuracy, 4)
    0.5363
    """

    name = "aline_d"
    method = "d"
