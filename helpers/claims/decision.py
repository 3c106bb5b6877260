"""Deciding a claim: the interval of its estimate and what that interval says of the criterion.

The verdict comes from a 95 % interval of the estimate (bootstrap over whatever the quantity is sampled over, or an
exact binomial interval for a share of setups), never from the point estimate alone:

======================  ==================================================================
criterion ``q >= t``    **holds** when the interval's lower end is ``>= t``, **fails** when its upper end is ``< t``,
                        otherwise **undecided** (the interval straddles the criterion)
``q > t``, ``q <= t``,  likewise, with the strict or reversed comparison
``q < t``
======================  ==================================================================

What an interval says is not yet the published verdict: :mod:`helpers.claims.verdicts` certifies it by the error
rate of its rule (:mod:`helpers.claims.power`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError

__all__ = ["Decision", "DIRECTIONS", "INTERVAL_VERDICTS", "verdict", "clopper_pearson", "share_decision",
           "bootstrap_groups", "bootstrap_clusters", "bootstrap_decision"]  # fmt: skip

#: what an interval says of its criterion (:func:`verdict`)
INTERVAL_VERDICTS = ("holds", "fails", "undecided")
#: the criterion's directions
DIRECTIONS = (">=", ">", "<=", "<")


@dataclass(frozen=True)
class Decision:
    """What deciding a claim measured: the estimate, its 95 % interval ``[low, high]`` and, for a claim checked on
    several setups, how many setups held and the per-setup detail (one row per setup)."""

    estimate: float
    low: float
    high: float
    setups_held: int | None = None
    setups: int | None = None
    detail: pd.DataFrame | None = None
    note: str = ""


def verdict(low: float, high: float, threshold: float, direction: str) -> str:
    """The verdict of a 95 % interval ``[low, high]`` under the criterion ``estimate <direction> threshold``.

    >>> verdict(0.82, 0.95, 0.8, ">=")
    'holds'
    >>> verdict(0.40, 0.79, 0.8, ">=")
    'fails'
    >>> verdict(0.60, 0.95, 0.8, ">=")
    'undecided'
    >>> verdict(-0.05, -0.01, 0.0, "<")
    'holds'
    """
    if direction not in DIRECTIONS:
        raise InputValidationError(f"direction: expected one of {DIRECTIONS}, got {direction!r}")
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "undecided"
    t = threshold
    ok = {">=": low >= t, ">": low > t, "<=": high <= t, "<": high < t}[direction]
    bad = {">=": high < t, ">": high <= t, "<=": low > t, "<": low >= t}[direction]
    return "holds" if ok else "fails" if bad else "undecided"


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of a share ``k / n`` (Clopper & Pearson, 1934).

    >>> [round(v, 3) for v in clopper_pearson(9, 10)]
    [0.555, 0.997]
    >>> clopper_pearson(0, 0)
    (nan, nan)
    """
    from scipy.stats import beta

    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= k <= n:
        raise InputValidationError(f"k: expected 0 <= k <= n = {n}, got {k}")
    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return low, high


def share_decision(flags: Sequence[bool] | pd.Series, detail: pd.DataFrame | None = None) -> Decision:
    """The share of setups where a per-setup condition holds, with its exact binomial interval over setups.

    ``flags`` may hold NaN for a setup where the condition is undefined: it is left out.
    """
    values = pd.Series(flags, dtype=float).dropna()
    n, k = len(values), int(values.sum())
    low, high = clopper_pearson(k, n)
    return Decision(k / n if n else float("nan"), low, high, setups_held=k, setups=n, detail=detail)


def bootstrap_groups(
    statistic: Callable[[dict[Any, np.ndarray]], float],
    sizes: Mapping[Any, int],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    **decision: Any,
) -> Decision:
    """``statistic({group: index})`` on every group's units, and its percentile interval over ``n_boot`` replicates
    that resample each group's units independently, with replacement (a stratified bootstrap: test points within
    each pair, sets within each backbone, model pairs within each setting).  One seeded generator: the same inputs
    give the same interval.  ``decision`` goes to :class:`Decision` (setups held, detail, note).

    Replicates where the statistic is undefined (NaN) are left out; with fewer than half defined, or a group of
    fewer than two units, the interval is NaN (no verdict).
    """
    rng = np.random.default_rng(seed)
    estimate = float(statistic({g: np.arange(n) for g, n in sizes.items()}))
    if not sizes or min(sizes.values()) < 2:
        return Decision(estimate, float("nan"), float("nan"), **decision)
    reps = [statistic({g: rng.integers(0, n, n) for g, n in sizes.items()}) for _ in range(n_boot)]
    return _percentile_decision(estimate, reps, level, decision)


def bootstrap_clusters(
    statistic: Callable[[dict[Any, np.ndarray]], float],
    labels: Mapping[Any, Sequence[Any]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    **decision: Any,
) -> Decision:
    """``statistic({group: index})`` on every group's rows, and its percentile interval over ``n_boot`` replicates
    that resample whole clusters: the cluster labels (``labels[group]``: one per row; a label names the same
    cluster in every group — a corruption type, all its severities, on every backbone) are drawn with replacement,
    and each group's index holds every row of each drawn label, as often as it is drawn.

    Replicates where the statistic is undefined (NaN) are left out; with fewer than half defined, or fewer than two
    clusters, the interval is NaN (no verdict).

    >>> labels = {"a": ["x", "x", "y", "z"]}
    >>> d = bootstrap_clusters(lambda idx: float(np.mean(np.array([1.0, 1.0, 3.0, 5.0])[idx["a"]])), labels)
    >>> d.estimate, 1.0 <= d.low <= d.high <= 5.0
    (2.5, True)
    """
    rng = np.random.default_rng(seed)
    rows = {g: pd.Series(np.arange(len(v))).groupby(np.asarray(v, dtype=object)).agg(list) for g, v in labels.items()}
    names = sorted(set().union(*[set(r.index) for r in rows.values()]), key=str)
    estimate = float(statistic({g: np.arange(len(v)) for g, v in labels.items()}))
    if len(names) < 2:
        return Decision(estimate, float("nan"), float("nan"), **decision)
    empty: list[int] = []

    def replicate() -> float:
        draw = [names[i] for i in rng.integers(0, len(names), len(names))]
        return statistic({g: np.array([j for c in draw for j in (r[c] if c in r.index else empty)], dtype=int)
                          for g, r in rows.items()})  # fmt: skip

    return _percentile_decision(estimate, [replicate() for _ in range(n_boot)], level, decision)


def _percentile_decision(estimate: float, replicates: Sequence[float], level: float, decision: Mapping[str, Any]
                         ) -> Decision:  # fmt: skip
    """The percentile interval of the defined ``replicates`` (NaN with fewer than half of them defined)."""
    reps = np.asarray(replicates, dtype=float)
    n_boot = len(reps)
    reps = reps[np.isfinite(reps)]
    if len(reps) < n_boot / 2:
        return Decision(estimate, float("nan"), float("nan"), **decision)
    a = (1 - level) / 2
    low, high = (float(v) for v in np.quantile(reps, [a, 1 - a]))
    return Decision(estimate, low, high, **decision)


def bootstrap_decision(
    statistic: Callable[[np.ndarray], float],
    n: int,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    **decision: Any,
) -> Decision:
    """``statistic(index)`` on all ``n`` units and its percentile interval over ``n_boot`` resamples of the units
    (:func:`bootstrap_groups` with one group)."""
    return bootstrap_groups(lambda idx: statistic(idx[0]), {0: n}, n_boot=n_boot, seed=seed, level=level, **decision)
