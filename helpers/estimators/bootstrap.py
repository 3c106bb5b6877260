"""Percentile bootstrap intervals over target examples, vectorised.

Every estimator of :mod:`helpers.estimators` gets its interval from here (``estimate(..., interval=True)`` or
:func:`bootstrap_interval`).  The target set is resampled with replacement ``n_boot`` times; the estimator's
statistic is recomputed on each resample; the interval is the ``[(1 - level)/2, (1 + level)/2]`` percentiles of
the replicates (Efron's percentile interval).  The labelled reference set is *not* resampled: the interval
describes target-sampling noise for a fixed fitted estimator (threshold, reference statistics).

Three routes, chosen by the estimator:

* **binary per-example statistic** (ATC, MaxProb, agreement: a fraction of 0/1 indicators): the count of ones
  in a resample of size n is exactly Binomial(n, p_hat), so the replicates are drawn directly, O(n_boot);
* **function of column means** (Avg Conf, DoC, entropy, Avg Energy, MDE, small-K nuclear norm and Fréchet):
  multinomial counts ``C`` (n_boot x n, built chunk by chunk from one block of random indices) times the
  per-example columns ``X`` (n x m) give all resampled means in one matrix product ``C @ X / n``;
* **a function of the resampled values themselves** (MDE: a log-sum-exp over the resample, stabilised by each
  resample's own maximum so no replicate underflows): the statistic of each row of a block of resampled values;
* **anything else** (COT, large-K nuclear norm / Fréchet): one recomputation per replicate with integer
  per-example weights (the counts), so no resampled copy of the data is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import check_bootstrap_params
from helpers.estimators.estimator import LabelFreeEstimator, Prepared

__all__ = [
    "BootstrapResult",
    "bootstrap_interval",
    "bootstrap_replicates",
    "percentile_interval",
    "resampled_means",
]

# Max entries of one block of multinomial counts: 2**23 entries (64 MB as float64).
_BLOCK = 1 << 23


@dataclass(frozen=True)
class BootstrapResult:
    """Point value, percentile interval and the replicates (accuracy, or score for score-type estimators)."""

    point: float
    lower: float
    upper: float
    level: float
    replicates: np.ndarray


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval ``(q_{(1-level)/2}, q_{(1+level)/2})`` of bootstrap replicates (nan ones dropped)."""
    _check_level(level)
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(r, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _check_level(level: Any) -> None:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise InputValidationError(f"level: expected a number in (0, 1), got {level!r}")
    if not 0.0 < float(level) < 1.0:
        raise InputValidationError(f"level: must be in (0, 1) (e.g. 0.95 for 95 %), got {level!r}")


def _check_n_boot(n_boot: Any) -> None:
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 1:
        raise InputValidationError(f"n_boot: expected a positive integer, got {n_boot!r}")


def _counts_block(rng: np.random.Generator, n: int, n_rep: int) -> np.ndarray:
    """Multinomial(n; 1/n, ..., 1/n) counts for ``n_rep`` resamples, shape (n_rep, n), float64."""
    dtype = np.int32 if n < 2**31 else np.int64
    idx = rng.integers(0, n, size=(n_rep, n), dtype=dtype)
    idx += (np.arange(n_rep, dtype=dtype) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=n_rep * n).reshape(n_rep, n).astype(np.float64)


def resampled_means(
    columns: np.ndarray, *, n_boot: int = 200, random_state: int | np.random.Generator | None = 0
) -> np.ndarray:
    """Column means of ``n_boot`` bootstrap resamples of the rows of ``columns`` (n, m) -> (n_boot, m).

    Resample indices are drawn in blocks of at most 2**23 (so memory stays bounded at any n).  With few columns
    (m <= 4) the means come from gathering the resampled values; with more columns, from multinomial counts
    (``bincount`` of the block) times the columns, one matrix product per block.
    """
    _check_n_boot(n_boot)
    x = np.asarray(columns)
    if x.ndim == 1:
        x = x[:, None]
    n, m = x.shape
    rng = np.random.default_rng(random_state)
    xf = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty((n_boot, m), dtype=np.float64)
    step = max(1, min(n_boot, _BLOCK // max(n, 1)))
    dtype = np.int32 if n < 2**31 else np.int64
    for start in range(0, n_boot, step):
        stop = min(n_boot, start + step)
        if m <= 4:
            idx = rng.integers(0, n, size=(stop - start, n), dtype=dtype)
            for j in range(m):
                out[start:stop, j] = np.take(xf[:, j], idx).mean(axis=1)
        else:
            counts = _counts_block(rng, n, stop - start)
            out[start:stop] = (xf.T @ counts.T).T / n
    return out


def _row_statistics(estimator, prep, values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """The statistic ``estimator._resampled(rows, prep)`` of ``n_boot`` resamples of ``values`` (n,), drawn in
    blocks of at most 2**23 values; the same index draws as :func:`resampled_means`' gather route."""
    n = values.shape[0]
    out = np.empty(n_boot, dtype=np.float64)
    step = max(1, min(n_boot, _BLOCK // max(n, 1)))
    dtype = np.int32 if n < 2**31 else np.int64
    for start in range(0, n_boot, step):
        stop = min(n_boot, start + step)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=dtype)
        out[start:stop] = estimator._resampled(np.take(values, idx), prep)
    return out


def bootstrap_replicates(
    estimator: LabelFreeEstimator,
    prep: Prepared,
    *,
    n_boot: int = 200,
    random_state: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Replicates of the estimator's raw value (accuracy or score) on ``n_boot`` resamples of the target."""
    rng = np.random.default_rng(random_state)
    n = prep.n
    values = estimator._resample_values(prep)
    if values is not None:
        return _row_statistics(estimator, prep, np.asarray(values, dtype=np.float64), n_boot, rng)
    cols = estimator._columns(prep)
    if cols is not None:
        if estimator.binary_columns:
            p_hat = float(np.asarray(cols, dtype=np.float64).mean())
            means = rng.binomial(n, min(max(p_hat, 0.0), 1.0), size=n_boot)[:, None] / n
        else:
            means = resampled_means(cols, n_boot=n_boot, random_state=rng)
        return np.asarray(estimator._from_means(means, prep), dtype=np.float64)
    reps = np.empty(n_boot, dtype=np.float64)
    for b in range(n_boot):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(np.float64)
        reps[b] = estimator._weighted(prep, counts)
    return reps


def bootstrap_interval(
    estimator: LabelFreeEstimator,
    *,
    n_boot: int | None = None,
    level: float | None = None,
    random_state: int | np.random.Generator | None = None,
    **target: Any,
) -> BootstrapResult:
    """Percentile bootstrap interval of a fitted estimator on one target set.

    Parameters
    ----------
    estimator : fitted estimator from :mod:`helpers.estimators`
    n_boot, level, random_state : optional
        Override the estimator's own settings (defaults 200 resamples, 95 %, seed 0).
    **target
        The target arrays exactly as ``estimator.estimate`` takes them (``logits=``, ``probs=``, ...).

    Returns
    -------
    BootstrapResult
        ``point`` and the interval of the estimator's raw value: an accuracy fraction for accuracy-type
        estimators, the score (MDE, nuclear norm, Fréchet distance...) for score-type ones.
    """
    n_boot = estimator.n_boot if n_boot is None else n_boot
    level = estimator.level if level is None else level
    random_state = estimator.random_state if random_state is None else random_state
    check_bootstrap_params(n_boot, level)
    estimator._check_params()
    estimator._require_fit()
    prep = estimator._prepare_target(**target)
    point = float(estimator._point(prep))
    reps = bootstrap_replicates(estimator, prep, n_boot=n_boot, random_state=random_state)
    lo, hi = percentile_interval(reps, level)
    return BootstrapResult(point, lo, hi, float(level), reps)
