"""Tests of notebook 01's bracketing table: which gold accuracies the bounds' recalls can bracket."""

from __future__ import annotations

import pandas as pd
import pytest

from helpers.errors import InputValidationError
from helpers.experiments.p1_bounds.analysis import PAPER_T5_RECALLS, bracketing_table, paper_bracketing_table

# Paper 1's printed T5 bounds (Tables 2 and 3: lower, upper), an independent reference for the identity
PRINTED = {
    "MCD1": (0.560, 0.700), "MCD2": (0.224, 0.361), "COGS": (0.902, 0.921), "TOP": (0.660, 0.823),
    "POS-Brown": (0.378, 0.862), "POS-COGS": (0.862, 0.879), "POS-WSJ": (0.395, 0.862),
}


def test_paper_rows_rebuild_the_printed_bounds():
    t = paper_bracketing_table().set_index("set")
    assert set(t.index) == set(PAPER_T5_RECALLS)
    for name, (lower, upper) in PRINTED.items():
        assert t.loc[name, "lower"] == pytest.approx(lower, abs=0.002)
        assert t.loc[name, "upper"] == pytest.approx(upper, abs=0.002)
    # the paper's one T5 miss on these sets (POS-COGS, gold .857 below the lower bound) is the one outside [g_min, g_max]
    printed = t.loc[list(PRINTED)]
    assert list(printed.index[~printed["within"]]) == ["POS-COGS"]
    assert t.loc["POS-COGS", "gold_short_of_g_min"] == pytest.approx(0.893 - 0.857, abs=0.002)
    assert t.loc["COGS", "g_min"] == pytest.approx(0.031 / (0.031 + 0.015))


def test_run_rows_hand_made():
    table1 = pd.DataFrame([
        {"task": "t", "set": "A", "shift": "OOD", "Upper CR": 0.95, "Upper IR": 0.6, "Lower CR": 0.8, "Lower IR": 0.9},
        {"task": "t", "set": "B", "shift": "ID", "Upper CR": 0.95, "Upper IR": 0.6, "Lower CR": 0.8, "Lower IR": 0.9},
    ])
    # A: gold .2 -> lower = .2 * .8 + .8 * .1 = .24 > .2 (g_min = 1/3, short by 2/15); B: gold .5 -> inside
    summary = pd.DataFrame([
        {"task": "t", "set": "A", "gold": 0.2, "lower": 0.24, "upper": 0.51},
        {"task": "t", "set": "B", "gold": 0.5, "lower": 0.45, "upper": 0.675},
    ])
    t = bracketing_table(table1, summary).set_index("set")
    assert t.loc["A", "g_min"] == pytest.approx(1 / 3) and t.loc["A", "g_max"] == pytest.approx(8 / 9)
    assert not t.loc["A", "within"] and t.loc["B", "within"]
    assert t.loc["A", "gold_short_of_g_min"] == pytest.approx(2 / 15)
    assert t.loc["B", "gold_short_of_g_min"] == 0
    assert (t["source"] == "this run").all()


def test_missing_recall_columns_fail_clearly():
    with pytest.raises(InputValidationError, match="Lower IR"):
        bracketing_table(pd.DataFrame({"task": [], "set": []}), pd.DataFrame())
