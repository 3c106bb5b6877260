"""Upper and lower accuracy bounds from an ensemble of correctness discriminators (paper 1).

Paper 1 ("Predicting generalization performance with correctness discriminators") trains K binary
*discriminators* F: (input, predicted output) → {Correct, Incorrect} and runs them on the model's predictions on
an unlabelled test set.  Everything here is a pure function of the resulting vote matrix

    votes[i, k] = 1  if discriminator k labels the model's output on example i *Correct*, else 0,

of shape (n_examples, n_discriminators); training the discriminators is not this module's job.

Readings of the paper (Sec. 3.1–3.2, 4.2–4.3)
----------------------------------------------
* A single discriminator's predicted accuracy is ``Acc_pred = |D_c| / |D_t|`` (Eq. 1): the fraction of examples
  it labels Correct.
* **Upper bound** = Eq. 1 with ``|D_c|`` from *Ensemble_correct*, which "predicts *Correct* if at least one
  discriminator predicts *Correct*" (Sec. 3.2) — the row-wise OR (``any``) of the votes, "the most optimistic
  estimation".
* **Lower bound** = Eq. 1 with ``|D_c|`` from *Ensemble_incorrect*, which "predicts *Incorrect* if at least one
  discriminator predicts *Incorrect*; otherwise *Correct*" — the row-wise AND (``all``) of the votes.
  Since ``all(row) ⇒ any(row)``, upper ≥ lower holds by construction, and every single discriminator's Eq. 1
  accuracy lies between them.
* The caption of Table 1 says the opposite ("*Upper* refers to ... *ensemble_incorrect*; *Lower* to
  *ensemble_correct*").  We follow Sec. 3.2 and Fig. 3 ("*Ensemble_incorrect* ... Hence, the lower bound is
  1/2"), which Table 1's own numbers also support: its *Upper* columns have the highest Correct-Recall and its
  *Lower* columns the highest Incorrect-Recall, as the text of Sec. 4.4 says, which is only possible with
  Upper = OR and Lower = AND.  The caption is taken to be a typo.
* **Mean_discrim** = "the mean of estimated accuracies by all discriminators" (Sec. 4.3, Table 2 caption): the
  average over k of each discriminator's Eq. 1 accuracy (= the mean of all votes).
* **Mean_bounds** = "the mean of estimated upper and lower bounds" (Sec. 4.3): ``(upper + lower) / 2``.
* **Correct-Recall / Incorrect-Recall** (Sec. 4.3, Eq. 3): see :func:`helpers.metrics.correct_recall`.
* **Maxprob (Oracle)** (Sec. 4.2): a threshold γ on the model's confidence, "Correct" iff confidence > γ, with γ
  chosen *using gold labels* so that the thresholded Correct-Recall equals the discriminators' upper-bound
  Correct-Recall (→ an upper bound) or the Incorrect-Recall equals the lower-bound one (→ a lower bound).  It is
  not a generic baseline (it needs annotated test data), so it lives here: :func:`maxprob_oracle_bounds`.
  The plain MaxProb baseline with a fixed γ = 0.5 is generic confidence thresholding and is not repeated here.

Accuracies are fractions in [0, 1] (the paper prints percent).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.estimators.base import BaseEstimator, Estimate
from helpers.estimators.bracketing import bracketed_gold_range
from helpers.metrics import correct_recall, incorrect_recall
from helpers.validation import check_binary, check_vector

__all__ = [
    "ensemble_correct",
    "ensemble_incorrect",
    "discriminator_accuracies",
    "upper_bound",
    "lower_bound",
    "mean_discrim",
    "mean_bounds",
    "discriminator_bounds",
    "bounds_table",
    "maxprob_oracle_bounds",
    "bracketed_gold_range",
    "correct_recall",
    "incorrect_recall",
    "DiscriminatorBounds",
]

_POINTS = ("mean_bounds", "mean_discrim")


# -------------------------------------------------------------------------------------------------- validation


def _check_votes(votes) -> np.ndarray:
    """A (n_examples, n_discriminators) boolean matrix, True = Correct."""
    arr = check_binary(votes, "votes")
    if arr.ndim != 2:
        hint = "; for a single discriminator pass votes.reshape(-1, 1)" if arr.ndim == 1 else ""
        raise InputValidationError(
            f"votes: expected a 2-D array (n_examples, n_discriminators) of 0/1 votes, got shape {arr.shape}{hint}"
        )
    if arr.shape[1] < 1:
        raise InputValidationError(
            f"votes: expected at least 1 discriminator (column), got shape {arr.shape}"
        )
    return arr


def _check_gold(gold, n: int) -> np.ndarray:
    arr = check_binary(gold, "gold")
    if arr.ndim != 1:
        raise InputValidationError(
            f"gold: expected a 1-D array of 0/1 gold correctness, got shape {arr.shape}"
        )
    if arr.shape[0] != n:
        raise InputValidationError(f"gold: expected {n} values (one per row of votes), got {arr.shape[0]}")
    return arr


def _check_point(point: str) -> str:
    if point not in _POINTS:
        raise InputValidationError(f"point: expected one of {', '.join(_POINTS)}, got {point!r}")
    return point


# ---------------------------------------------------------------------------------------------- vote aggregation


def ensemble_correct(votes) -> np.ndarray:
    """*Ensemble_correct* voting (paper 1, Sec. 3.2): Correct iff **at least one** discriminator says Correct.

    Parameters
    ----------
    votes : array-like of 0/1 or bool, shape (n_examples, n_discriminators)
        1 = the discriminator labels the model's output Correct.

    Returns
    -------
    numpy.ndarray of bool, shape (n_examples,)
        Row-wise OR of the votes.
    """
    return _check_votes(votes).any(axis=1)


def ensemble_incorrect(votes) -> np.ndarray:
    """*Ensemble_incorrect* voting (paper 1, Sec. 3.2): Incorrect iff **at least one** discriminator says Incorrect.

    Returns the predicted *Correct* flags (row-wise AND of the votes), shape (n_examples,).
    """
    return _check_votes(votes).all(axis=1)


def discriminator_accuracies(votes) -> np.ndarray:
    """Each discriminator's predicted accuracy ``Acc_pred = |D_c| / |D_t|`` (paper 1, Eq. 1), shape (n_discriminators,)."""
    return _check_votes(votes).mean(axis=0)


def upper_bound(votes) -> float:
    """Upper bound on accuracy: Eq. 1 applied to :func:`ensemble_correct` (paper 1, Sec. 3.2), a fraction."""
    return float(ensemble_correct(votes).mean())


def lower_bound(votes) -> float:
    """Lower bound on accuracy: Eq. 1 applied to :func:`ensemble_incorrect` (paper 1, Sec. 3.2), a fraction."""
    return float(ensemble_incorrect(votes).mean())


def mean_discrim(votes) -> float:
    """*Mean_discrim* (paper 1, Sec. 4.3): ``(1/K) Σ_k Acc_pred(k)``, the mean of the discriminators' Eq. 1 accuracies."""
    return float(discriminator_accuracies(votes).mean())


def mean_bounds(votes) -> float:
    """*Mean_bounds* (paper 1, Sec. 4.3): ``(upper + lower) / 2``, a point estimate between the bounds."""
    v = _check_votes(votes)
    return _bounds(v)["mean_bounds"]


def _bounds(v: np.ndarray) -> dict[str, float]:
    upper = float(v.any(axis=1).mean())
    lower = float(v.all(axis=1).mean())
    return {
        "upper": upper,
        "lower": lower,
        "mean_bounds": 0.5 * (upper + lower),
        "mean_discrim": float(v.mean()),
    }


def discriminator_bounds(votes, *, point: Literal["mean_bounds", "mean_discrim"] = "mean_bounds") -> Estimate:
    """Function form of :class:`DiscriminatorBounds`: bounds and a point estimate from a vote matrix.

    Parameters
    ----------
    votes : array-like of 0/1 or bool, shape (n_examples, n_discriminators)
        1 = Correct.
    point : {"mean_bounds", "mean_discrim"}, default "mean_bounds"
        Which of paper 1's two point estimates becomes ``Estimate.accuracy``.

    Returns
    -------
    Estimate
        ``accuracy`` = the chosen point estimate, ``lower`` / ``upper`` = Ensemble_incorrect / Ensemble_correct
        accuracies, ``n`` = n_examples; ``details`` holds ``mean_bounds``, ``mean_discrim``, ``n_discriminators``,
        ``point`` and the per-discriminator accuracies (``discriminator_accuracies``, a list).
    """
    point = _check_point(point)
    v = _check_votes(votes)
    b = _bounds(v)
    return Estimate(
        method=f"discriminator_bounds_{point}",
        accuracy=b[point],
        lower=b["lower"],
        upper=b["upper"],
        score=None,
        n=int(v.shape[0]),
        details={
            "point": point,
            "mean_bounds": b["mean_bounds"],
            "mean_discrim": b["mean_discrim"],
            "n_discriminators": int(v.shape[1]),
            "discriminator_accuracies": v.mean(axis=0).tolist(),
        },
    )


def bounds_table(votes, gold=None) -> pd.DataFrame:
    """Every quantity of paper 1's Tables 1–4 for one test set, as a tidy frame (one row per estimate).

    Rows (column ``estimate``): ``upper`` (Ensemble_correct), ``lower`` (Ensemble_incorrect), ``mean_bounds``,
    ``mean_discrim``, ``single_0`` … ``single_{K-1}`` (each discriminator alone), and ``gold`` when ``gold`` is given.

    Columns
    -------
    estimate, kind : str
        ``kind`` is "bound", "point", "single" or "gold".
    accuracy : float
        Predicted accuracy (fraction).
    abs_error : float
        ``|gold − accuracy|`` (Eq. 2) for point estimates and single discriminators; NaN for the bounds (the paper
        prints "-") and when ``gold`` is None.
    within_bounds : bool or NaN
        On the ``gold`` row only: whether lower ≤ gold accuracy ≤ upper.
    correct_recall, incorrect_recall : float
        Eq. 3 for the vote vectors behind ``upper``, ``lower`` and each ``single_k`` (Table 1); NaN for the two
        means (no vote vector) and when ``gold`` is None, or when gold has no Correct (resp. no Incorrect) instance.
    n : int
        Number of examples.

    Parameters
    ----------
    votes : array-like of 0/1 or bool, shape (n_examples, n_discriminators)
        1 = Correct.
    gold : array-like of 0/1 or bool, shape (n_examples,), optional
        Gold correctness of the model's outputs (1 = exact match).
    """
    v = _check_votes(votes)
    n, k = v.shape
    g = None if gold is None else _check_gold(gold, n)
    b = _bounds(v)
    nan = float("nan")
    gold_acc = nan if g is None else float(g.mean())

    def _recalls(pred: np.ndarray) -> tuple[float, float]:
        if g is None:
            return nan, nan
        return (
            correct_recall(predicted_correct=pred, gold_correct=g),
            incorrect_recall(predicted_correct=pred, gold_correct=g),
        )

    rows = []
    for name, kind, acc, pred in (
        ("upper", "bound", b["upper"], v.any(axis=1)),
        ("lower", "bound", b["lower"], v.all(axis=1)),
        ("mean_bounds", "point", b["mean_bounds"], None),
        ("mean_discrim", "point", b["mean_discrim"], None),
        *((f"single_{j}", "single", float(v[:, j].mean()), v[:, j]) for j in range(k)),
    ):
        cr, ir = _recalls(pred) if pred is not None else (nan, nan)
        ae = abs(gold_acc - acc) if (g is not None and kind != "bound") else nan
        rows.append(
            {
                "estimate": name,
                "kind": kind,
                "accuracy": acc,
                "abs_error": ae,
                "within_bounds": nan,
                "correct_recall": cr,
                "incorrect_recall": ir,
                "n": n,
            }
        )
    if g is not None:
        rows.append(
            {
                "estimate": "gold",
                "kind": "gold",
                "accuracy": gold_acc,
                "abs_error": 0.0,
                "within_bounds": bool(b["lower"] <= gold_acc <= b["upper"]),
                "correct_recall": nan,
                "incorrect_recall": nan,
                "n": n,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------- Maxprob (Oracle)


def _check_target(value, name: str) -> float | None:
    if value is None:
        return None
    x = float(value)
    if not (0.0 <= x <= 1.0):
        raise InputValidationError(
            f"{name}: expected a recall in [0, 1] (a fraction, not percent), got {value!r}"
        )
    return x


def maxprob_oracle_bounds(
    confidence,
    gold,
    *,
    votes=None,
    correct_recall_target: float | None = None,
    incorrect_recall_target: float | None = None,
) -> Estimate:
    """*Maxprob (Oracle)* bounds (paper 1, Sec. 4.2) — a **gold-label** baseline, not a label-free estimator.

    The model's outputs are labelled Correct iff ``confidence > γ`` (MaxProb, Sec. 4.2).  Paper 1: "estimate γ such
    that the *Correct-Recall* calculated based on γ is equal to the one from the predicted upper bound calculated by
    our discriminators ... Similarly, we calculate a lower bound by matching *Incorrect-Recall* scores".  So

        γ_up  = argmin_γ |CR(γ) − CR_target|,   upper = mean(confidence > γ_up)
        γ_low = argmin_γ |IR(γ) − IR_target|,   lower = mean(confidence > γ_low)

    with CR(γ) = #(gold Correct, conf > γ) / #gold Correct and IR(γ) = #(gold Incorrect, conf ≤ γ) / #gold
    Incorrect (Eq. 3).  γ ranges over −∞ and every distinct confidence value (the only places CR/IR change).
    Exact equality is rarely reachable on finite data, so the closest recall is taken; among equally close γ the
    upper bound takes the smallest γ (largest accuracy) and the lower bound the largest γ (smallest accuracy), i.e.
    ties widen the interval.  Unlike the discriminator bounds, ``upper >= lower`` is *not* guaranteed (it holds
    when the targets are high, as in the paper).

    Parameters
    ----------
    confidence : array-like of shape (n_examples,)
        The model's confidence in its output (for seq2seq, the probability of the top beam), higher = more confident.
    gold : array-like of 0/1 or bool, shape (n_examples,)
        Gold correctness of the outputs; needs at least one Correct and one Incorrect instance.
    votes : array-like of 0/1, shape (n_examples, n_discriminators), optional
        Discriminator votes; when given, the targets are the Correct-Recall of Ensemble_correct and the
        Incorrect-Recall of Ensemble_incorrect against ``gold`` (the paper's protocol).
    correct_recall_target, incorrect_recall_target : float, optional
        Explicit targets (fractions) instead of ``votes``; give both targets or ``votes``, not both.

    Returns
    -------
    Estimate
        ``method="maxprob_oracle"``, ``accuracy`` = (upper + lower) / 2 (the "Mean" row of Tables 2–4), ``lower``,
        ``upper``; ``details``: the two thresholds, the targets and the recalls actually achieved.
    """
    conf = check_vector(confidence, "confidence").astype(np.float64)
    g = _check_gold(gold, conf.shape[0])
    cr_t = _check_target(correct_recall_target, "correct_recall_target")
    ir_t = _check_target(incorrect_recall_target, "incorrect_recall_target")
    if votes is not None:
        if cr_t is not None or ir_t is not None:
            raise InputValidationError(
                "votes / correct_recall_target / incorrect_recall_target: give either votes or both targets, not both"
            )
        v = _check_votes(votes)
        if v.shape[0] != conf.shape[0]:
            raise InputValidationError(
                f"votes: expected {conf.shape[0]} rows (one per confidence), got {v.shape[0]}"
            )
    elif cr_t is None or ir_t is None:
        raise InputValidationError(
            "correct_recall_target / incorrect_recall_target: both are required when votes is not given"
        )
    n_correct = int(g.sum())
    n_incorrect = int(g.size - n_correct)
    if n_correct == 0 or n_incorrect == 0:
        raise InputValidationError(
            f"gold: expected at least one Correct and one Incorrect instance (Correct-/Incorrect-Recall are "
            f"undefined otherwise), got {n_correct} Correct and {n_incorrect} Incorrect"
        )
    if votes is not None:
        cr_t = correct_recall(predicted_correct=v.any(axis=1), gold_correct=g)
        ir_t = incorrect_recall(predicted_correct=v.all(axis=1), gold_correct=g)

    gammas = np.concatenate(([-np.inf], np.unique(conf)))  # ascending
    n_above_all = conf.size - np.searchsorted(np.sort(conf), gammas, side="right")
    c_sorted = np.sort(conf[g])
    i_sorted = np.sort(conf[~g])
    cr = (c_sorted.size - np.searchsorted(c_sorted, gammas, side="right")) / n_correct
    ir = np.searchsorted(i_sorted, gammas, side="right") / n_incorrect
    acc = n_above_all / conf.size

    gap_up = np.abs(cr - cr_t)
    j_up = int(np.flatnonzero(gap_up == gap_up.min())[0])  # smallest γ among the closest
    gap_low = np.abs(ir - ir_t)
    j_low = int(np.flatnonzero(gap_low == gap_low.min())[-1])  # largest γ among the closest
    upper, lower = float(acc[j_up]), float(acc[j_low])
    return Estimate(
        method="maxprob_oracle",
        accuracy=0.5 * (upper + lower),
        lower=lower,
        upper=upper,
        score=None,
        n=int(conf.size),
        details={
            "threshold_upper": float(gammas[j_up]),
            "threshold_lower": float(gammas[j_low]),
            "correct_recall_target": float(cr_t),
            "incorrect_recall_target": float(ir_t),
            "correct_recall_achieved": float(cr[j_up]),
            "incorrect_recall_achieved": float(ir[j_low]),
            "uses_gold_labels": True,
        },
    )


# ------------------------------------------------------------------------------------------------ estimator class


class DiscriminatorBounds(BaseEstimator):
    """Discriminator-ensemble accuracy bounds behind the estimator contract (paper 1, Sec. 3.2 and 4.3).

    Stateless: the discriminators are trained elsewhere, and this class only aggregates their votes on the target
    set.  ``fit`` exists for the common contract and does nothing.

    Parameters
    ----------
    point : {"mean_bounds", "mean_discrim"}, default "mean_bounds"
        Which point estimate becomes ``Estimate.accuracy``: *Mean_bounds* = (upper + lower) / 2 or *Mean_discrim* =
        mean of the single discriminators' accuracies (Sec. 4.3).

    Examples
    --------
    >>> votes = [[1, 1, 1], [1, 0, 1], [0, 0, 0], [1, 1, 0]]
    >>> est = DiscriminatorBounds().estimate(votes=votes)
    >>> est.lower, est.upper, est.accuracy
    (0.25, 0.75, 0.5)
    """

    name = "discriminator_bounds"

    def __init__(self, *, point: Literal["mean_bounds", "mean_discrim"] = "mean_bounds"):
        self.point = point

    def fit(self, **_ignored) -> DiscriminatorBounds:
        """No-op (nothing to learn from reference data); validates ``point`` and returns ``self``."""
        _check_point(self.point)
        self.is_fitted_ = True
        return self

    def estimate(self, *, votes) -> Estimate:
        """Bounds and point estimate from the (n_examples, n_discriminators) 0/1 vote matrix; see :func:`discriminator_bounds`."""
        return discriminator_bounds(votes, point=self.point)

    def to_frame(self, *, votes, gold=None) -> pd.DataFrame:
        """All quantities (bounds, both point estimates, each discriminator; recalls and errors with ``gold``): :func:`bounds_table`."""
        _check_point(self.point)
        return bounds_table(votes, gold)
