"""The failure modes of AUC (paper 2, Sec. 2.1, Table 1): first accuracy drops, condensed curves, fluctuations,
plateaus, tail inversions and the pairwise failure cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.selective.curve import (
    SelectiveCurve,
    _as_curve,
    _check_coverage,
    _curve,
    _curve_from,
    auc,
    check_selective_inputs,
    curve_area,
)


# ------------------------------------------------------------------------------------------------- diagnostics
def first_drop_threshold(curve: SelectiveCurve, tolerance: float) -> float:
    """Confidence threshold of the first curve point whose accuracy is below ``tolerance`` (paper 2, ``a``/``b``).

    If the accuracy never falls below ``tolerance`` the lowest confidence (threshold at 100 % coverage) is returned,
    as in Figure 1's "Lowest Maxprob".  ``a = first_drop_threshold(curve, 1.0)``.
    """
    curve = _as_curve(curve)
    t = float(tolerance)
    if not (0.0 < t <= 1.0):
        raise InputValidationError(f"tolerance: expected an accuracy in (0, 1], got {tolerance!r}")
    below = np.flatnonzero(curve.accuracy < t - 1e-12)
    return float(curve.threshold[below[0]] if below.size else curve.threshold[-1])


def condense_curve(curve: SelectiveCurve, *, decimals: int | None = 2) -> pd.DataFrame:
    """The points where the accuracy level (accuracy floored to ``decimals`` places) changes (Figures 4–8).

    Returns a frame with columns ``threshold, coverage, accuracy, level``; the first curve point is always kept.
    ``decimals=None`` keeps every point (``level = accuracy``).
    """
    curve = _as_curve(curve)
    if decimals is None:
        level = curve.accuracy.copy()
        keep = np.ones(level.size, bool)
    else:
        if int(decimals) != decimals or decimals < 0:
            raise InputValidationError(f"decimals: expected a non-negative integer or None, got {decimals!r}")
        scale = 10.0 ** int(decimals)
        level = np.floor(curve.accuracy * scale + 1e-9) / scale
        keep = np.r_[True, level[1:] != level[:-1]]
    return pd.DataFrame(
        dict(
            threshold=curve.threshold[keep],
            coverage=curve.coverage[keep],
            accuracy=curve.accuracy[keep],
            level=level[keep],
        )
    ).reset_index(drop=True)


@dataclass(frozen=True)
class Fluctuations:
    """Increases of accuracy with coverage (paper 2, Section 2.1 "Curve Fluctuations", Eq. 1 third term).

    Attributes
    ----------
    d1, d2 : ndarray (n,)
        Accuracy levels before / after each increase (``d1 < d2``).
    c1, c2 : ndarray (n,)
        Confidence thresholds of the two points (``c1 >= c2``).
    coverage : ndarray (n,)
        Coverage at which each increase happens.
    c : ndarray (n,)
        ``max(c1 − c2, floor)``.
    penalty : float
        ``Σ_i (n − i + 1)(d2_i − d1_i)/c_i / Σ_i (n − i + 1)`` (0 when n = 0): Eq. 1's third term without ``z``.
    """

    d1: np.ndarray
    d2: np.ndarray
    c1: np.ndarray
    c2: np.ndarray
    coverage: np.ndarray
    c: np.ndarray
    penalty: float

    @property
    def count(self) -> int:
        """Number of fluctuations ``n``."""
        return int(self.d1.size)

    @property
    def magnitude(self) -> float:
        """Total accuracy increase ``Σ (d2 − d1)``."""
        return float(np.sum(self.d2 - self.d1))

    def to_frame(self) -> pd.DataFrame:
        """One row per fluctuation."""
        return pd.DataFrame(
            dict(coverage=self.coverage, d1=self.d1, d2=self.d2, c1=self.c1, c2=self.c2, c=self.c)
        )


def fluctuations(
    confidence=None,
    correct=None,
    *,
    curve: SelectiveCurve | None = None,
    decimals: int | None = 2,
    c_floor: float = 0.001,
) -> Fluctuations:
    """Count and size the increases of accuracy with coverage (paper 2, Eq. 1; reading in the module docstring).

    Parameters
    ----------
    confidence, correct : array-like, optional
        Or give ``curve``.
    decimals : int or None, default 2
        Accuracy levels compared (floored to this many decimals); None compares raw accuracies of consecutive
        tie blocks.
    c_floor : float, default 0.001
        Floor of ``c = c1 − c2`` (Eq. 1's case definition).
    """
    cur = _curve_from(confidence, correct, curve)
    if not (float(c_floor) > 0):
        raise InputValidationError(f"c_floor: expected a positive value, got {c_floor!r}")
    pts = condense_curve(cur, decimals=decimals)
    lv, th = pts.level.to_numpy(), pts.threshold.to_numpy()
    up = np.flatnonzero(lv[1:] > lv[:-1]) + 1
    d1, d2, c1, c2 = lv[up - 1], lv[up], th[up - 1], th[up]
    c = np.maximum(c1 - c2, float(c_floor))
    n = up.size
    if n:
        w = n - np.arange(1, n + 1) + 1.0  # (n − i + 1), i = 1..n by increasing coverage
        penalty = float(np.sum(w * (d2 - d1) / c) / np.sum(w))
    else:
        penalty = 0.0
    return Fluctuations(
        d1=d1, d2=d2, c1=c1, c2=c2, coverage=pts.coverage.to_numpy()[up], c=c, penalty=penalty
    )


def plateau(confidence, correct, *, min_coverage: float = 0.5) -> dict[str, float]:
    """Plateau diagnostics (paper 2, Section 2.1 "Plateau Formation"): the range of MaxProb values.

    Returns
    -------
    dict
        ``confidence_min``, ``confidence_max``, ``confidence_range`` (max − min over all answers);
        ``error_confidence_mean`` (mean confidence of the wrong answers; NaN if none);
        ``accuracy_range_tail`` (max − min accuracy of the curve at coverage >= ``min_coverage``: a flat tail,
        a plateau, gives a small value); ``confidence_range_tail`` (range of thresholds over the same points).
    """
    conf, corr = check_selective_inputs(confidence, correct)
    m = float(min_coverage)
    if not (0.0 <= m <= 1.0):
        raise InputValidationError(f"min_coverage: expected a value in [0, 1], got {min_coverage!r}")
    cur = _curve(conf, corr)
    tail = cur.coverage >= m - 1e-12
    return dict(
        confidence_min=float(conf.min()),
        confidence_max=float(conf.max()),
        confidence_range=float(conf.max() - conf.min()),
        error_confidence_mean=float(conf[~corr].mean()) if (~corr).any() else float("nan"),
        accuracy_range_tail=float(np.ptp(cur.accuracy[tail])),
        confidence_range_tail=float(np.ptp(cur.threshold[tail])),
    )


def tail_accuracy(curve: SelectiveCurve, *, max_coverage: float = 0.3) -> float:
    """Mean accuracy over coverage ``(0, max_coverage]``: the normalised partial AUC of the low-coverage tail."""
    m = _check_coverage(max_coverage)
    return curve_area(curve, lo=0.0, hi=m) / m


def tail_inversion(curve_a: SelectiveCurve, curve_b: SelectiveCurve, *, max_coverage: float = 0.3) -> dict:
    """AUC-tail check for a model pair (paper 2, Section 2.1 "AUC Tail", Table 1 case 1).

    Returns
    -------
    dict
        ``auc_a``, ``auc_b``, ``tail_a``, ``tail_b`` (:func:`tail_accuracy`) and ``inversion``: True when the
        higher-AUC model is strictly less accurate over the tail ``(0, max_coverage]`` than the other.
    """
    aa, ab = auc(curve=curve_a), auc(curve=curve_b)
    ta, tb = (
        tail_accuracy(curve_a, max_coverage=max_coverage),
        tail_accuracy(curve_b, max_coverage=max_coverage),
    )
    inversion = (aa > ab and ta < tb) or (ab > aa and tb < ta)
    return dict(auc_a=aa, auc_b=ab, tail_a=ta, tail_b=tb, inversion=bool(inversion))


def auc_failure_cases(
    data: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    max_coverage: float = 0.3,
    decimals: int | None = 2,
    c_floor: float = 0.001,
    kinds: Sequence[str] = ("tail", "fluctuation", "plateau"),
) -> pd.DataFrame:
    """Every ordered pair (A, B) with ``AUC_A > AUC_B`` where B is better by one of paper 2's failure modes.

    Parameters
    ----------
    data : mapping name -> (confidence, correct)
    max_coverage : float
        Tail region for the ``tail`` kind.
    kinds : subset of {"tail", "fluctuation", "plateau"}
        ``tail``: ``tail_accuracy_A < tail_accuracy_B``; ``fluctuation``: A's fluctuation penalty
        (:class:`Fluctuations`) > B's; ``plateau``: A's wrong answers have a higher mean MaxProb than B's.

    Returns
    -------
    DataFrame
        Columns ``kind, model_a, model_b, auc_a, auc_b, value_a, value_b`` (the compared quantity), sorted by kind
        then AUC gap.
    """
    allowed = {"tail", "fluctuation", "plateau"}
    bad = [k for k in kinds if k not in allowed]
    if bad:
        raise InputValidationError(f"kinds: expected a subset of {sorted(allowed)}, got {bad}")
    if len(data) < 2:
        raise InputValidationError(f"data: expected at least 2 models, got {len(data)}")
    stats = {}
    for name, (conf, corr) in data.items():
        cf, cr = check_selective_inputs(conf, corr)
        cur = _curve(cf, cr)
        stats[name] = dict(
            auc=auc(curve=cur),
            tail=tail_accuracy(cur, max_coverage=max_coverage),
            fluctuation=fluctuations(curve=cur, decimals=decimals, c_floor=c_floor).penalty,
            plateau=float(cf[~cr].mean()) if (~cr).any() else float("nan"),
        )
    rows = []
    for a, sa in stats.items():
        for b, sb in stats.items():
            if a == b or not sa["auc"] > sb["auc"]:
                continue
            for kind in kinds:
                va, vb = sa[kind], sb[kind]
                hit = va < vb if kind == "tail" else va > vb
                if hit:
                    rows.append(
                        dict(
                            kind=kind,
                            model_a=a,
                            model_b=b,
                            auc_a=sa["auc"],
                            auc_b=sb["auc"],
                            value_a=va,
                            value_b=vb,
                        )
                    )
    out = pd.DataFrame(rows, columns=["kind", "model_a", "model_b", "auc_a", "auc_b", "value_a", "value_b"])
    if len(out):
        out = out.assign(gap=out.auc_a - out.auc_b).sort_values(["kind", "gap"], ascending=[True, False])
        out = out.drop(columns="gap").reset_index(drop=True)
    return out
