"""Input validation and the accuracy-coverage curve of selective answering: AUC, AURC, E-AURC, accuracy and
risk at a coverage (paper 2, Sec. 2; Geifman et al. 2019).  The tie rule and the step-function reading are stated
in the package docstring."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.validation import check_vector

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
