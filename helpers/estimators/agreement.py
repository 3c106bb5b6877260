"""Agreement score (Jiang et al., ICLR 2022; Madani et al. 2004; paper 5 App. B, Eq. 13).

Two models trained on the same data with different randomness (seed, initialisation, data order) are run on the
target; the fraction of target examples on which their predicted classes agree is the accuracy estimate:

    Agree = (1/n) sum_i 1[argmax_k f1_k(x_i) == argmax_k f2_k(x_i)]

(Jiang et al. show that, for a well-calibrated ensemble, expected disagreement equals expected test error.)
Paper 5's Eq. 13 prints "max" where argmax is meant.  Argmax ties go to the lowest class index (numpy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import _exactly_one, n_classes_of
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_labels, check_logits, check_probs

__all__ = ["agreement_score", "AgreementScore"]


def _predictions(x: Any, name: str) -> np.ndarray:
    """(n,) integer predictions -> as is; (n, K) logits or probabilities -> argmax."""
    if np.ndim(x) == 1:
        return check_labels(x, name)
    return check_logits(x, name).argmax(axis=1)


def agreement_score(predictions_a: Any, predictions_b: Any) -> float:
    """Fraction of examples on which two models' predictions agree.

    Parameters
    ----------
    predictions_a, predictions_b : array (n,) of class indices, or (n, K) logits / probabilities (argmax taken)
    """
    a = _predictions(predictions_a, "predictions_a")
    b = _predictions(predictions_b, "predictions_b")
    if a.shape[0] != b.shape[0]:
        raise InputValidationError(
            f"predictions_a and predictions_b: expected the same number of rows, got {a.shape[0]} and {b.shape[0]}"
        )
    if (
        np.ndim(predictions_a) == 2
        and np.ndim(predictions_b) == 2
        and np.shape(predictions_a)[1] != np.shape(predictions_b)[1]
    ):
        raise InputValidationError(
            f"class-count mismatch: predictions_a has {np.shape(predictions_a)[1]} classes, "
            f"predictions_b has {np.shape(predictions_b)[1]}"
        )
    return float((a == b).mean())


class AgreementScore(LabelFreeEstimator):
    """Agreement between two models on the target as the accuracy estimate (Jiang et al. 2022).

    ``estimate(*, logits=None, probs=None, other_logits=None, other_probs=None)``: one of ``logits``/``probs``
    for the model being evaluated and one of ``other_logits``/``other_probs`` for the second model (same
    architecture and data, different seed).  ``fit`` is optional (records K for a consistency check).

    Parameters
    ----------
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0); exact binomial replicates.

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(AgreementScore().fit().estimate(logits=target, other_logits=target[:, [0, 2, 1]]).accuracy, 4)
    0.375
    """

    name = "agreement"
    target_inputs = ("logits", "probs", "other_logits", "other_probs")
    requires_fit = False
    binary_columns = True

    def __init__(self, *, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(self, *, logits: Any = None, probs: Any = None):
        """Needs nothing; given the reference ``logits`` or ``probs``, records their class count so ``estimate``
        checks the targets against it."""
        self._check_params()
        if logits is not None or probs is not None:
            _exactly_one("AgreementScore.fit", logits=logits, probs=probs)
        self.n_classes_ = n_classes_of(logits, probs)
        return self

    @staticmethod
    def _argmax(where: str, logits: Any, probs: Any, names: tuple[str, str]) -> np.ndarray:
        kind = _exactly_one(where, **{names[0]: logits, names[1]: probs})
        if kind == names[0]:
            return check_logits(logits, names[0]).argmax(axis=1)
        return check_probs(probs, names[1]).argmax(axis=1)

    def _prepare_target(self, *, logits=None, probs=None, other_logits=None, other_probs=None) -> Prepared:
        where = "AgreementScore.estimate"
        k1, k2 = n_classes_of(logits, probs), n_classes_of(other_logits, other_probs)
        self._check_target_classes(k1)
        if k1 is not None and k2 is not None and k1 != k2:
            raise InputValidationError(
                f"class-count mismatch: logits/probs has {k1} classes, other_logits/other_probs has {k2}"
            )
        a = self._argmax(where, logits, probs, ("logits", "probs"))
        b = self._argmax(where, other_logits, other_probs, ("other_logits", "other_probs"))
        if a.shape[0] != b.shape[0]:
            raise InputValidationError(
                f"{where}: expected the same number of rows for both models, got {a.shape[0]} and {b.shape[0]}"
            )
        return Prepared(n=a.shape[0], arrays={"agree": a == b})

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["agree"]

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["agree"].mean())
