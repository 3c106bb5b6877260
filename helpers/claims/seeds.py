r"""Claims decided over seeds: the seed as the top resampling level of a trained claim's interval.

A claim that rests on trained models is about the models a training recipe gives, not about one training run.
Each seed's run decides the claim on its own units (sets, pairs, test points) and gives an estimate with a 95 %
interval; :func:`seeds_decision` combines ``S`` of them into one interval for the mean over seeds.  How depends on
what the seeds share (each claim's :class:`helpers.claims.Power` says which, ``units``):

**Shared units** (the default: every seed's run uses the same sets and test examples, so the units' sampling error
is one draw common to all seeds and averaging seeds does not reduce it).  With
:math:`d^-_s = y_s - \mathrm{low}_s` and :math:`d^+_s = \mathrm{high}_s - y_s` each seed's own half-widths,

.. math::

    \bar y = \frac1S \sum_s y_s, \qquad
    \bar y - \sqrt{\overline{(d^-)^2} + t_{S-1,\,0.975}^2\, s_y^2 / S}, \qquad
    \bar y + \sqrt{\overline{(d^+)^2} + t_{S-1,\,0.975}^2\, s_y^2 / S}

the units' interval (kept asymmetric: a share's exact interval near 0 or 1) widened in quadrature by the seeds'
t interval.  Seeds that agree give back one seed's own interval: three identical runs are one run.

**Redrawn units** (each seed draws its own units: the models whose pairs a claim resamples are trained anew):

.. math::

    \widehat{\mathrm{se}}^2 = \frac{\max\bigl(s_y^2,\ \overline{\mathrm{se}_s^2}\bigr)}{S}, \qquad
    \bar y \pm t_{S-1,\,0.975}\ \widehat{\mathrm{se}}

with :math:`s_y^2` the variance of the seeds' estimates and :math:`\mathrm{se}_s` = a seed's interval width / 3.92.

Coverage (``tests/test_claims_seeds.py``, 4,000 draws per cell, seed spreads of 0 to 20 units' standard errors,
3, 5 and 10 seeds): the shared-units rule covers at least 94.8 % where the seeds share their units and at least
95.0 % where they do not (there it is conservative, up to 100 %); the redrawn-units rule covers at least 94.8 % in
the world it is built for, but as little as 52 % where the seeds share their units (ten agreeing seeds: 2.262 / √10
standard errors wide).  A hierarchical percentile bootstrap (seeds resampled, then units) was not used: with 3
seeds its top level has 10 distinct resamples and under-covers.

A claim is decided over seeds when the published seeds table (``figures/claims_seeds.csv``,
:func:`helpers.claims.stability_table`) has at least :data:`MIN_SEEDS` seeds for it; the published run's own
(seed-0) outcome stays in ``run_estimate`` / ``run_low`` / ``run_high`` / ``run_verdict``.  A superseded rule keeps
the record it had (its history), decided on the published run.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from helpers.claims.decision import Decision, verdict
from helpers.errors import InputValidationError

__all__ = ["MIN_SEEDS", "Z", "seeds_decision", "seeds_interval", "shared_seeds_interval", "seed_cells", "criterion_of",
           "decide_over_seeds"]  # fmt: skip

#: the fewest seeds a trained claim is decided on
MIN_SEEDS = 3
Z = 1.959963984540054
_CELL = re.compile(r"\s*(\S+) \[(\S+), (\S+)\]\s*")
_CRITERION = re.compile(r" (>=|>|<=|<) (\S+) \(95 % interval\)\s*$")


def seeds_interval(estimates: np.ndarray, within_se: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray,
                                                                                              np.ndarray]:  # fmt: skip
    """Vectorised :func:`seeds_decision` over the last axis: ``(mean, low, high)`` of ``estimates`` (``... x S``)
    given each seed's units' standard error ``within_se`` (same shape)."""
    from scipy.stats import t as student_t

    y = np.asarray(estimates, float)
    s = y.shape[-1]
    mean = y.mean(axis=-1)
    if s < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan
    var = np.maximum(y.var(axis=-1, ddof=1), np.mean(np.asarray(within_se, float) ** 2, axis=-1)) / s
    half = float(student_t.ppf(1 - (1 - level) / 2, s - 1)) * np.sqrt(var)
    return mean, mean - half, mean + half


def shared_seeds_interval(estimates: np.ndarray, lows: np.ndarray, highs: np.ndarray, level: float = 0.95
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Vectorised shared-units rule over the last axis (module docstring): ``(mean, low, high)`` of ``estimates``
    (``... x S``) whose seeds share their units, each with its own interval ``[lows, highs]``."""
    from scipy.stats import t as student_t

    y, lo, hi = (np.asarray(v, float) for v in (estimates, lows, highs))
    s = y.shape[-1]
    mean = y.mean(axis=-1)
    if s < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan
    spread = float(student_t.ppf(1 - (1 - level) / 2, s - 1)) ** 2 * y.var(axis=-1, ddof=1) / s
    down = np.sqrt(np.mean((y - lo) ** 2, axis=-1) + spread)
    up = np.sqrt(np.mean((hi - y) ** 2, axis=-1) + spread)
    return mean, mean - down, mean + up


def seeds_decision(estimates: Sequence[float], lows: Sequence[float], highs: Sequence[float], *,
                   shared: bool = True, level: float = 0.95,
                   bounds: tuple[float, float] | None = None) -> Decision:  # fmt: skip
    """One claim over ``S`` seeds: the mean of the seeds' estimates and its interval with the seed as the top
    resampling level (module docstring).

    Parameters
    ----------
    estimates, lows, highs : sequence of float
        Each seed's estimate and 95 % interval (its units' sampling).
    shared : bool
        The seeds share their units (the same sets and test examples: the units' error is common to all seeds);
        False where each seed draws its own units (models trained anew and resampled).
    level : float
        The interval's coverage.
    bounds : (float, float), optional
        The quantity's range (``(0, 1)`` for a share of setups): the interval is clipped to it, which keeps its
        coverage.

    Returns
    -------
    Decision
        ``estimate`` the mean over seeds, ``[low, high]`` its interval, ``setups_held`` / ``setups``: the seeds
        used.  Seeds with a missing estimate or interval are left out; under two seeds the interval is NaN.

    Examples
    --------
    Three seeds whose spread (sd 0.1) exceeds their own sampling (half-width 0.098), sharing their units:
    0.5 ∓ √(0.098² + 4.303² · 0.1² / 3).

    >>> d = seeds_decision([0.4, 0.5, 0.6], [0.302, 0.402, 0.502], [0.498, 0.598, 0.698])
    >>> round(d.estimate, 3), round(d.low, 3), round(d.high, 3), d.setups
    (0.5, 0.233, 0.767, 3)

    Three seeds that agree on shared units are one run: its own interval.  On redrawn units their errors average
    out: 0.5 ± 4.303 · 0.05 / √3.

    >>> d = seeds_decision([0.5, 0.5, 0.5], [0.402, 0.402, 0.402], [0.598, 0.598, 0.598])
    >>> round(d.low, 3), round(d.high, 3)
    (0.402, 0.598)
    >>> d = seeds_decision([0.5, 0.5, 0.5], [0.402, 0.402, 0.402], [0.598, 0.598, 0.598], shared=False)
    >>> round(d.low, 3), round(d.high, 3)
    (0.376, 0.624)
    """
    y, lo, hi = (np.asarray(v, float) for v in (estimates, lows, highs))
    if not (y.shape == lo.shape == hi.shape) or y.ndim != 1:
        raise InputValidationError(f"estimates, lows, highs: expected three 1-d sequences of one length, got shapes "
                                   f"{y.shape}, {lo.shape}, {hi.shape}")  # fmt: skip
    ok = np.isfinite(y) & np.isfinite(lo) & np.isfinite(hi)
    if np.any(lo[ok] > hi[ok]):
        raise InputValidationError("lows, highs: expected every seed's low <= high")
    y, lo, hi = y[ok], lo[ok], hi[ok]
    if not len(y):
        return Decision(float("nan"), float("nan"), float("nan"), setups_held=0, setups=0)
    if shared:
        mean, low, high = shared_seeds_interval(y, lo, hi, level)
    else:
        mean, low, high = seeds_interval(y, (hi - lo) / (2 * Z), level)
    if bounds is not None:
        low, high = np.clip(low, *bounds), np.clip(high, *bounds)
    return Decision(float(mean), float(low), float(high), setups_held=len(y), setups=len(y))


def seed_cells(row: pd.Series) -> pd.DataFrame:
    """The per-seed outcomes of one row of the seeds table: its ``"seed N"`` cells (``"est [low, high]"``) as a
    frame with columns seed, estimate, low, high (missing or ``nan`` cells left out)."""
    out = []
    for col, cell in row.items():
        m = _CELL.fullmatch(str(cell)) if str(col).startswith("seed ") and str(col)[5:].isdigit() else None
        if m and "nan" not in m.groups():
            out.append((int(str(col)[5:]), *(float(v) for v in m.groups())))
    return pd.DataFrame(out, columns=["seed", "estimate", "low", "high"])


def criterion_of(criterion: str) -> tuple[str, float]:
    """``(direction, threshold)`` of a claim's criterion text (:attr:`helpers.claims.Claim.criterion`)."""
    m = _CRITERION.search(str(criterion))
    if m is None:
        raise InputValidationError(f"criterion: expected '<quantity> <direction> <threshold> (95 % interval)', "
                                   f"got {criterion!r}")  # fmt: skip
    return m.group(1), float(m.group(2))


def decide_over_seeds(claims: pd.DataFrame, stability: pd.DataFrame | None, *,
                      redrawn: Collection[str] = ()) -> pd.DataFrame:  # fmt: skip
    """``claims`` (rows of ``claims.csv``) with every claim the seeds table has at least :data:`MIN_SEEDS` seeds for
    decided over them (:func:`seeds_decision`, shared units except for the ids in ``redrawn``; a share's interval
    clipped to [0, 1]): its estimate, interval and verdict replaced, the published run's own outcome kept in
    ``run_estimate`` / ``run_low`` / ``run_high`` / ``run_verdict``.  Superseded and untested claims keep their
    records."""
    from helpers.claims.registry import superseded

    df = claims.copy()
    for col in ("estimate", "low", "high", "verdict"):
        df[f"run_{col}"] = df[col]
    if stability is None or not len(stability):
        return df
    rows = stability.set_index("id")
    keep = superseded(df) | df["verdict"].eq("untested")
    for i, r in df[~keep & df["id"].isin(rows.index)].iterrows():
        cells = seed_cells(rows.loc[r["id"]])
        if len(cells) < MIN_SEEDS:
            continue
        d = seeds_decision(cells["estimate"], cells["low"], cells["high"], shared=r["id"] not in set(redrawn),
                           bounds=(0.0, 1.0) if _is_share(r) else None)  # fmt: skip
        direction, threshold = criterion_of(r["criterion"])
        df.loc[i, ["estimate", "low", "high"]] = [d.estimate, d.low, d.high]
        df.loc[i, "verdict"] = verdict(d.low, d.high, threshold, direction)
    return df


def _is_share(row: pd.Series) -> bool:
    """The run decided the claim as a share of setups (:func:`helpers.claims.share_decision`: estimate = held / n)."""
    try:
        held, n, est = float(row["setups_held"]), float(row["setups"]), float(row["run_estimate"])
    except (KeyError, TypeError, ValueError):
        return False
    return n > 0 and abs(est - held / n) < 1e-9
