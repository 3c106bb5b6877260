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


def test_setup_outputs_in_blocks_cover_every_set_once(tmp_path, monkeypatch):
    """precompute_outputs' CIFAR units: the blocks (i, n) partition the sets, and each set is built once."""
    from helpers.data.metaset import ShiftSpec
    from helpers.experiments.p5_mde.setups import Setup

    monkeypatch.setenv("HELPERS_CACHE", str(tmp_path))
    specs = [ShiftSpec(f"s{i}", "fit", "corruption", (("fog", 1),), i) for i in range(7)]
    built = []

    def inputs(spec):
        built.append(spec.name)
        return np.full((3, 2), float(spec.seed))

    setup = Setup("toy", specs, inputs=inputs, labels=lambda s: np.zeros(3, int),
                  predictors={"m": lambda x: {"logits": np.asarray(x, np.float32)}},
                  reference_inputs=np.zeros((3, 2)), reference_labels=np.zeros(3, int), key={"toy": 1})  # fmt: skip
    names = [s.name for i in range(3) for s in setup.outputs(block=(i, 3), progress=False)[0]]
    assert sorted(names) == sorted(s.name for s in specs) and sorted(built) == sorted(names)
    _, out, _ = setup.outputs(progress=False)  # read back: nothing built again
    assert len(built) == 7 and out["m"]["s4"]["logits"][0, 0] == 4.0
