"""Confidence-based accuracy estimators: Average Confidence, average negative entropy, DoC, MaxProb threshold.

All take model outputs as ``logits=`` or ``probs=`` (exactly one), and the accuracy-type ones also
``confidence=`` (one score per example, e.g. a sequence probability); see :mod:`helpers.estimators._common`.

* Average Confidence ("AC", "Avg Conf", "ConfScore"): mean maximum softmax probability on the target
  (Hendrycks & Gimpel 2017; paper 3 Sec. 5 baseline; paper 1 Sec. 4.2; paper 5 App. B Eq. 10).
* Average negative entropy ("Entropy"): mean of ``sum_k p_k log p_k`` (nats, in [-log K, 0]); a *score* that
  paper 5 (App. B Eq. 11) regresses against accuracy: ``fit(shifted=...)`` fits that line (or set ``regressor``).
* DoC, Difference of Confidences (Guillory et al. 2021; paper 1 Sec. 4.2): reference accuracy minus the drop
  in average confidence, ``acc_ref + mean(conf_target) - mean(conf_ref)``.
* MaxProb threshold (Kamath et al. 2020; paper 1 Sec. 4.2): the fraction of target examples predicted correct,
  i.e. with confidence ``>= gamma`` (paper 1 fixes ``gamma = 0.5``; it writes "higher than", we count ties
  at ``gamma`` as correct, which only matters for exactly representable ties).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import (
    ENTROPY_EPS,
    check_positive,
    max_prob,
    n_classes_of,
    negative_entropy_rows,
    resolve_confidence,
    resolve_probs,
    resolve_reference,
)
from helpers.estimators.base import Estimate
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_binary, check_labels, check_probs, check_vector

__all__ = [
    "average_confidence",
    "average_negative_entropy",
    "doc_accuracy",
    "maxprob_accuracy",
    "AverageConfidence",
    "AverageNegativeEntropy",
    "DoC",
    "MaxProbThreshold",
]


def _conf_vector(x: Any, name: str) -> np.ndarray:
    """(n, K) probabilities -> max prob; (n,) confidences -> as is."""
    if np.ndim(x) == 1:
        c = check_vector(x, name).astype(np.float64, copy=False)
        if c.min() < 0.0 or c.max() > 1.0:
            raise InputValidationError(
                f"{name}: expected confidences (probabilities) in [0, 1], got values in [{c.min():.4g}, "
                f"{c.max():.4g}]; pass softmax probabilities, not logits"
            )
        return c
    return max_prob(check_probs(x, name))


# ----------------------------------------------------------------------------------------------- functions
def average_confidence(probs: Any) -> float:
    """Average Confidence: ``mean_i max_k p_ik`` (a fraction in [1/K, 1]).

    Parameters
    ----------
    probs : array (n, K) of probabilities, or (n,) per-example confidences
        Use :func:`helpers.estimators.softmax` first if you hold logits.
    """
    return float(_conf_vector(probs, "probs").mean())


def average_negative_entropy(probs: Any, *, eps: float = ENTROPY_EPS) -> float:
    """Mean negative entropy ``mean_i sum_k p_ik log(p_ik + eps)`` in nats (in [-log K, 0]; 0 = one-hot)."""
    p = check_probs(probs, "probs")
    return float(negative_entropy_rows(p, eps=eps).mean())


def doc_accuracy(*, reference_probs: Any, reference_labels: Any, target_probs: Any) -> float:
    """DoC (Guillory et al. 2021): ``acc_ref + mean(conf_target) - mean(conf_ref)``, unclipped.

    ``reference_probs``/``target_probs`` are (n, K) probabilities (or (n,) confidences, in which case
    ``reference_labels`` must be the 0/1 correctness of the reference predictions).
    """
    ref_conf = _conf_vector(reference_probs, "reference_probs")
    tgt_conf = _conf_vector(target_probs, "target_probs")
    if np.ndim(reference_probs) == 2:
        if np.ndim(target_probs) == 2 and np.shape(reference_probs)[1] != np.shape(target_probs)[1]:
            raise InputValidationError(
                f"class-count mismatch: reference_probs has {np.shape(reference_probs)[1]} classes, "
                f"target_probs has {np.shape(target_probs)[1]}"
            )
        y = check_labels(
            reference_labels, "reference_labels", n_classes=np.shape(reference_probs)[1], n=len(ref_conf)
        )
        correct = np.asarray(reference_probs).argmax(axis=1) == y
    else:
        correct = check_binary(reference_labels, "reference_labels", n=len(ref_conf))
    return float(correct.mean() + tgt_conf.mean() - ref_conf.mean())


def maxprob_accuracy(probs: Any, *, gamma: float = 0.5) -> float:
    """MaxProb threshold: fraction of examples whose confidence is ``>= gamma`` (default 0.5, paper 1)."""
    return float((_conf_vector(probs, "probs") >= gamma).mean())


# ----------------------------------------------------------------------------------------------- classes
class _ConfidenceEstimator(LabelFreeEstimator):
    """Shared ``fit``/``estimate`` plumbing for estimators of a per-example max-prob confidence."""

    requires_fit = False
    target_inputs = ("logits", "probs", "confidence")
    accepts_confidence = True

    def __init__(self, *, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(
        self,
        *,
        logits: Any = None,
        probs: Any = None,
        confidence: Any = None,
        labels: Any = None,
        correct: Any = None,
    ):
        """Optional for this estimator: records the class count so ``estimate`` can check the target against it
        (``labels`` / ``correct`` are not used, but checked when given: a wrong array is refused, not ignored)."""
        self._check_params()
        conf, p = resolve_confidence(
            logits=logits,
            probs=probs,
            confidence=confidence,
            where=f"{type(self).__name__}.fit",
            eps=ENTROPY_EPS,
        )
        self.n_classes_ = n_classes_of(logits, probs)
        if labels is not None and self.n_classes_ is not None:
            check_labels(labels, "labels", n_classes=self.n_classes_, n=conf.shape[0])
        if correct is not None:
            check_binary(correct, "correct", n=conf.shape[0])
        return self

    def _prepare_target(self, *, logits=None, probs=None, confidence=None) -> Prepared:
        if confidence is not None and not self.accepts_confidence:
            raise InputValidationError(
                f"{type(self).__name__}.estimate: confidence= is not accepted; pass logits= or probs="
            )
        self._check_target_classes(n_classes_of(logits, probs))
        conf, _ = resolve_confidence(
            logits=logits,
            probs=probs,
            confidence=confidence,
            where=f"{type(self).__name__}.estimate",
            eps=ENTROPY_EPS,
        )
        return Prepared(n=conf.shape[0], arrays={"conf": conf})

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["conf"]


class AverageConfidence(_ConfidenceEstimator):
    """Average Confidence (AC / Avg Conf / ConfScore): predicted accuracy = mean max softmax probability.

    ``accuracy = (1/n) sum_i max_k p_ik`` on the target (paper 3 Sec. 5, paper 1 Sec. 4.2, paper 5 Eq. 10).
    Needs no reference; ``fit`` is optional (it only records the class count for a consistency check).

    Parameters
    ----------
    n_boot, level, random_state
        Bootstrap settings used when ``estimate(..., interval=True)`` (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(AverageConfidence().estimate(logits=target).accuracy, 4)
    0.489
    """

    name = "average_confidence"

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["conf"].mean())


class AverageNegativeEntropy(_ConfidenceEstimator):
    """Average negative entropy, a score: ``(1/n) sum_i sum_k p_ik log(p_ik + eps)`` in nats, in [-log K, 0].

    Paper 5 (App. B, Eq. 11) regresses accuracy on it: ``fit(shifted={name: (logits, labels), ...})`` fits that
    line on labelled shifted sets, or ``regressor`` maps the score to an accuracy fraction (a fitted sklearn
    regressor with ``.predict`` or any callable); without either ``estimate`` raises and ``measure`` gives the score.

    Parameters
    ----------
    eps : float, default 1e-20
        Added inside the log so that zero probabilities contribute 0.
    regressor : object with ``predict`` or callable, optional
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = AverageNegativeEntropy().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.6998, -1.0278)
    """

    name = "average_negative_entropy"
    output = "score"
    accepts_confidence = False

    def __init__(
        self,
        *,
        eps: float = ENTROPY_EPS,
        regressor: Any = None,
        n_boot: int = 200,
        level: float = 0.95,
        random_state: int | None = 0,
    ):
        self.eps = eps
        self.regressor = regressor
        super().__init__(n_boot=n_boot, level=level, random_state=random_state)

    def _check_params(self) -> None:
        super()._check_params()
        check_positive(self.eps, "eps")

    def fit(self, *, logits: Any = None, probs: Any = None, shifted: Any = None):
        """Records the reference class count and, with ``shifted={name: (logits, labels), ...}``, fits the line
        score -> accuracy of paper 5's Algorithm 1 (``logits`` may then be omitted)."""
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_probs)
        return self

    def _prepare_target(self, *, logits=None, probs=None, confidence=None) -> Prepared:
        if confidence is not None:
            raise InputValidationError(
                "AverageNegativeEntropy.estimate: confidence= is not accepted; pass logits= or probs="
            )
        self._check_target_classes(n_classes_of(logits, probs))
        p = resolve_probs(logits=logits, probs=probs, where="AverageNegativeEntropy.estimate")
        return Prepared(
            n=p.shape[0], arrays={"ne": negative_entropy_rows(p, eps=self.eps)}, details={"eps": self.eps}
        )

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["ne"]

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["ne"].mean())


class DoC(_ConfidenceEstimator):
    """Difference of Confidences (Guillory et al. 2021): ``acc_ref + mean(conf_target) - mean(conf_ref)``.

    ``fit`` on a labelled reference (same distribution as training): stores ``reference_accuracy_`` and
    ``reference_confidence_`` (mean max-prob).  The estimate is clipped to [0, 1] (unclipped value in
    ``details["raw"]`` when it differs).  When target = reference it returns the reference accuracy exactly.

    Parameters
    ----------
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0); the reference statistics are held fixed.

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(DoC().fit(logits=z, labels=y).estimate(logits=target).accuracy, 4)
    0.6531
    """

    name = "doc"
    requires_fit = True

    def fit(
        self,
        *,
        logits: Any = None,
        probs: Any = None,
        confidence: Any = None,
        labels: Any = None,
        correct: Any = None,
    ):
        """Fit on the labelled reference: ``labels=`` with logits/probs, or ``correct=`` (0/1) with confidence."""
        self._check_params()
        conf, ok = resolve_reference(
            logits=logits, probs=probs, confidence=confidence, labels=labels, correct=correct, where="DoC.fit"
        )
        self.reference_accuracy_ = float(ok.mean())
        self.reference_confidence_ = float(conf.mean())
        self.n_classes_ = n_classes_of(logits, probs)
        return self

    def _point(self, prep: Prepared) -> float:
        return self.reference_accuracy_ + float(prep.arrays["conf"].mean()) - self.reference_confidence_

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        return self.reference_accuracy_ + means[:, 0] - self.reference_confidence_

    def _finish(self, prep: Prepared, *, interval: bool) -> Estimate:
        prep.details.update(
            reference_accuracy=self.reference_accuracy_, reference_confidence=self.reference_confidence_
        )
        return super()._finish(prep, interval=interval)


class MaxProbThreshold(_ConfidenceEstimator):
    """MaxProb threshold (Kamath et al. 2020; paper 1 Sec. 4.2): fraction of target with confidence ``>= gamma``.

    Parameters
    ----------
    gamma : float, default 0.5
        Fixed confidence threshold (paper 1 uses 0.5 since nothing is known about the target).
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0); the interval is exact-binomial.

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(MaxProbThreshold().estimate(logits=target).accuracy, 4)
    0.5
    """

    name = "maxprob"
    binary_columns = True

    def __init__(
        self, *, gamma: float = 0.5, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0
    ):
        self.gamma = gamma
        super().__init__(n_boot=n_boot, level=level, random_state=random_state)

    def _check_params(self) -> None:
        super()._check_params()
        if not 0.0 <= float(self.gamma) <= 1.0:
            raise InputValidationError(
                f"gamma: expected a confidence threshold in [0, 1], got {self.gamma!r}"
            )

    def _prepare_target(self, **target: Any) -> Prepared:
        prep = super()._prepare_target(**target)
        prep.arrays["hit"] = prep.arrays["conf"] >= self.gamma
        prep.details["gamma"] = self.gamma
        return prep

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["hit"]

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["hit"].mean())
