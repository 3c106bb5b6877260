"""DiSCA, DiDMA and NiDMA (paper 2, Sec. 3, Eq. 1-3, Appendix B) and the computation scores they weigh in."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.selective.curve import TOLERANCES, _check_weights, _curve, check_selective_inputs
from helpers.selective.diagnostics import first_drop_threshold, fluctuations


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


def _ratio(numerator, num_name: str, values, name: str, expected: str) -> np.ndarray | float:
    """``numerator / values`` for a positive finite scalar over positive finite values (a float for a scalar)."""
    v = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise InputValidationError(f"{name}: expected {expected}, got {values!r}")
    if not (float(numerator) > 0 and math.isfinite(float(numerator))):
        raise InputValidationError(f"{num_name}: expected a positive number, got {numerator!r}")
    out = float(numerator) / v
    return float(out) if out.ndim == 0 else out


def computation_score_params(n_params, *, optimal_params: float = 1_000_000) -> np.ndarray | float:
    """Computation score from parameter counts (paper 2, Appendix B): ``optimal_params / n_params``.

    A model with twice the optimal number of parameters scores 0.5; one with half scores 2.
    """
    return _ratio(optimal_params, "optimal_params", n_params, "n_params", "positive parameter counts")


def computation_score_cost(cost, *, reference_cost: float) -> np.ndarray | float:
    """Computation score from a measured cost (energy proxy, paper 2 Eq. 2 ``1/Energy``): ``reference_cost / cost``.

    ``cost`` is e.g. inference seconds (or joules) per example; ``reference_cost`` the budget of the deployment
    device in the same unit, so a model at the budget scores 1 (the ratio form of Appendix B).
    """
    return _ratio(reference_cost, "reference_cost", cost, "cost", "positive costs")


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
