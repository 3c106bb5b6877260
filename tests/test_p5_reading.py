"""Notebook 05's reading helpers: ranks over distinct measures (DoC = ConfScore + constant) and MDE's parts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import mde_parts
from helpers.experiments.p5_mde.reading import distinct_rank, mde_decomposition


def test_distinct_rank_counts_equivalent_measures_once():
    mae = pd.Series({"ConfScore": 2.0, "DoC": 2.0, "MDE": 3.0, "ATC": 1.0, "COT": np.nan})
    assert distinct_rank(mae, "MDE") == (3, 3)  # ATC, then ConfScore = DoC (one), then MDE
    assert distinct_rank(mae, "DoC") == (2, 3) == distinct_rank(mae, "ConfScore")
    r2 = pd.Series({"ConfScore": 0.9, "DoC": 0.9 + 1e-12, "MDE": 0.95})
    assert distinct_rank(r2, "MDE", ascending=False) == (1, 2)
    assert distinct_rank(r2, "DoC", ascending=False) == (2, 2)
    with pytest.raises(InputValidationError, match="COT"):
        distinct_rank(mae, "COT")


def test_mde_decomposition_sees_the_parts_cancel():
    """Sets whose logits differ by a constant shift only: AvgEnergy rises with the shift, the soft maximum falls by
    the same amount (ρ between the parts = -1) and MDE is constant (its ρ with accuracy is NaN)."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 5))
    rows = []
    for i, c in enumerate(np.linspace(0, 3, 6)):
        p = mde_parts(z + c)
        rows.append({"setup": "s", "backbone": "b", "accuracy": 0.5 + 0.05 * i, "AvgEnergy": p["avg_energy"],
                     "MDE": p["mde_normalized"]})  # fmt: skip
    out = mde_decomposition(pd.DataFrame(rows)).iloc[0]
    assert out.n_sets == 6
    assert out.rho_avg_energy == pytest.approx(1.0) and out.rho_soft_max == pytest.approx(-1.0)
    assert out.rho_parts == pytest.approx(-1.0)
    with pytest.raises(InputValidationError, match="MDE"):
        mde_decomposition(pd.DataFrame(rows).drop(columns="MDE"))
