"""Size and power of the claims' decision rules: every registered claim has a simulation, the simulations compute
what their rules do (hand-computed cases), the committed table is current, and paper 2's noise-aware rules hold in
at most 5 % of null suites."""

from __future__ import annotations

import importlib
import math
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom

from helpers.claims import Claim, Decision
from helpers.claims_power import (
    GroupsRule,
    MeanRule,
    Power,
    ShareRule,
    SimulatedRule,
    _seed_sd,
    _stable_seed,
    apply_power,
    holds_mask,
    simulate,
)
from helpers.errors import InputValidationError
from helpers.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
claims_power_script = importlib.import_module("claims_power")
REGISTRIES = claims_power_script.registries()
ALL = [(c, specs) for claims, specs in REGISTRIES.values() for c in claims]
FIGURES = REPO_ROOT / "figures"
TABLE = pd.read_csv(FIGURES / "claims_power.csv", keep_default_na=False, na_values=[""]) if (
    FIGURES / "claims_power.csv").exists() else pd.DataFrame(columns=["id"])


def _claim(threshold: float, direction: str) -> Claim:
    return Claim(id="p9.x", paper="P9", statement="s", source="src", quantity="q", threshold=threshold,
                 direction=direction, criterion_source="ours", rationale="r",
                 decide=lambda: Decision(0.0, 0.0, 0.0))  # fmt: skip


@pytest.mark.parametrize("claim,specs", ALL, ids=[c.id for c, _ in ALL])
def test_every_registered_claim_has_a_size_and_a_power_simulation(claim, specs):
    assert claim.id in specs, f"{claim.id}: no Power spec in its package's power.py"
    assert isinstance(specs[claim.id], Power)
    row = TABLE[TABLE["id"] == claim.id]
    assert len(row) == 1, f"{claim.id}: no row in figures/claims_power.csv (run scripts/claims_power.py)"
    r = row.iloc[0]
    assert r["rule"] == specs[claim.id].rule.name
    if r["rule"] != "point":  # a rule without a sampling interval has no error rate; the others have both
        assert 0.0 <= float(r["size"]) <= 1.0, claim.id
        assert (0.0 <= float(r["power"]) <= 1.0) or str(r["needed"]).startswith("n/a"), claim.id


def test_no_stale_rows_in_the_committed_table():
    ids = {c.id for c, _ in ALL}
    assert set(TABLE["id"]) == ids


def test_paper_2_noise_aware_rules_hold_in_at_most_5_percent_of_null_suites():
    new = TABLE[TABLE["id"].isin(["p2.auc_tail_failure_beyond_noise", "p2.rankings_differ_accuracy_disca_pairs"])]
    assert len(new) == 2 and (new["draws"].astype(int) >= 100).all()
    assert (new["size"].astype(float) <= 0.05).all(), new[["id", "size"]]
    old = TABLE[TABLE["id"] == "p2.auc_not_always_better"].iloc[0]
    assert float(old["size"]) > 0.5  # the superseded rule: a bootstrap of a maximum "holds" in null suites


@pytest.mark.parametrize("kind", ["share", "mean"])
def test_the_committed_rows_are_what_the_specs_give_now(kind):
    """Deterministic simulations: a changed spec or record without a regenerated table fails here."""
    for claim, specs in ALL:
        spec = specs[claim.id]
        if spec.rule.name != kind:
            continue
        got = simulate(claim, spec, figures=FIGURES, draws=int(TABLE.set_index("id").loc[claim.id, "draws"]),
                       seed=_stable_seed(claim.id))
        row = TABLE.set_index("id").loc[claim.id]
        for col in ("size", "power", "paper_estimate"):
            a, b = float(got[col]), float(row[col])
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9), (claim.id, col, a, b)
        assert str(got["needed"]) == ("" if pd.isna(row["needed"]) else str(row["needed"])), claim.id


def test_share_rule_size_is_the_binomial_sum_over_the_counts_whose_interval_holds():
    claim = _claim(0.5, ">")
    k = np.arange(21)
    low = np.where(k == 0, 0.0, beta.ppf(0.025, np.maximum(k, 1), 21 - k))
    expected = float(binom.pmf(k[low > 0.5], 20, 0.5).sum())  # holds from k = 15 on
    assert low[14] <= 0.5 < low[15]
    assert ShareRule().holds_rate(claim, 0.5, 20, 0.0, np.random.default_rng(0), 100) == pytest.approx(expected)
    # 10 sets can never show >= 0.8: 10 of 10 has a lower limit of 0.69
    assert ShareRule().holds_rate(_claim(0.8, ">="), 1.0, 10, 0.0, np.random.default_rng(0), 100) == 0.0


def test_mean_rule_on_two_units_holds_when_both_are_positive_a_quarter_of_the_time():
    """The bootstrap of a mean of two values has the interval [min, max]: at a true mean of 0 it says "> 0"
    whenever both draws are positive, P = 1/4 — a 25 % size, not 2.5 %."""
    rate = MeanRule("gain").holds_rate(_claim(0.0, ">"), 0.0, 2, 1.0, 0.0, np.random.default_rng(1), 4000)
    assert rate == pytest.approx(0.25, abs=0.03)
    big = MeanRule("gain").holds_rate(_claim(0.0, ">"), 0.0, 200, 1.0, 0.0, np.random.default_rng(1), 2000)
    assert big == pytest.approx(0.025, abs=0.012)


def test_a_maximum_over_many_groups_at_the_threshold_is_biased_upward():
    claim, rng = _claim(0.0, ">"), np.random.default_rng(2)
    one = GroupsRule("max").holds_rate(claim, np.zeros(1), 1.0, 0.0, rng, 1000)
    many = GroupsRule("max").holds_rate(claim, np.zeros(20), 1.0, 0.0, rng, 1000)
    assert one < 0.05 < 0.3 < many


def test_a_seed_spread_inflates_the_size_of_a_one_seed_rule():
    claim, rng = _claim(0.0, ">"), np.random.default_rng(3)
    tight = GroupsRule("mean", groups=1).holds_rate(claim, np.zeros(1), 0.01, 0.0, rng, 2000)
    spread = GroupsRule("mean", groups=1).holds_rate(claim, np.zeros(1), 0.01, 0.05, rng, 2000)
    assert tight < 0.05 and spread > 0.3


def test_seed_sd_is_the_spread_beyond_each_seeds_own_noise():
    seeds = pd.DataFrame({"id": ["a"], "seed 0": ["1 [0.804, 1.196]"], "seed 1": ["3 [2.804, 3.196]"],
                          "seed 2": ["nan [nan, nan]"]})  # fmt: skip
    within = (0.392 / (2 * 1.959963984540054)) ** 2  # each interval's squared standard error, 0.1²
    assert _seed_sd(seeds, "a") == pytest.approx(math.sqrt(2.0 - within), rel=1e-6)  # var(1, 3) = 2
    assert _seed_sd(seeds, "b") == 0.0


def test_holds_mask_matches_the_verdict_function():
    from helpers.claims import verdict

    lows, highs = np.array([0.1, -0.2, -0.5, np.nan]), np.array([0.3, 0.1, -0.1, 0.2])
    for d in (">", ">=", "<", "<="):
        got = holds_mask(lows, highs, 0.0, d)
        assert list(got) == [verdict(lo, hi, 0.0, d) == "holds" for lo, hi in zip(lows, highs)]


def test_apply_power_marks_undecidable_rules_underpowered_and_keeps_the_interval_verdict():
    claims = pd.DataFrame({"id": ["a", "b", "c"], "verdict": ["holds", "fails", "untested"]})
    power = pd.DataFrame({"id": ["a", "b", "c"], "size": [0.01, 0.3, 0.0], "power": [0.9, 0.9, 0.0],
                          "needed": ["", "", ""], "decidable": ["True", "False", "False"]})  # as read back  # fmt: skip
    out = apply_power(claims, power).set_index("id")
    assert out.loc["a", "verdict"] == "holds" and out.loc["b", "verdict"] == "underpowered"
    assert out.loc["b", "interval_verdict"] == "fails" and out.loc["c", "verdict"] == "untested"


def test_a_registry_without_a_spec_is_refused():
    claim = _claim(0.0, ">")
    with pytest.raises(InputValidationError, match="without a Power spec"):
        claims_power_script.power_table({"p9": ((claim,), {})}, figures=FIGURES)


def test_a_simulated_rule_runs_the_claims_own_decide():
    claim = Claim(id="p9.y", paper="P9", statement="s", source="src", quantity="q", threshold=0.0, direction=">",
                  criterion_source="ours", rationale="r",
                  decide=lambda x: Decision(float(x), float(x) - 0.1, float(x) + 0.1))  # fmt: skip
    rule = SimulatedRule(lambda rng, kind: {"x": 1.0 if kind == "effect" else 0.0}, "one value", draws=5)
    row = simulate(claim, Power(rule, None, "ours"), figures=FIGURES)
    assert row["size"] == 0.0 and row["power"] == 1.0 and row["decidable"]


def test_paper_2_discordance_rule_stays_quiet_in_small_null_suites():
    """A quick null check at a small sample (the committed table has the default profile's)."""
    from helpers.experiments.p2_selective.claims import CLAIMS
    from helpers.experiments.p2_selective.power import world

    claim = {c.id: c for c in CLAIMS}["p2.auc_tail_failure_beyond_noise"]
    rng = np.random.default_rng(4)
    verdicts = [claim.run(splits=world(rng, "null", family="tail", n=300), n_boot=100)[1] for _ in range(4)]
    assert "holds" not in verdicts


def test_publishing_keeps_the_seeds_decided_with_the_published_run(tmp_path):
    """The seeds table is carried into claims.csv for the claims whose seed-0 estimate is the published one."""
    from helpers.publish.publishing import published_stability

    pd.DataFrame({"id": ["a", "b"], "seeds_held": [2, 0], "seeds": [3, 3], "verdicts": ["x", "y"],
                  "seed 0": ["0.5 [0.4, 0.6]", "0.7 [0.6, 0.8]"]}).to_csv(tmp_path / "claims_seeds.csv", index=False)
    claims = pd.DataFrame({"id": ["a", "b"], "estimate": [0.5, 0.9]})
    kept = published_stability(tmp_path, claims)
    assert list(kept["id"]) == ["a"]  # b's run changed: its seeds are not this run's


def test_the_registry_fills_groups_supersessions_and_untested_rows():
    claims = pd.DataFrame({"paper": ["P5"], "id": ["p5.mano_r2_above_cot"], "verdict": ["fails"], "own": [False],
                           "exploratory": [False]})  # fmt: skip
    out = claims_power_script.with_registry(claims).set_index("id")
    assert out.loc["p5.mano_r2_above_cot", "group"] == "method"
    assert out.loc["p5.mde_lowest_natural_mae", "verdict"] == "untested"


def test_claims_decided_over_seeds_have_their_seeds_rule_simulated():
    from helpers.claims import superseded

    claims = pd.read_csv(FIGURES / "claims.csv", keep_default_na=False, na_values=[""])
    seeded = claims[(claims["seeds"].astype(int) >= 3) & ~superseded(claims) & claims["verdict"].ne("untested")]
    assert len(seeded) >= 20
    units = TABLE.set_index("id").loc[seeded["id"], "units"]
    assert units.str.startswith(tuple(f"{n} seeds x" for n in seeded["seeds"].astype(int).unique())).all(), units
    assert (claims.set_index("id").loc[seeded["id"], "units"] == units).all()  # claims.csv quotes the same units


def _seeded_figures(folder, seeds: int):
    """A figures folder with one mean claim (seeds' estimates 0.9, 1.0, 1.1 with se 0.05 each) on ``seeds`` seeds."""
    folder.mkdir()
    pd.DataFrame([{"paper": "P9", "id": "p9.x", "notebook": "nb", "estimate": 1.0, "low": 0.902, "high": 1.098,
                   "setups": 1, "seeds": seeds}]).to_csv(folder / "claims.csv", index=False)  # fmt: skip
    cells = {"seed 0": "1 [0.902, 1.098]", "seed 1": "0.9 [0.802, 0.998]", "seed 2": "1.1 [1.002, 1.198]"}
    pd.DataFrame([{"paper": "P9", "id": "p9.x", **cells}]).to_csv(folder / "claims_seeds.csv", index=False)
    return folder


def test_the_seeds_rule_keeps_its_size_where_a_one_seed_rule_loses_it(tmp_path):
    """A seed spread (sd 0.1) twice the rule's own se: decided on one seed the rule says "holds" at the edge far
    more than 5 % of the time; decided over three seeds (the seed a resampling level) it does not."""
    claim, spec = _claim(0.0, ">"), Power(GroupsRule("mean", groups=1), 0.5, "ours", seeds=True)
    one = simulate(claim, spec, figures=_seeded_figures(tmp_path / "one", 1), draws=2000)
    three = simulate(claim, spec, figures=_seeded_figures(tmp_path / "three", 3), draws=2000)
    assert three["units"].startswith("3 seeds x") and not one["units"].startswith("3 seeds")
    assert one["size"] > 0.1 and three["size"] <= 0.05
    assert three["power"] >= 0.8 and three["decidable"]
