"""Reading notebook 05's results: ranks that count distinct measures, and why MDE ranks where it does.

* :func:`distinct_rank`: DoC is ConfScore plus a constant (the reference's accuracy minus its confidence), so
  after the same linear meta-set regression both give identical predictions, R², ρ and MAE; a rank "among
  measures" counts such equivalent measures once (a tie), not twice.
* :func:`mde_decomposition`: with T fixed, ``MDE − log N = AvgEnergy + log mean_n exp(E_n)``
  (:func:`helpers.estimators.mde_parts`): MDE adds the set's mean confidence (AvgEnergy) and a soft maximum of
  its energies (its least confident samples).  Where both parts follow accuracy, they pull MDE in opposite
  directions and cancel; the table gives each part's Spearman ρ with accuracy and the ρ between the parts, per
  setup and backbone, so a reader sees why MDE wins or loses on each setup.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from helpers.errors import InputValidationError

__all__ = ["distinct_rank", "mde_decomposition"]


def distinct_rank(values: pd.Series, name: str, *, ascending: bool = True, tol: float = 1e-9) -> tuple[int, int]:
    """Rank of ``values[name]`` among the *distinct* values of ``values`` (NaN left out).

    Measures whose values agree within ``tol`` are one (a tie), so the rank is 1 + the number of distinct values
    strictly better than ``name``'s, and the count is the number of distinct values.

    Parameters
    ----------
    values : Series
        One value per measure (index: measure names), e.g. MAE (``ascending=True``: lower is better) or R²
        (``ascending=False``).
    name : str
        The measure to rank.
    ascending : bool, keyword-only
    tol : float, keyword-only
        Values within ``tol`` of each other are the same.

    Returns
    -------
    (rank, n_distinct) : tuple of int
    """
    v = values.dropna().astype(float)
    if name not in v.index:
        raise InputValidationError(f"name: {name!r} has no value among {list(values.index)}")
    distinct: list[float] = []
    for x in np.sort(v.to_numpy() if ascending else -v.to_numpy()):
        if not distinct or x - distinct[-1] > tol:
            distinct.append(float(x))
    own = float(v[name]) if ascending else -float(v[name])
    return 1 + sum(d < own - tol for d in distinct), len(distinct)


def mde_decomposition(frame: pd.DataFrame, *, group: Sequence[str] = ("setup", "backbone")) -> pd.DataFrame:
    """Spearman ρ of accuracy with MDE and with its two parts, and between the parts, per group of sets.

    Parameters
    ----------
    frame : DataFrame
        One row per set with ``accuracy``, ``AvgEnergy`` and ``MDE`` (normalised MDE, ``MDE − log N``, at the same
        temperature as AvgEnergy: notebook 05's measure frame) and the ``group`` columns.  The soft-maximum part
        is ``MDE − AvgEnergy = log mean_n exp(E_n)``.

    Returns
    -------
    DataFrame
        Per group: ``n_sets``, ``rho_mde``, ``rho_avg_energy``, ``rho_soft_max`` (each with accuracy) and
        ``rho_parts`` (AvgEnergy with the soft maximum; near −1: the parts cancel).
    """
    missing = sorted({"accuracy", "AvgEnergy", "MDE", *group} - set(frame.columns))
    if missing:
        raise InputValidationError(f"frame: missing columns {missing}")
    rows = []
    for key, sub in frame.dropna(subset=["accuracy", "AvgEnergy", "MDE"]).groupby(list(group)):
        soft = sub.MDE - sub.AvgEnergy
        rows.append({**dict(zip(group, key if isinstance(key, tuple) else (key,))), "n_sets": len(sub),
                     "rho_mde": _rho(sub.MDE, sub.accuracy), "rho_avg_energy": _rho(sub.AvgEnergy, sub.accuracy),
                     "rho_soft_max": _rho(soft, sub.accuracy), "rho_parts": _rho(sub.AvgEnergy, soft)})  # fmt: skip
    return pd.DataFrame(rows)


def _rho(a: pd.Series, b: pd.Series) -> float:
    """Spearman ρ; NaN with fewer than 3 sets or a constant input."""
    if len(a) < 3 or a.nunique() < 2 or b.nunique() < 2:
        return float("nan")
    return float(spearmanr(a, b).statistic)
