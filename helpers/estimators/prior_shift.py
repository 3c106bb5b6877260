"""Accuracy under prior-probability (label) shift from the reference confusion matrix and quantified prevalences.

Under prior shift the class-conditional distributions stay, only the class prevalences move: ``p_T(x | y) =
p_R(x | y)``.  Then the classifier's behaviour per class stays too, and the target's confusion matrix is

    C_T[k, j] = q_k · R[k, j],      R[k, j] = P_R(ŷ = j | y = k)  (row-normalised reference confusion matrix),

so ``accuracy = Σ_k q_k R[k, k]`` and any other metric follows from ``C_T``.  What is unknown is the target
prevalence vector q: a *quantifier* estimates it.  Here it is PACC (probabilistic adjusted classify and count):
the target's mean softmax ``m = (1/N) Σ_i p_i`` equals ``M q`` with ``M[j, k] = E_R[p_j | y = k]``, the reference's
class-conditional mean softmax, so q solves ``min ‖M q − m‖₂`` over the simplex (``q ≥ 0``, ``Σ q = 1``;
non-negative least squares with the sum constraint as a heavily weighted extra row, then renormalised).

This is the confusion-matrix reading of LEAP-style estimation under prior shift (Volpi, Moreo & Sebastiani 2025)
with PACC as the quantifier; the paper's own quantifier choice and linear system are not reproduced here.  Right
where the shift is a label shift; under covariate shift the class-conditional behaviour moves and the estimate is
biased like any reference-based method.  ``details`` holds the estimated prevalences ``q`` and the target
confusion matrix.  The bootstrap resamples the target rows (the mean softmax's columns) and re-solves q.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import nnls

from helpers.errors import InputValidationError
from helpers.estimators._common import n_classes_of, resolve_probs
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_labels

__all__ = ["pacc_prevalences", "ConfusionMatrixShift"]

_SUM_WEIGHT = 1e3  # weight of the Σ q = 1 row in the non-negative least squares


def pacc_prevalences(mean_probs: np.ndarray, class_means: np.ndarray) -> np.ndarray:
    """Target prevalences q on the simplex with ``class_means @ q ≈ mean_probs`` (PACC; module docstring).

    ``class_means[j, k]`` = mean softmax of class j over the reference examples of class k (K x K)."""
    k = class_means.shape[0]
    a = np.vstack([class_means, np.full((1, k), _SUM_WEIGHT)])
    b = np.append(np.asarray(mean_probs, dtype=np.float64), _SUM_WEIGHT)
    q, _ = nnls(a, b)
    total = q.sum()
    return q / total if total > 0 else np.full(k, 1.0 / k)


class ConfusionMatrixShift(LabelFreeEstimator):
    """Accuracy ``Σ_k q_k R[k, k]`` with the reference confusion matrix R and PACC prevalences q (module docstring).

    Parameters
    ----------
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(ConfusionMatrixShift().fit(logits=z, labels=y).estimate(logits=target).accuracy, 4)
    0.7523
    """

    name = "confusion_matrix_shift"
    output = "accuracy"

    def __init__(self, *, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(self, *, logits: Any = None, probs: Any = None, labels: Any = None):
        """The reference confusion matrix (rows: true class, normalised) and class-conditional mean softmax; every
        class must occur in the reference ``labels``."""
        self._check_params()
        p = resolve_probs(logits=logits, probs=probs, where="ConfusionMatrixShift.fit")
        if labels is None:
            raise InputValidationError("ConfusionMatrixShift.fit: labels= is required (the reference confusion matrix)")
        k = p.shape[1]
        y = check_labels(labels, "labels", n_classes=k, n=p.shape[0])
        counts = np.bincount(y, minlength=k)
        if (counts == 0).any():
            raise InputValidationError(
                f"labels: classes {np.flatnonzero(counts == 0).tolist()} do not occur in the reference; the confusion "
                "matrix needs every class"
            )
        pred = p.argmax(axis=1)
        confusion = np.zeros((k, k))
        np.add.at(confusion, (y, pred), 1.0)
        self.confusion_ = confusion / counts[:, None]
        sums = np.zeros((k, k))
        np.add.at(sums, y, p.astype(np.float64, copy=False))
        self.class_means_ = (sums / counts[:, None]).T  # [j, k] = E[p_j | y = k]
        self.n_classes_ = k
        return self

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        self._check_target_classes(n_classes_of(logits, probs))
        p = resolve_probs(logits=logits, probs=probs, where="ConfusionMatrixShift.estimate")
        q = pacc_prevalences(p.mean(axis=0, dtype=np.float64), self.class_means_)
        details = {"prevalences": q.tolist(), "confusion": (q[:, None] * self.confusion_).tolist()}
        return Prepared(n=p.shape[0], arrays={"P": p}, details=details)

    def _point(self, prep: Prepared) -> float:
        return float(self._from_means(prep.arrays["P"].mean(axis=0, dtype=np.float64)[None, :], prep)[0])

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["P"]

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        diag = np.diagonal(self.confusion_)
        return np.array([pacc_prevalences(m, self.class_means_) @ diag for m in np.asarray(means)])
