"""Claims decided over seeds (:mod:`helpers.claims.seeds`): the interval, its coverage with shared and redrawn units,
and claims.csv's use of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.claims import CLAIM_COLUMNS
from helpers.claims.seeds import (
    criterion_of,
    decide_over_seeds,
    seed_cells,
    seeds_decision,
    seeds_interval,
    shared_seeds_interval,
)
from helpers.claims.verdicts import claims_csv
from helpers.errors import InputValidationError


def test_seeds_decision_by_hand():
    # redrawn units, spread between seeds (sd 0.2) larger than each seed's se (0.1): ± t(2) · 0.2 / √3 = ± 0.4968
    d = seeds_decision([0.8, 1.0, 1.2], [0.604, 0.804, 1.004], [0.996, 1.196, 1.396], shared=False)
    assert d.estimate == pytest.approx(1.0)
    assert (d.low, d.high) == pytest.approx((1.0 - 0.49683, 1.0 + 0.49683), abs=1e-4)
    # agreeing seeds keep their own sampling: se² = mean(0.1², 0.2², 0.2²) = 0.03; ± 4.3027 · √(0.03 / 3)
    d = seeds_decision([1.0, 1.0, 1.0], [0.804, 0.608, 0.608], [1.196, 1.392, 1.392], shared=False)
    assert (d.low, d.high) == pytest.approx((1.0 - 0.43027, 1.0 + 0.43027), abs=2e-4)
    assert d.setups == 3
    # shared units: the seeds' own half-widths (0.196 each) in quadrature with t(2)² · 0.2² / 3 -> ± 0.5342
    d = seeds_decision([0.8, 1.0, 1.2], [0.604, 0.804, 1.004], [0.996, 1.196, 1.396])
    half = (0.196**2 + 4.302653**2 * 0.04 / 3) ** 0.5
    assert (d.low, d.high) == pytest.approx((1.0 - half, 1.0 + half), abs=1e-4)
    # agreeing seeds on shared units are one run: rms of the half-widths, asymmetric ends kept
    d = seeds_decision([1.0, 1.0, 1.0], [0.9, 0.8, 0.8], [1.05, 1.05, 1.05])
    assert (d.low, d.high) == pytest.approx((1.0 - (0.01 / 3 + 0.08 / 3) ** 0.5, 1.05), abs=1e-9)


def test_seeds_decision_leaves_out_missing_seeds_and_refuses_bad_input():
    d = seeds_decision([0.5, float("nan"), 0.5], [0.4, 0.1, 0.4], [0.6, 0.9, 0.6])
    assert d.setups == 2 and np.isfinite(d.low)
    assert np.isnan(seeds_decision([0.5], [0.4], [0.6]).low)
    with pytest.raises(InputValidationError, match="lows, highs"):
        seeds_decision([0.5, 0.5], [0.6, 0.4], [0.4, 0.6])
    with pytest.raises(InputValidationError, match="estimates, lows, highs"):
        seeds_decision([0.5, 0.5], [0.4], [0.6, 0.6])


def _coverage(rule: str, world: str, spread: float, seeds: int, draws: int = 4000) -> float:
    """Coverage of the mean over seeds by ``rule`` ("shared" / "redrawn") when the units are drawn once for all
    seeds (``world`` "shared") or once per seed ("redrawn"); each seed's own interval is estimate ± 1.96 se."""
    rng = np.random.default_rng(7)
    se = 1.0
    units = rng.normal(0, se, (draws, 1 if world == "shared" else seeds))
    y = units + rng.normal(0, spread, (draws, seeds))
    if rule == "shared":
        _, low, high = shared_seeds_interval(y, y - 1.96 * se, y + 1.96 * se)
    else:
        _, low, high = seeds_interval(y, np.full_like(y, se))
    return float(((low <= 0) & (high >= 0)).mean())


@pytest.mark.parametrize("seeds", [3, 5, 10])
@pytest.mark.parametrize("spread", [0.0, 1.0, 3.0, 20.0])
def test_each_seeds_rule_covers_nominally_in_the_world_it_is_built_for(spread, seeds):
    """Seed spreads of 0 to 20 times each seed's own standard error (module docstring of helpers.claims.seeds)."""
    assert _coverage("shared", "shared", spread, seeds) >= 0.94
    assert _coverage("redrawn", "redrawn", spread, seeds) >= 0.94


def test_the_redrawn_units_rule_under_covers_when_the_seeds_share_their_units():
    """Dividing the units' error by the seeds when every seed reuses the same units: 2.262 / √10 se wide at ten
    agreeing seeds, about 52 % coverage; the shared-units rule keeps 95 %."""
    assert _coverage("redrawn", "shared", 0.0, 10) == pytest.approx(0.52, abs=0.03)
    assert _coverage("shared", "shared", 0.0, 10) >= 0.94


def test_a_hierarchical_percentile_bootstrap_under_covers_at_three_seeds():
    """Why the seeds level is a t interval: resampling 3 seeds with replacement (then each seed's sampling) covers
    far less than 95 % when the seed spread dominates (module docstring of helpers.claims_seeds)."""
    rng = np.random.default_rng(0)
    draws, boots, seeds, spread, se = 2000, 500, 3, 1.0, 0.1
    y = rng.normal(0, spread, (draws, seeds)) + rng.normal(0, se, (draws, seeds))
    pick = rng.integers(0, seeds, (draws, boots, seeds))
    reps = np.take_along_axis(np.broadcast_to(y[:, None, :], pick.shape), pick, 2) + rng.normal(0, se, pick.shape)
    low, high = np.quantile(reps.mean(2), [0.025, 0.975], axis=1)
    assert float(((low <= 0) & (high >= 0)).mean()) < 0.85
    _, low, high = seeds_interval(y, np.full_like(y, se))
    assert float(((low <= 0) & (high >= 0)).mean()) >= 0.94


def _claims() -> pd.DataFrame:
    rows = [
        {"paper": "P9", "id": "p9.a", "criterion": "q >= 0.5 (95 % interval)", "estimate": 0.9, "low": 0.8,
         "high": 1.0, "verdict": "holds", "own": False, "exploratory": False, "superseded_by": "", "group": "paper"},
        {"paper": "P9", "id": "p9.b", "criterion": "q < 0 (95 % interval)", "estimate": -1.0, "low": -1.5,
         "high": -0.5, "verdict": "holds", "own": False, "exploratory": False, "superseded_by": "p9.a",
         "group": "paper"},
        {"paper": "P9", "id": "p9.c", "criterion": "q >= 0.5 (95 % interval)", "estimate": 0.9, "low": 0.8,
         "high": 1.0, "verdict": "holds", "own": False, "exploratory": False, "superseded_by": "", "group": "paper"},
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _stability() -> pd.DataFrame:
    return pd.DataFrame([
        {"paper": "P9", "id": "p9.a", "seeds_held": 2, "seeds": 3, "verdicts": "seed 0: holds; seed 1: fails; "
         "seed 2: holds", "changes": True, "seed 0": "0.9 [0.8, 1]", "seed 1": "0.1 [0, 0.2]", "seed 2": "0.9 [0.8, 1]"},
        {"paper": "P9", "id": "p9.b", "seeds_held": 3, "seeds": 3, "verdicts": "", "changes": False,
         "seed 0": "-1 [-1.5, -0.5]", "seed 1": "3 [2, 4]", "seed 2": "3 [2, 4]"},
        {"paper": "P9", "id": "p9.c", "seeds_held": 2, "seeds": 2, "verdicts": "", "changes": False,
         "seed 0": "0.9 [0.8, 1]", "seed 1": "0.1 [0, 0.2]", "seed 2": ""},
    ])  # fmt: skip


def test_claims_with_three_seeds_are_decided_over_them_and_keep_the_runs_own_outcome():
    out = decide_over_seeds(_claims(), _stability()).set_index("id")
    a = seeds_decision([0.9, 0.1, 0.9], [0.8, 0.0, 0.8], [1.0, 0.2, 1.0])
    assert out.loc["p9.a", "estimate"] == pytest.approx(a.estimate) and out.loc["p9.a", "low"] == pytest.approx(a.low)
    assert out.loc["p9.a", "verdict"] == "undecided" and out.loc["p9.a", "run_verdict"] == "holds"
    assert out.loc["p9.a", "run_estimate"] == 0.9
    # a superseded rule keeps its history; two seeds are too few
    assert out.loc["p9.b", "estimate"] == -1.0 and out.loc["p9.b", "verdict"] == "holds"
    assert out.loc["p9.c", "estimate"] == 0.9 and out.loc["p9.c", "verdict"] == "holds"


def test_claims_csv_re_applied_to_its_own_output_gives_the_same_table():
    once = claims_csv(_claims(), _stability())
    assert list(once.columns) == CLAIM_COLUMNS
    twice = claims_csv(once, _stability())
    pd.testing.assert_frame_equal(once, twice)
    assert once.set_index("id").loc["p9.a", "interval_verdict"] == "undecided"


def test_seed_cells_and_criterion_parsing():
    cells = seed_cells(_stability().iloc[2])
    assert cells["seed"].tolist() == [0, 1] and cells["high"].tolist() == [1.0, 0.2]
    assert criterion_of("mean width of the bounds <= 0.2 (95 % interval)") == ("<=", 0.2)
    with pytest.raises(InputValidationError, match="criterion"):
        criterion_of("no criterion here")


def test_a_share_decided_over_seeds_stays_within_0_and_1():
    claims = pd.DataFrame([{"paper": "P9", "id": "p9.s", "criterion": "share >= 0.8 (95 % interval)",
                            "estimate": 1.0, "low": 0.69, "high": 1.0, "verdict": "undecided", "setups_held": 10,
                            "setups": 10, "superseded_by": ""}])  # fmt: skip
    stability = pd.DataFrame([{"paper": "P9", "id": "p9.s", "seed 0": "1 [0.69, 1]", "seed 1": "0.9 [0.555, 0.997]",
                               "seed 2": "1 [0.69, 1]"}])  # fmt: skip
    row = decide_over_seeds(claims, stability).iloc[0]
    assert row["high"] == 1.0 and 0.0 <= row["low"] < row["estimate"] < 1.0
    unclipped = seeds_decision([1.0, 0.9, 1.0], [0.69, 0.555, 0.69], [1.0, 0.997, 1.0])
    assert unclipped.high > 1.0 and row["low"] == pytest.approx(max(unclipped.low, 0.0))
