"""Selective answering: accuracy–coverage curves, AUC / AURC / E-AURC, the failure modes of AUC, DiSCA, DiDMA, NiDMA.

Paper 2: Mishra, Arunkumar & Baral, "Investigating the Failure Modes of the AUC metric and Exploring Alternatives
for Evaluating Systems in Safety Critical Applications" (Sections 2–3, Eq. 1–3, Appendix B).  AURC / E-AURC:
Geifman, Uziel & El-Yaniv, "Bias-Reduced Uncertainty Estimation for Deep Neural Classifiers", ICLR 2019.

Confidence contract
-------------------
Every function takes ``confidence`` (shape ``(n,)``, finite, **higher = more confident**, e.g. the max-softmax
probability "MaxProb") and ``correct`` (shape ``(n,)``, booleans or 0/1: was the prediction right?).  A model
*answers* the examples whose confidence is at least a threshold ``t`` and abstains on the rest.  Validation
(:func:`check_selective_inputs`) is kept apart from the computations.

Tie rule (documented choice)
----------------------------
Examples with *equal* confidence cannot be separated by any threshold, so they enter the curve **together as one
coverage step**.  The curve therefore has one point per distinct confidence value (in decreasing order) and does
not depend on the order of the input arrays.  With all-distinct confidences it is the usual per-example curve.

The accuracy–coverage curve is read as a right-continuous step function: for coverage ``c`` in
``(c_{k-1}, c_k]`` the accuracy is ``acc_k`` (the accuracy after the k-th block has entered).  Hence

* ``AUC = Σ_k (c_k − c_{k−1}) · acc_k`` (``c_0 = 0``), which for distinct confidences equals the mean over
  ``i = 1..n`` of the accuracy of the ``i`` most confident answers;
* ``AURC = Σ_k (c_k − c_{k−1}) · (1 − acc_k) = 1 − AUC`` (Geifman et al.'s AURC with the same tie rule);
* ``E-AURC = AURC − AURC*`` where ``AURC*`` is the AURC of an oracle that ranks every correct answer above every
  wrong one, one example per step: ``AURC* = (1/n) Σ_{i=m+1..n} (i − m)/i`` (``m`` correct answers).  Geifman et
  al.'s continuous approximation ``r + (1 − r) ln(1 − r)`` (``r`` = overall error) is *not* used: the discrete
  value is exact and E-AURC ≥ 0 always (blocks of ties can only raise AURC).

Paper-2 quantities (readings chosen where the paper is ambiguous)
-----------------------------------------------------------------
* ``a`` (Eq. 1): "the maxprob value when accuracy first drops below 100 %": the threshold of the first curve point
  whose accuracy is < 1.  ``b(τ)``: the threshold of the first curve point whose accuracy is < τ ("the first point
  models fail to cross a range of accuracy thresholds", captions of Figures 5 and 7), τ = 0.95 … 0.55 (Table 2).
  If accuracy never drops below τ (a perfect model for ``a``, the white cells of Table 2 for ``b``) the lowest
  confidence at 100 % coverage is used ("Lowest Maxprob", Figure 1).
* Fluctuations (third term of Eq. 1, Figure 3): "the number of times accuracy increases with increasing coverage".
  On the raw per-example curve *every* correct answer after the first error raises the running accuracy, so the
  count would be in the thousands for every model, which contradicts the paper's "near-zero fluctuations" for most
  models.  We follow the paper's figures 4–8 ("at each point the accuracy changes, from 1 to 0.5"): the curve is
  *condensed* to the points where the accuracy, floored to ``decimals`` decimal places (default 2, i.e. levels of
  1 %), changes value.  A fluctuation is a condensed point whose level is higher than the previous condensed point's;
  ``d1 < d2`` are the two levels and ``c1 ≥ c2`` the two points' confidence thresholds.  ``decimals=None`` uses the
  raw tie-block curve instead.
* Eq. 1: ``DiSCA = x/a + y/b − z · Σ_{i=1..n} (n − i + 1)(d2_i − d1_i)/c_i / Σ_{i=1..n} (n − i + 1)`` with
  ``c_i = max(c1_i − c2_i, 0.001)`` (floor: the paper's case definition of ``c``) and fluctuations numbered
  ``i = 1..n`` by increasing coverage, so the earliest (most confident) fluctuation has the largest weight ``n``.
  With no fluctuation (``n = 0``) the third term is 0.  ``x + y + z = 1`` (checked to within 0.011 so that the
  paper's ``x = y = z = 0.33`` is accepted).  DiSCA needs positive confidences (it divides by ``a`` and ``b``).
* Eq. 2: ``DiDMA = p · DiSCA + q · Computation_Score`` (``p + q = 1``).  Appendix B gives
  ``Computation_Score = optimal_params / n_params`` (:func:`computation_score_params`); as the energy proxy of
  ``1/Energy`` we offer ``reference_cost / measured_cost`` (:func:`computation_score_cost`, e.g. seconds of inference
  per example relative to a budget), the same ratio form, so a model at the budget scores 1.
* Eq. 3: ``NiDMA = u · DiDMA + v · DiSCA(OOD)`` (``u + v = 1``).

AUC failure modes (Section 2.1, Table 1) are detected for ordered model pairs (A, B) with ``AUC_A > AUC_B`` by
:func:`auc_failure_cases`: *tail* (B is more accurate on average over coverage ``(0, max_coverage]``),
*fluctuation* (A's fluctuation penalty, the bracket of Eq. 1's third term, is larger than B's) and *plateau* (A's
wrong answers carry higher MaxProb on average than B's: A's curve is flat at high confidence, the paper's plateau).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.validation import check_vector

__all__ = [
    "SelectiveCurve",
    "Fluctuations",
    "DiSCAResult",
    "TOLERANCES",
    "check_selective_inputs",
    "maxprob",
    "accuracy_coverage_curve",
    "curve_area",
    "auc",
    "aurc",
    "optimal_aurc",
    "e_aurc",
    "accuracy_at_coverage",
    "selective_risk",
    "first_drop_threshold",
    "condense_curve",
    "fluctuations",
    "plateau",
    "tail_accuracy",
    "tail_inversion",
    "auc_failure_cases",
    "disca",
    "disca_table",
    "computation_score_params",
    "computation_score_cost",
    "didma",
    "nidma",
]

#: Tolerance thresholds of Table 2 (worst admissible accuracy, 0.95 … 0.55).
TOLERANCES: tuple[float, ...] = (0.95, 0.90, 0.85, 0.80, 0.75, 0.70, 0.65, 0.60, 0.55)
_WEIGHT_ATOL = 0.011


# --------------------------------------------------------------------------------------------------- validation
def check_selective_inputs(confidence, correct, *, positive: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Validate the ``(confidence, correct)`` pair.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Finite scores, higher = more confident.
    correct : array-like of shape (n,)
        Booleans or 0/1.
    positive : bool, default False
        Also require ``confidence > 0`` (DiSCA divides by MaxProb values).

    Returns
    -------
    (confidence as float64, correct as bool)

    Raises
    ------
    InputValidationError
        Wrong shapes, lengths, NaN/inf, non-binary ``correct``, non-positive confidence when required.
    """
    conf = check_vector(confidence, "confidence").astype(np.float64)
    corr = np.asarray(correct.detach().cpu().numpy() if hasattr(correct, "detach") else correct)
    if corr.ndim != 1:
        raise InputValidationError(f"correct: expected a 1-D array, got shape {corr.shape}")
    if corr.dtype != bool:
        if corr.dtype == object or not np.issubdtype(corr.dtype, np.number):
            raise InputValidationError(f"correct: expected booleans or 0/1, got dtype {corr.dtype}")
        bad = ~np.isin(corr, (0, 1))
        if bad.any():
            raise InputValidationError(
                f"correct: expected booleans or 0/1, found {int(bad.sum())} other value(s), e.g. {corr[bad][0]!r}"
            )
        corr = corr.astype(bool)
    if corr.shape[0] != conf.shape[0]:
        raise InputValidationError(
            f"confidence and correct: expected the same length, got {conf.shape[0]} and {corr.shape[0]}"
        )
    if positive and (conf <= 0).any():
        raise InputValidationError(
            f"confidence: expected positive values (MaxProb in (0, 1]), got minimum {conf.min():.4g}"
        )
    return conf, corr


def _check_weights(name: str, weights: Mapping[str, float]) -> None:
    vals = {k: float(v) for k, v in weights.items()}
    for k, v in vals.items():
        if not math.isfinite(v) or v < 0:
            raise InputValidationError(f"{k}: expected a finite weight >= 0 in {name}, got {v!r}")
    total = sum(vals.values())
    if abs(total - 1.0) > _WEIGHT_ATOL:
        keys = " + ".join(vals)
        raise InputValidationError(f"{name}: expected {keys} = 1, got {total:.4g}")


def maxprob(probs) -> np.ndarray:
    """MaxProb confidence: the largest class probability of each row of ``probs`` (n, k)."""
    from helpers.validation import check_probs

    return check_probs(probs, "probs").max(axis=1).astype(np.float64)


# -------------------------------------------------------------------------------------------------------- curve
@dataclass(frozen=True)
class SelectiveCurve:
    """Accuracy–coverage curve, one point per distinct confidence value (decreasing).

    Attributes
    ----------
    threshold : ndarray (K,)
        Confidence threshold of each point (answer iff confidence >= threshold), strictly decreasing.
    coverage : ndarray (K,)
        Fraction answered, strictly increasing, last = 1.
    accuracy : ndarray (K,)
        Accuracy of the answered examples.
    answered, n_correct : ndarray (K,) of int
        Cumulative counts.
    n : int
        Number of examples.
    """

    threshold: np.ndarray
    coverage: np.ndarray
    accuracy: np.ndarray
    answered: np.ndarray
    n_correct: np.ndarray
    n: int

    @property
    def risk(self) -> np.ndarray:
        """Selective risk (error rate of the answered examples), ``1 − accuracy``."""
        return 1.0 - self.accuracy

    def to_frame(self) -> pd.DataFrame:
        """One row per curve point."""
        return pd.DataFrame(
            dict(
                threshold=self.threshold,
                coverage=self.coverage,
                accuracy=self.accuracy,
                risk=self.risk,
                answered=self.answered,
                n_correct=self.n_correct,
            )
        )


def _curve(conf: np.ndarray, corr: np.ndarray) -> SelectiveCurve:
    order = np.argsort(-conf, kind="stable")
    c, y = conf[order], corr[order]
    # last index of each block of equal confidence
    ends = np.flatnonzero(np.r_[c[1:] != c[:-1], True])
    cum = np.cumsum(y)
    answered = ends + 1
    n_correct = cum[ends]
    return SelectiveCurve(
        threshold=c[ends],
        coverage=answered / c.size,
        accuracy=n_correct / answered,
        answered=answered,
        n_correct=n_correct,
        n=int(c.size),
    )


def accuracy_coverage_curve(confidence, correct) -> SelectiveCurve:
    """Accuracy–coverage curve from confidence ordering (paper 2, Section 2; ties enter as one step).

    Parameters
    ----------
    confidence, correct : array-like of shape (n,)
        See the module's confidence contract.

    Returns
    -------
    SelectiveCurve

    Examples
    --------
    >>> c = accuracy_coverage_curve([0.9, 0.8, 0.8, 0.6], [1, 0, 1, 1])
    >>> c.coverage.tolist(), c.accuracy.round(3).tolist()
    ([0.25, 0.75, 1.0], [1.0, 0.667, 0.75])
    """
    return _curve(*check_selective_inputs(confidence, correct))


def _as_curve(curve_or_inputs) -> SelectiveCurve:
    if isinstance(curve_or_inputs, SelectiveCurve):
        return curve_or_inputs
    raise InputValidationError(
        f"curve: expected a SelectiveCurve (from accuracy_coverage_curve), got {type(curve_or_inputs).__name__}"
    )


def _curve_from(confidence, correct, curve) -> SelectiveCurve:
    if curve is not None:
        if confidence is not None or correct is not None:
            raise InputValidationError("pass either curve= or (confidence, correct), not both")
        return _as_curve(curve)
    if confidence is None or correct is None:
        raise InputValidationError("expected (confidence, correct) arrays or curve=")
    return accuracy_coverage_curve(confidence, correct)


def curve_area(curve: SelectiveCurve, *, lo: float = 0.0, hi: float = 1.0, of: str = "accuracy") -> float:
    """Area under the step curve between coverages ``lo`` and ``hi`` (accuracy ``acc_k`` on ``(c_{k−1}, c_k]``).

    Parameters
    ----------
    curve : SelectiveCurve
    lo, hi : float
        ``0 <= lo < hi <= 1``.
    of : {"accuracy", "risk"}
    """
    curve = _as_curve(curve)
    if not (0.0 <= lo < hi <= 1.0):
        raise InputValidationError(f"lo, hi: expected 0 <= lo < hi <= 1, got lo={lo!r}, hi={hi!r}")
    if of not in ("accuracy", "risk"):
        raise InputValidationError(f"of: expected 'accuracy' or 'risk', got {of!r}")
    values = curve.accuracy if of == "accuracy" else curve.risk
    left = np.r_[0.0, curve.coverage[:-1]]
    overlap = np.clip(np.minimum(curve.coverage, hi) - np.maximum(left, lo), 0.0, None)
    return float(np.sum(overlap * values))


def auc(confidence=None, correct=None, *, curve: SelectiveCurve | None = None) -> float:
    """Area under the accuracy–coverage curve (the AUC that paper 2 critiques), in [0, 1].

    ``AUC = Σ_k (c_k − c_{k−1}) · acc_k``; for distinct confidences, the mean over i of the accuracy of the i most
    confident answers.  Give either the arrays or a precomputed ``curve``.
    """
    return curve_area(_curve_from(confidence, correct, curve))


def aurc(confidence=None, correct=None, *, curve: SelectiveCurve | None = None) -> float:
    """Area under the risk–coverage curve (Geifman et al. 2019), ``= 1 − AUC``; lower is better."""
    return curve_area(_curve_from(confidence, correct, curve), of="risk")


def optimal_aurc(correct) -> float:
    """AURC of the oracle ranking (every correct answer first, one per step): ``(1/n) Σ_{i>m} (i − m)/i``."""
    corr = check_selective_inputs(np.zeros(len(np.asarray(correct))), correct)[1]
    n, m = corr.size, int(corr.sum())
    i = np.arange(m + 1, n + 1, dtype=np.float64)
    return float(np.sum((i - m) / i) / n)


def e_aurc(confidence=None, correct=None, *, curve: SelectiveCurve | None = None) -> float:
    """Excess AURC, ``AURC − AURC*`` (Geifman et al. 2019), ≥ 0; 0 for a perfect ranking without ties."""
    cur = _curve_from(confidence, correct, curve)
    n_correct = int(cur.n_correct[-1])
    flags = np.r_[np.ones(n_correct, bool), np.zeros(cur.n - n_correct, bool)]
    return curve_area(cur, of="risk") - optimal_aurc(flags)


def _check_coverage(coverage: float) -> float:
    c = float(coverage)
    if not (0.0 < c <= 1.0):
        raise InputValidationError(f"coverage: expected a value in (0, 1], got {coverage!r}")
    return c


def accuracy_at_coverage(
    confidence=None, correct=None, *, coverage: float, curve: SelectiveCurve | None = None
):
    """Accuracy of the smallest set of whole tie blocks covering at least ``coverage`` (the step rule)."""
    cur = _curve_from(confidence, correct, curve)
    c = _check_coverage(coverage)
    k = int(np.searchsorted(cur.coverage, c - 1e-12, side="left"))
    return float(cur.accuracy[min(k, cur.coverage.size - 1)])


def selective_risk(
    confidence=None, correct=None, *, coverage: float, curve: SelectiveCurve | None = None
) -> float:
    """Selective risk (error rate of the answered examples) at ``coverage``: ``1 − accuracy_at_coverage``.

    The answered set is the smallest set of whole tie blocks (highest confidence first) whose coverage is at least
    ``coverage``, so the realised coverage may exceed the requested one when a tie block straddles it.
    """
    return 1.0 - accuracy_at_coverage(confidence, correct, coverage=coverage, curve=curve)


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


# -------------------------------------------------------------------------------------------- DiSCA / DiDMA / NiDMA
@dataclass(frozen=True)
class DiSCAResult:
    """DiSCA score (paper 2, Eq. 1) and its parts.

    ``score = first + second − third`` with ``first = x/a``, ``second = y/b``, ``third = z · fluctuation penalty``.
    """

    score: float
    a: float
    b: float
    tolerance: float
    first: float
    second: float
    third: float
    n_fluctuations: int
    fluctuation_magnitude: float
    weights: tuple[float, float, float] = field(default=(1 / 3, 1 / 3, 1 / 3))

    def to_dict(self) -> dict:
        """Plain dict (for tables)."""
        return dict(
            score=self.score,
            a=self.a,
            b=self.b,
            tolerance=self.tolerance,
            first=self.first,
            second=self.second,
            third=self.third,
            n_fluctuations=self.n_fluctuations,
            fluctuation_magnitude=self.fluctuation_magnitude,
        )


def disca(
    confidence,
    correct,
    *,
    tolerance: float = 0.95,
    x: float = 1 / 3,
    y: float = 1 / 3,
    z: float = 1 / 3,
    decimals: int | None = 2,
    c_floor: float = 0.001,
) -> DiSCAResult:
    """DiSCA score, paper 2 Eq. 1: ``x/a + y/b − z · Σ(n−i+1)(d2−d1)/c / Σ(n−i+1)``; higher is better.

    Parameters
    ----------
    confidence : array-like (n,)
        MaxProb values (positive).
    correct : array-like (n,)
    tolerance : float, default 0.95
        Worst admissible accuracy defining ``b`` (Table 2 columns "<0.95" … "<0.55").
    x, y, z : float
        Non-negative weights summing to 1 (within 0.011, so the paper's 0.33 each is accepted).
    decimals, c_floor
        See :func:`fluctuations`.

    Returns
    -------
    DiSCAResult
    """
    _check_weights("DiSCA weights", dict(x=x, y=y, z=z))
    conf, corr = check_selective_inputs(confidence, correct, positive=True)
    cur = _curve(conf, corr)
    a = first_drop_threshold(cur, 1.0)
    b = first_drop_threshold(cur, tolerance)
    fl = fluctuations(curve=cur, decimals=decimals, c_floor=c_floor)
    first, second, third = x / a, y / b, z * fl.penalty
    return DiSCAResult(
        score=float(first + second - third),
        a=a,
        b=b,
        tolerance=float(tolerance),
        first=float(first),
        second=float(second),
        third=float(third),
        n_fluctuations=fl.count,
        fluctuation_magnitude=fl.magnitude,
        weights=(float(x), float(y), float(z)),
    )


def disca_table(
    data: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    tolerances: Sequence[float] = TOLERANCES,
    **kwargs,
) -> pd.DataFrame:
    """Table 2 analogue: DiSCA of each model (rows) for each tolerance (columns ``<0.95`` …).

    ``kwargs`` go to :func:`disca` (weights, decimals, c_floor).
    """
    if not len(data):
        raise InputValidationError("data: expected at least one model")
    rows = {}
    for name, (conf, corr) in data.items():
        rows[name] = {f"<{t:.2f}": disca(conf, corr, tolerance=t, **kwargs).score for t in tolerances}
    return pd.DataFrame.from_dict(rows, orient="index")


def computation_score_params(n_params, *, optimal_params: float = 1_000_000) -> np.ndarray | float:
    """Computation score from parameter counts (paper 2, Appendix B): ``optimal_params / n_params``.

    A model with twice the optimal number of parameters scores 0.5; one with half scores 2.
    """
    n = np.asarray(n_params, dtype=np.float64)
    if not np.all(np.isfinite(n)) or np.any(n <= 0):
        raise InputValidationError(f"n_params: expected positive parameter counts, got {n_params!r}")
    if not (float(optimal_params) > 0 and math.isfinite(float(optimal_params))):
        raise InputValidationError(f"optimal_params: expected a positive number, got {optimal_params!r}")
    out = float(optimal_params) / n
    return float(out) if out.ndim == 0 else out


def computation_score_cost(cost, *, reference_cost: float) -> np.ndarray | float:
    """Computation score from a measured cost (energy proxy, paper 2 Eq. 2 ``1/Energy``): ``reference_cost / cost``.

    ``cost`` is e.g. inference seconds (or joules) per example; ``reference_cost`` the budget of the deployment
    device in the same unit, so a model at the budget scores 1 (the ratio form of Appendix B).
    """
    cst = np.asarray(cost, dtype=np.float64)
    if not np.all(np.isfinite(cst)) or np.any(cst <= 0):
        raise InputValidationError(f"cost: expected positive costs, got {cost!r}")
    if not (float(reference_cost) > 0 and math.isfinite(float(reference_cost))):
        raise InputValidationError(f"reference_cost: expected a positive number, got {reference_cost!r}")
    out = float(reference_cost) / cst
    return float(out) if out.ndim == 0 else out


def _finite(value, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputValidationError(f"{name}: expected finite values, got {value!r}")
    return arr


def didma(disca_score, computation_score, *, p: float = 0.5, q: float = 0.5):
    """DiDMA score, paper 2 Eq. 2: ``p · DiSCA + q · Computation_Score`` with ``p + q = 1`` (scalars or arrays)."""
    _check_weights("DiDMA weights", dict(p=p, q=q))
    out = p * _finite(disca_score, "disca_score") + q * _finite(computation_score, "computation_score")
    return float(out) if out.ndim == 0 else out


def nidma(didma_score, disca_ood, *, u: float = 0.5, v: float = 0.5):
    """NiDMA score, paper 2 Eq. 3: ``u · DiDMA + v · DiSCA(OOD)`` with ``u + v = 1`` (scalars or arrays)."""
    _check_weights("NiDMA weights", dict(u=u, v=v))
    out = u * _finite(didma_score, "didma_score") + v * _finite(disca_ood, "disca_ood")
    return float(out) if out.ndim == 0 else out
