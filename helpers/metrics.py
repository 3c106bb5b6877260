"""Evaluation metrics for label-free accuracy estimation (validation kept apart from computation).

Every public function validates its inputs first (raising :class:`helpers.errors.InputValidationError` with the
argument's name) and then calls a private, vectorised ``_compute`` routine.  Accuracies are fractions in [0, 1].

Groups
------
Point estimates over sets
    :func:`absolute_error`, :func:`mean_absolute_error` (paper 1 Eq. 2 "AE", paper 5 "MAE", paper 3 "absolute
    estimation error").
Error detection (paper 3, Appendix C: "a test point detected to be mis-classified is regarded as in the positive
class")
    :func:`error_detection_scores` (precision, recall, F1 with positive = misclassified).
Correctness discriminators (paper 1, Sec. 4.3, Eq. 3)
    :func:`correct_recall`, :func:`incorrect_recall`.
Intervals / bounds
    :func:`interval_coverage`, :func:`mean_interval_width`.
Association between a score (or a prediction) and accuracy over sets (paper 5, Sec. 4.1)
    :func:`r2_score` (coefficient of determination of predictions vs truth), :func:`squared_pearson`,
    :func:`pearson_r`, :func:`spearman_rho`, :func:`kendall_tau` (tau-b), :func:`rankdata_average`.

Two different quantities are called "R²" in the literature:

* ``r2_score(true=..., predicted=...)`` = 1 − Σ(y − ŷ)² / Σ(y − ȳ)².  It judges *predictions* and can be negative
  on held-out sets (a regression worse than predicting the mean).
* ``squared_pearson(x, y)`` = r(x, y)².  It judges a *linear association* and is always in [0, 1].

For an ordinary least-squares line evaluated on the very sets it was fitted on (what paper 5's scripts report),
the two coincide; elsewhere they differ.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.errors import InputValidationError
from helpers.validation import check_binary, check_same_length, check_vector

__all__ = [
    "absolute_error",
    "mean_absolute_error",
    "error_detection_scores",
    "correct_recall",
    "incorrect_recall",
    "interval_coverage",
    "mean_interval_width",
    "r2_score",
    "squared_pearson",
    "pearson_r",
    "spearman_rho",
    "kendall_tau",
    "rankdata_average",
    "roc_auc",
]


# --------------------------------------------------------------------------------------------- validation helpers


def _paired_vectors(x, y, names: tuple[str, str], *, min_len: int = 1) -> tuple[np.ndarray, np.ndarray]:
    a = check_vector(x, names[0], min_len=min_len)
    b = check_vector(y, names[1], min_len=min_len)
    check_same_length(**{names[0]: a, names[1]: b})
    return a.astype(np.float64), b.astype(np.float64)


def _check_not_constant(a: np.ndarray, name: str, what: str) -> None:
    if np.ptp(a) == 0:
        raise InputValidationError(
            f"{name}: all {a.size} values are equal ({a[0]:.6g}); {what} is undefined for a constant input"
        )


def _paired_flags(x, y, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    a = check_binary(x, names[0])
    b = check_binary(y, names[1])
    for arr, name in ((a, names[0]), (b, names[1])):
        if arr.ndim != 1:
            raise InputValidationError(f"{name}: expected a 1-D array of 0/1 flags, got shape {arr.shape}")
    check_same_length(**{names[0]: a, names[1]: b})
    return a, b


def _safe_ratio(num: int, den: int, zero_division: float) -> float:
    return float(num) / float(den) if den > 0 else float(zero_division)


def _check_zero_division(zero_division: float) -> float:
    z = float(zero_division)
    if not (math.isnan(z) or 0.0 <= z <= 1.0):
        raise InputValidationError(f"zero_division: expected a value in [0, 1] or nan, got {zero_division!r}")
    return z


# ------------------------------------------------------------------------------------------------ point estimates


def absolute_error(predicted, true) -> np.ndarray:
    """Absolute estimation error per set, ``|Acc_gold − Acc_pred|`` (paper 1, Sec. 4.3, Eq. 2).

    Parameters
    ----------
    predicted, true : array-like of shape (n_sets,)
        Predicted and true accuracies (fractions in [0, 1]; any common unit works).

    Returns
    -------
    numpy.ndarray of shape (n_sets,)
        Absolute errors, in the unit of the inputs (fractions here; multiply by 100 for percent points).
    """
    p, t = _paired_vectors(np.atleast_1d(predicted), np.atleast_1d(true), ("predicted", "true"))
    return np.abs(p - t)


def mean_absolute_error(predicted, true) -> float:
    """Mean absolute error over sets, ``MAE = (1/m) Σ_i |acc_i − âcc_i|`` (paper 5, Algorithm 1 line 7 and Sec. 4.1).

    The papers report it in percent points; this function returns it in the unit of its inputs (fractions).
    """
    return float(absolute_error(predicted, true).mean())


# ------------------------------------------------------------------------------------------------ error detection


def error_detection_scores(*, predicted_error, true_error, zero_division: float = 0.0) -> dict[str, float]:
    """Precision, recall and F1 of error detection with **positive = misclassified** (paper 3, Appendix C).

    With TP = flagged and truly misclassified, FP = flagged but correct, FN = misclassified but not flagged::

        precision = TP / (TP + FP)      recall = TP / (TP + FN)      F1 = 2·TP / (2·TP + FP + FN)

    F1 is written in its count form, which equals the harmonic mean of precision and recall whenever both are
    defined (it is what scikit-learn computes).

    Parameters
    ----------
    predicted_error : array-like of 0/1 or bool, shape (n,)
        1 where the detector flags the model's prediction as an error (the set R_X of paper 3).
    true_error : array-like of 0/1 or bool, shape (n,)
        1 where the model's prediction is actually wrong (the set W_X of paper 3).
    zero_division : float, default 0.0
        Value returned for a ratio whose denominator is zero: precision when nothing is flagged, recall when
        there is no true error, F1 when there is neither a flag nor an error (TP + FP + FN = 0).  Must be in
        [0, 1] or ``nan``.  The default 0.0 matches scikit-learn's ``zero_division=0``; pass ``1.0`` to score
        "nothing to find and nothing flagged" as perfect, or ``nan`` to keep undefined cases visible.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` (floats) and the counts ``tp``, ``fp``, ``fn``, ``tn``, ``n``.
    """
    z = _check_zero_division(zero_division)
    pred, true = _paired_flags(predicted_error, true_error, ("predicted_error", "true_error"))
    tp = int(np.count_nonzero(pred & true))
    fp = int(np.count_nonzero(pred & ~true))
    fn = int(np.count_nonzero(~pred & true))
    tn = int(pred.size - tp - fp - fn)
    return {
        "precision": _safe_ratio(tp, tp + fp, z),
        "recall": _safe_ratio(tp, tp + fn, z),
        "f1": _safe_ratio(2 * tp, 2 * tp + fp + fn, z),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "n": int(pred.size),
    }


# -------------------------------------------------------------------------------- correctness-discriminator recall


def correct_recall(*, predicted_correct, gold_correct, zero_division: float = float("nan")) -> float:
    """Correct-Recall ``CR = Count(TC) / (Count(TC) + Count(FI))`` (paper 1, Sec. 4.3, Eq. 3).

    TC ("True Correct") = gold Correct and predicted Correct; FI ("False Incorrect") = gold Correct but predicted
    Incorrect.  CR is therefore the fraction of the gold-correct outputs that the (ensemble of) discriminator(s)
    labels Correct.

    Parameters
    ----------
    predicted_correct : array-like of 0/1 or bool, shape (n,)
        Discriminator (or voting-ensemble) output, 1 = Correct.
    gold_correct : array-like of 0/1 or bool, shape (n,)
        Gold correctness of the model's outputs (exact match), 1 = Correct.
    zero_division : float, default nan
        Returned when there is no gold-correct instance (CR undefined).

    Returns
    -------
    float
        A fraction in [0, 1] (the paper prints percent).
    """
    z = _check_zero_division(zero_division)
    pred, gold = _paired_flags(predicted_correct, gold_correct, ("predicted_correct", "gold_correct"))
    tc = int(np.count_nonzero(pred & gold))
    fi = int(np.count_nonzero(~pred & gold))
    return _safe_ratio(tc, tc + fi, z)


def incorrect_recall(*, predicted_correct, gold_correct, zero_division: float = float("nan")) -> float:
    """Incorrect-Recall ``IR = Count(TI) / (Count(TI) + Count(FC))`` (paper 1, Sec. 4.3, "analogous" to Eq. 3).

    TI ("True Incorrect") = gold Incorrect and predicted Incorrect; FC ("False Correct") = gold Incorrect but
    predicted Correct.  IR is the fraction of the gold-incorrect outputs labelled Incorrect.

    Takes the same 1 = Correct encoding as :func:`correct_recall` for both arguments; ``zero_division`` is
    returned when there is no gold-incorrect instance.
    """
    z = _check_zero_division(zero_division)
    pred, gold = _paired_flags(predicted_correct, gold_correct, ("predicted_correct", "gold_correct"))
    ti = int(np.count_nonzero(~pred & ~gold))
    fc = int(np.count_nonzero(pred & ~gold))
    return _safe_ratio(ti, ti + fc, z)


# --------------------------------------------------------------------------------------------------- intervals


def _interval_ends(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    lo = check_vector(np.atleast_1d(lower), "lower").astype(np.float64)
    hi = check_vector(np.atleast_1d(upper), "upper").astype(np.float64)
    check_same_length(lower=lo, upper=hi)
    bad = lo > hi
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputValidationError(
            f"lower/upper: expected lower <= upper for every set, found {int(bad.sum())} inverted interval(s) "
            f"(first at index {i}: lower={lo[i]:.6g} > upper={hi[i]:.6g})"
        )
    return lo, hi


def _interval_arrays(true, lower, upper) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi = _interval_ends(lower, upper)
    t = check_vector(np.atleast_1d(true), "true").astype(np.float64)
    check_same_length(true=t, lower=lo)
    return t, lo, hi


def interval_coverage(true, *, lower, upper) -> float:
    """Fraction of sets whose true accuracy lies within its closed interval ``[lower, upper]``.

    ``coverage = (1/m) Σ_i 1[lower_i ≤ acc_i ≤ upper_i]`` — the "reliability" of bounds in paper 1 (Sec. 4.3:
    "whether the gold accuracy is within the bounds").

    Parameters
    ----------
    true : array-like of shape (n_sets,)
        True accuracies.
    lower, upper : array-like of shape (n_sets,)
        Interval ends, ``lower <= upper`` element-wise (checked).

    Returns
    -------
    float
        A fraction in [0, 1].
    """
    t, lo, hi = _interval_arrays(true, lower, upper)
    return float(np.mean((lo <= t) & (t <= hi)))


def mean_interval_width(*, lower, upper) -> float:
    """Mean width ``(1/m) Σ_i (upper_i − lower_i)`` — the "tightness" of bounds in paper 1 (Sec. 4.3).

    Returned in the unit of the inputs (fractions of accuracy).
    """
    lo, hi = _interval_ends(lower, upper)
    return float(np.mean(hi - lo))


# ---------------------------------------------------------------------------------------------- association


def r2_score(*, true, predicted) -> float:
    """Coefficient of determination of predictions, ``R² = 1 − Σ(y_i − ŷ_i)² / Σ(y_i − ȳ)²``.

    This judges *predicted accuracies* against true ones, so it can be negative on held-out sets (the predictions
    are worse than the held-out mean).  Equals :func:`squared_pearson` only for a least-squares line evaluated
    in-sample (paper 5's setting, Sec. 4.1).  Same definition as :func:`sklearn.metrics.r2_score`.

    Parameters
    ----------
    true : array-like of shape (n_sets,)
        True accuracies; must not be constant (R² is undefined then), at least 2 values.
    predicted : array-like of shape (n_sets,)
        Predicted accuracies.

    Returns
    -------
    float
        Dimensionless, ≤ 1.
    """
    y, yhat = _paired_vectors(true, predicted, ("true", "predicted"), min_len=2)
    _check_not_constant(y, "true", "R² (coefficient of determination)")
    return _r2(y, yhat)


def _r2(y: np.ndarray, yhat: np.ndarray) -> float:
    ss_res = float(np.sum((y - yhat) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - ss_res / ss_tot


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    xc = x - x.mean()
    yc = y - y.mean()
    r = float(np.dot(xc, yc) / math.sqrt(float(np.dot(xc, xc)) * float(np.dot(yc, yc))))
    return min(1.0, max(-1.0, r))


def pearson_r(x, y) -> float:
    """Pearson correlation ``r = Σ(x−x̄)(y−ȳ) / sqrt(Σ(x−x̄)² Σ(y−ȳ)²)`` (paper 5, Sec. 4.1 "r").

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired values, n ≥ 2, neither constant.

    Returns
    -------
    float
        In [−1, 1]; the sign is kept (a score that falls as accuracy rises has r < 0).
    """
    a, b = _paired_vectors(x, y, ("x", "y"), min_len=2)
    _check_not_constant(a, "x", "Pearson's r")
    _check_not_constant(b, "y", "Pearson's r")
    return _pearson(a, b)


def squared_pearson(x, y) -> float:
    """Squared Pearson correlation ``r²`` — the R² of a least-squares line fitted and scored on the same data.

    This is what paper 5's scripts report as "R²" (``LinearRegression.score`` on the meta-set itself).  In [0, 1].
    """
    return pearson_r(x, y) ** 2


def rankdata_average(x) -> np.ndarray:
    """Ranks 1..n with ties given the average of the ranks they span (like ``scipy.stats.rankdata(method='average')``).

    Vectorised: one stable sort, then the tie groups are located from the sorted values and each group receives
    ``(first_rank + last_rank) / 2``.
    """
    a = check_vector(x, "x").astype(np.float64)
    return _rank_average(a)


def _rank_average(a: np.ndarray) -> np.ndarray:
    n = a.size
    order = np.argsort(a, kind="mergesort")
    sorted_a = a[order]
    # start index of each tie group in sorted order
    new_group = np.empty(n, dtype=bool)
    new_group[0] = True
    np.not_equal(sorted_a[1:], sorted_a[:-1], out=new_group[1:])
    group_id = np.cumsum(new_group) - 1
    starts = np.flatnonzero(new_group)
    ends = np.append(starts[1:], n)  # exclusive
    avg_rank = (starts + 1 + ends) / 2.0  # mean of ranks starts+1 .. ends
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = avg_rank[group_id]
    return ranks


def roc_auc(*, scores, labels) -> float:
    """Area under the ROC curve of ``scores`` for telling ``labels == 1`` from ``labels == 0``.

    AUC = P(s⁺ > s⁻) + ½ · P(s⁺ = s⁻) over all (positive, negative) pairs, i.e. the Mann-Whitney statistic
    U / (n⁺ n⁻) = (Σ_{i: y_i = 1} rank(s_i) − n⁺(n⁺ + 1)/2) / (n⁺ n⁻) with average ranks for ties.  0.5 is chance;
    NaN when one class is absent.  (Paper 1 selects discriminator checkpoints by this on the dev set.)
    """
    s = check_vector(scores, "scores").astype(np.float64)
    y = check_vector(labels, "labels")
    if s.size != y.size:
        raise InputValidationError(f"scores/labels: expected equal lengths, got {s.size} and {y.size}")
    if not np.isin(y, (0, 1)).all():
        raise InputValidationError("labels: expected 0/1 values")
    y = y.astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _rank_average(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def spearman_rho(x, y) -> float:
    """Spearman rank correlation ``ρ`` = Pearson's r of the average ranks (ties share their mean rank).

    Paper 5, Sec. 4.1 ("Spearman's rank correlation (ρ)").  Matches ``scipy.stats.spearmanr``.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired values, n ≥ 2, neither constant.

    Returns
    -------
    float
        In [−1, 1].
    """
    a, b = _paired_vectors(x, y, ("x", "y"), min_len=2)
    _check_not_constant(a, "x", "Spearman's rho")
    _check_not_constant(b, "y", "Spearman's rho")
    return _pearson(_rank_average(a), _rank_average(b))


def _tie_pairs(a: np.ndarray) -> int:
    _, counts = np.unique(a, return_counts=True)
    return int(np.sum(counts * (counts - 1) // 2))


def kendall_tau(x, y, *, chunk_size: int = 2048) -> float:
    """Kendall's tau-b, ``τ_b = (C − D) / sqrt((n₀ − n₁)(n₀ − n₂))``.

    C / D = concordant / discordant pairs, n₀ = n(n−1)/2, n₁ / n₂ = pairs tied in x / in y.  Same as
    ``scipy.stats.kendalltau`` (variant 'b').  Computed with pairwise sign products, vectorised in row chunks
    (O(n²) time, O(chunk_size·n) memory): fine for the hundreds to few thousands of sets or models it is used on.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired values, n ≥ 2, neither constant.
    chunk_size : int, default 2048
        Rows of the pair matrix processed at once.

    Returns
    -------
    float
        In [−1, 1].
    """
    a, b = _paired_vectors(x, y, ("x", "y"), min_len=2)
    _check_not_constant(a, "x", "Kendall's tau")
    _check_not_constant(b, "y", "Kendall's tau")
    if int(chunk_size) < 1:
        raise InputValidationError(f"chunk_size: expected a positive integer, got {chunk_size!r}")
    n = a.size
    s = 0  # Σ over ordered pairs (i, j) of sign(a_i − a_j)·sign(b_i − b_j) = 2(C − D)
    for start in range(0, n, int(chunk_size)):
        stop = min(n, start + int(chunk_size))
        sa = np.sign(a[start:stop, None] - a[None, :])
        sb = np.sign(b[start:stop, None] - b[None, :])
        s += int(np.sum(sa * sb))
    n0 = n * (n - 1) // 2
    denom = math.sqrt(float(n0 - _tie_pairs(a)) * float(n0 - _tie_pairs(b)))
    tau = (s / 2.0) / denom
    return min(1.0, max(-1.0, tau))
