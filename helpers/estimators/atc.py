"""Average Thresholded Confidence (ATC; Garg et al., ICLR 2022) with max-confidence or negative-entropy scores.

ATC learns a threshold ``t`` on a labelled reference (source validation) set so that the number of reference
examples scoring *below* ``t`` matches the number of reference errors, then predicts the target accuracy as
the fraction of target examples scoring ``>= t``:

    ATC = (1/n) sum_i 1[s(x_i) >= t]                                    (paper 5, App. B, Eq. 14-15)

Scores (higher = more confident):

* ``"mc"``: maximum softmax probability ``max_k p_k``;
* ``"ne"``: negative entropy ``sum_k p_k log(p_k + eps)`` with ``eps = 1e-20`` (Garg et al.'s code adds an
  epsilon inside the log so that zero probabilities contribute 0).

Threshold rules (both choose ``t`` from the reference scores; the chosen rule is recorded in
``Estimate.details["rule"]``):

* ``"sweep"`` (**default**; the rule of the authors' released code, used by paper 5's baseline): scan the
  sorted reference scores and take the threshold where ``|#incorrect with s >= t - #correct with s < t|`` --
  false positives vs false negatives of the rule "correct iff s >= t" -- is smallest.  Since that difference
  equals ``#errors - #(s < t)``, the rule puts as many examples below ``t`` as there are errors; with tied
  scores it is evaluated at the distinct score values only (ties are never split), the first minimum wins.
* ``"quantile"``: ``t = quantile(reference scores, 1 - reference accuracy)`` (numpy's default linear
  interpolation).  Equal to the sweep up to one order statistic when there are no ties; it is the form in
  which Garg et al. state the rule in their paper.

Paper 1 (Sec. 4.2) describes ATC with "a score below gamma" for the prediction; that is a slip -- the
estimate is the fraction *above* the threshold, as in Garg et al. and paper 5.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import (
    ENTROPY_EPS,
    check_choice,
    check_positive,
    max_prob,
    n_classes_of,
    negative_entropy_rows,
    resolve_confidence,
    resolve_reference,
)
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_binary, check_probs, check_vector

__all__ = ["ATC_RULES", "atc_scores", "atc_threshold", "atc_accuracy", "ATC"]

ATC_RULES = ("sweep", "quantile")
ATC_SCORES = ("mc", "ne")


def atc_scores(probs: Any, *, score: str = "mc", eps: float = ENTROPY_EPS) -> np.ndarray:
    """Per-example ATC score of an (n, K) probability matrix: ``"mc"`` max prob, ``"ne"`` negative entropy."""
    check_choice(score, "score", ATC_SCORES)
    p = check_probs(probs, "probs")
    return max_prob(p) if score == "mc" else negative_entropy_rows(p, eps=eps)


def _sweep_threshold(scores: np.ndarray, correct: np.ndarray) -> float:
    """Distinct score value t minimising |#incorrect with s >= t - #correct with s < t| (first minimum).

    Candidates are every distinct reference score and +inf (all predicted wrong); n_below(t) = #(s < t).
    """
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    c = correct[order].astype(np.int64)
    n = s.shape[0]
    # start index of each run of equal scores: n_below for the candidate t = s[start]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    cum_correct = np.r_[0, np.cumsum(c)]  # correct among the first i sorted examples
    cum_wrong = np.arange(n + 1) - cum_correct
    below = np.r_[starts, n]
    fn = cum_correct[below]  # correct but below t
    fp = cum_wrong[n] - cum_wrong[below]  # incorrect but at/above t
    j = int(np.argmin(np.abs(fp - fn)))
    return float(s[starts[j]]) if j < starts.shape[0] else float("inf")


def atc_threshold(scores: Any, correct: Any, *, rule: str = "sweep") -> float:
    """Fit the ATC threshold on reference scores and 0/1 correctness.

    Parameters
    ----------
    scores : array (n,)
        Reference scores, higher = more confident (max prob, negative entropy, or any confidence).
    correct : array (n,) of 0/1 or bool
        Whether each reference prediction is correct.
    rule : {"sweep", "quantile"}, default "sweep"
        ``"sweep"``: the distinct score minimising ``|#incorrect >= t - #correct < t|`` (Garg et al.'s code);
        ``"quantile"``: the ``(1 - accuracy)``-quantile of the scores.  See the module docstring.

    Returns
    -------
    float
        The threshold ``t``; predicted correct iff ``score >= t`` (``inf`` if every example should be wrong).
    """
    check_choice(rule, "rule", ATC_RULES)
    s = check_vector(scores, "scores").astype(np.float64, copy=False)
    ok = check_binary(correct, "correct", n=s.shape[0])
    return _threshold(s, ok, rule)


def _threshold(s: np.ndarray, ok: np.ndarray, rule: str) -> float:
    if rule == "sweep":
        return _sweep_threshold(s, ok)
    acc = float(ok.mean())
    if acc == 0.0:
        return float("inf")
    return float(np.quantile(s, 1.0 - acc))


def atc_accuracy(target_scores: Any, threshold: float) -> float:
    """ATC estimate: the fraction of target scores ``>= threshold``."""
    s = check_vector(target_scores, "target_scores")
    t = float(threshold)
    if np.isnan(t):
        raise InputValidationError("threshold: expected a number (or inf for 'no example passes'), got nan")
    return float((s >= t).mean())


class ATC(LabelFreeEstimator):
    """Average Thresholded Confidence (Garg et al. 2022), scores ``"mc"`` (max prob) or ``"ne"`` (neg. entropy).

    ``fit`` learns ``threshold_`` on the labelled reference so that #reference below it = #reference errors;
    ``estimate`` returns the fraction of target examples scoring ``>= threshold_``.

    Parameters
    ----------
    score : {"mc", "ne"}, default "mc"
        Per-example score; ignored when ``confidence=`` is passed (then the given scores are used as is).
    rule : {"sweep", "quantile"}, default "sweep"
        Threshold rule (module docstring); ``"sweep"`` is the authors' released rule.
    eps : float, default 1e-20
        Epsilon inside ``log(p + eps)`` for the negative-entropy score.
    n_boot, level, random_state
        Bootstrap settings for ``interval=True`` (defaults 200, 0.95, seed 0); exact binomial replicates of the
        target fraction with the threshold held fixed.

    Attributes
    ----------
    threshold_ : float
    reference_accuracy_ : float
    n_classes_ : int or None (None when fitted on ``confidence=``)

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(ATC().fit(logits=z, labels=y).estimate(logits=target).accuracy, 4)
    0.5
    """

    binary_columns = True
    target_inputs = ("logits", "probs", "confidence")

    def __init__(
        self,
        *,
        score: str = "mc",
        rule: str = "sweep",
        eps: float = ENTROPY_EPS,
        n_boot: int = 200,
        level: float = 0.95,
        random_state: int | None = 0,
    ):
        self.score = score
        self.rule = rule
        self.eps = eps
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"atc_{self.score}"

    def _check_params(self) -> None:
        super()._check_params()
        check_choice(self.score, "score", ATC_SCORES)
        check_choice(self.rule, "rule", ATC_RULES)
        check_positive(self.eps, "eps")

    def fit(
        self,
        *,
        logits: Any = None,
        probs: Any = None,
        confidence: Any = None,
        labels: Any = None,
        correct: Any = None,
    ) -> ATC:
        """Fit the threshold on the labelled reference (``labels=`` with logits/probs, ``correct=`` with confidence)."""
        self._check_params()
        s, ok = resolve_reference(
            logits=logits,
            probs=probs,
            confidence=confidence,
            labels=labels,
            correct=correct,
            where="ATC.fit",
            score=self.score,
            eps=self.eps,
        )
        self.threshold_ = _threshold(s, ok, self.rule)
        self.reference_accuracy_ = float(ok.mean())
        self.n_classes_ = n_classes_of(logits, probs)
        self.fitted_on_confidence_ = confidence is not None
        return self

    def _prepare_target(self, *, logits=None, probs=None, confidence=None) -> Prepared:
        self._check_target_classes(n_classes_of(logits, probs))
        if self.fitted_on_confidence_ != (confidence is not None):
            raise InputValidationError(
                "ATC.estimate: fit and estimate must use the same kind of input "
                f"({'confidence=' if self.fitted_on_confidence_ else 'logits=/probs='} was used in fit)"
            )
        s, _ = resolve_confidence(
            logits=logits,
            probs=probs,
            confidence=confidence,
            where="ATC.estimate",
            score=self.score,
            eps=self.eps,
        )
        return Prepared(
            n=s.shape[0],
            arrays={"hit": s >= self.threshold_},
            details={
                "threshold": self.threshold_,
                "rule": self.rule,
                "score": "confidence" if confidence is not None else self.score,
                "reference_accuracy": self.reference_accuracy_,
            },
        )

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["hit"]

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["hit"].mean())
