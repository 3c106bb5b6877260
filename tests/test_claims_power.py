"""Error rates of the claims' decision rules: every registered claim carries a simulation, the simulations compute
what their rules do (hand-computed cases), the committed table is current, seeds are simulated sharing their units,
and paper 2's noise-aware rules hold in at most 5 % of null suites."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom

from helpers.claims import Claim, Decision, GroupsRule, MeanRule, Power, ShareRule, SimulatedRule
from helpers.claims.power import _stable_seed, power_table, seed_sd_of, simulate
from helpers.claims.refresh import registered, with_registry
from helpers.claims.rules import fails_mask, holds_mask
from helpers.claims.verdicts import apply_power
from helpers.errors import InputValidationError
from helpers.paths import REPO_ROOT

ALL = [c for c, _ in registered()]
FIGURES = REPO_ROOT / "figures"
TABLE = pd.read_csv(FIGURES / "claims_power.csv", keep_default_na=False, na_values=[""]) if (
    FIGURES / "claims_power.csv").exists() else pd.DataFrame(columns=["id"])


def _claim(threshold: float, direction: str) -> Claim:
    return Claim(id="p9.x", paper="P9", statement="s", source="src", quantity="q", threshold=threshold,
                 direction=direction, criterion_source="ours", rationale="r",
                 decide=lambda: Decision(0.0, 0.0, 0.0))  # fmt: skip


@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_every_registered_claim_carries_its_error_rates_simulation(claim):
    assert isinstance(claim.power, Power), f"{claim.id}: no Power on the claim"
    row = TABLE[TABLE["id"] == claim.id]
    assert len(row) == 1, f"{claim.id}: no row in figures/claims_power.csv (python -m helpers claims refresh)"
    r = row.iloc[0]
    assert r["rule"] == claim.power.rule.name
    if r["rule"] != "point":  # a rule without a sampling interval has no error rate; the others have all three
        assert 0.0 <= float(r["size"]) <= float(r["size_high"]) <= 1.0, claim.id
        if str(r["power_at"]) in ("paper", "mei"):
            assert 0.0 <= float(r["power_low"]) <= float(r["power"]) <= 1.0, claim.id
            assert 0.0 <= float(r["false_fail"]) <= float(r["false_fail_high"]) <= 1.0, claim.id
        else:
            assert str(r["needed"]).startswith("n/a"), claim.id
        draws = [int(float(r[f"{k}_draws"])) for k in ("size", "power", "false_fail")]
        # every rate: exact (0), or 2,000 draws, or few draws whose Monte-Carlo interval the verdict reads
        assert all(d == 0 or d >= 2000 or r["rule"] == "simulated" for d in draws), (claim.id, draws)


def test_no_stale_rows_in_the_committed_table():
    ids = {c.id for c in ALL}
    assert set(TABLE["id"]) == ids


def test_paper_2_noise_aware_rules_hold_in_at_most_5_percent_of_null_suites():
    new = TABLE[TABLE["id"].isin(["p2.auc_tail_failure_beyond_noise", "p2.rankings_differ_accuracy_disca_pairs"])]
    assert len(new) == 2 and (new["size_draws"].astype(int) >= 100).all()
    assert (new["size"].astype(float) <= 0.05).all(), new[["id", "size"]]
    old = TABLE[TABLE["id"] == "p2.auc_not_always_better"].iloc[0]
    assert float(old["size"]) > 0.5  # the superseded rule: a bootstrap of a maximum "holds" in null suites


@pytest.mark.parametrize("kind", ["share", "mean"])
def test_the_committed_rows_are_what_the_specs_give_now(kind):
    """Deterministic simulations: a changed spec or record without a regenerated table fails here."""
    for claim in ALL:
        spec = claim.power
        if spec.rule.name != kind:
            continue
        got = simulate(claim, spec, figures=FIGURES, seed=_stable_seed(claim.id))
        row = TABLE.set_index("id").loc[claim.id]
        for col in ("size", "power", "false_fail", "paper_estimate"):
            a, b = float(got[col]), float(row[col])
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9), (claim.id, col, a, b)
        assert str(got["needed"]) == ("" if pd.isna(row["needed"]) else str(row["needed"])), claim.id


def test_share_rule_size_is_the_binomial_sum_over_the_counts_whose_interval_holds():
    claim = _claim(0.5, ">")
    k = np.arange(21)
    low = np.where(k == 0, 0.0, beta.ppf(0.025, np.maximum(k, 1), 21 - k))
    expected = float(binom.pmf(k[low > 0.5], 20, 0.5).sum())  # holds from k = 15 on
    assert low[14] <= 0.5 < low[15]
    holds, fails = ShareRule().outcomes(claim, 0.5, 20, 0.0, np.random.default_rng(0), 100)
    assert holds.value == pytest.approx(expected) and holds.draws == 0  # exact: no Monte-Carlo error
    high = np.where(k == 21, 1.0, beta.ppf(0.975, k + 1, np.maximum(21 - k - 1, 1)))[:21]
    assert fails.value == pytest.approx(float(binom.pmf(k[high <= 0.5], 20, 0.5).sum()))  # fails up to k = 5
    # 10 sets can never show >= 0.8: 10 of 10 has a lower limit of 0.69
    assert ShareRule().outcomes(_claim(0.8, ">="), 1.0, 10, 0.0, np.random.default_rng(0), 100)[0].value == 0.0


def test_mean_rule_on_two_units_holds_when_both_are_positive_a_quarter_of_the_time():
    """The bootstrap of a mean of two values has the interval [min, max]: at a true mean of 0 it says "> 0"
    whenever both draws are positive, P = 1/4 — a 25 % size, not 2.5 %."""
    rate = MeanRule("gain").outcomes(_claim(0.0, ">"), 0.0, 2, 1.0, 0.0, np.random.default_rng(1), 4000)[0]
    assert rate.value == pytest.approx(0.25, abs=0.03) and rate.draws == 4000 and rate.high > rate.value
    big = MeanRule("gain").outcomes(_claim(0.0, ">"), 0.0, 200, 1.0, 0.0, np.random.default_rng(1), 2000)[0]
    assert big.value == pytest.approx(0.025, abs=0.012)


def test_a_maximum_over_many_groups_at_the_threshold_is_biased_upward():
    claim, rng = _claim(0.0, ">"), np.random.default_rng(2)
    one = GroupsRule("max").outcomes(claim, np.zeros(1), 1.0, 0.0, rng, 1000)[0].value
    many = GroupsRule("max").outcomes(claim, np.zeros(20), 1.0, 0.0, rng, 1000)[0].value
    assert one < 0.05 < 0.3 < many


def test_a_seed_spread_inflates_the_size_of_a_one_seed_rule():
    claim, rng = _claim(0.0, ">"), np.random.default_rng(3)
    tight = GroupsRule("mean", groups=1).outcomes(claim, np.zeros(1), 0.01, 0.0, rng, 2000)[0].value
    spread = GroupsRule("mean", groups=1).outcomes(claim, np.zeros(1), 0.01, 0.05, rng, 2000)[0].value
    assert tight < 0.05 and spread > 0.3


def test_seed_sd_is_the_seeds_spread_with_shared_units_and_the_spread_beyond_their_noise_with_redrawn_ones():
    seeds = pd.DataFrame({"id": ["a"], "seed 0": ["1 [0.804, 1.196]"], "seed 1": ["3 [2.804, 3.196]"],
                          "seed 2": ["nan [nan, nan]"]})  # fmt: skip
    within = (0.392 / (2 * 1.959963984540054)) ** 2  # each interval's squared standard error, 0.1²
    assert seed_sd_of(seeds, "a") == pytest.approx(math.sqrt(2.0), rel=1e-6)  # var(1, 3) = 2: the seeds' alone
    assert seed_sd_of(seeds, "a", shared=False) == pytest.approx(math.sqrt(2.0 - within), rel=1e-6)
    assert seed_sd_of(seeds, "b") == 0.0


def test_holds_mask_matches_the_verdict_function():
    from helpers.claims import verdict

    lows, highs = np.array([0.1, -0.2, -0.5, np.nan]), np.array([0.3, 0.1, -0.1, 0.2])
    for d in (">", ">=", "<", "<="):
        got = holds_mask(lows, highs, 0.0, d)
        assert list(got) == [verdict(lo, hi, 0.0, d) == "holds" for lo, hi in zip(lows, highs)]
        got = fails_mask(lows, highs, 0.0, d)
        assert list(got) == [verdict(lo, hi, 0.0, d) == "fails" for lo, hi in zip(lows, highs)]


def _rates(**cols) -> pd.DataFrame:
    base = {"size": 0.0, "size_draws": 0, "size_high": 0.0, "power": 0.9, "power_draws": 0, "power_low": 0.9,
            "false_fail": 0.0, "false_fail_draws": 0, "false_fail_high": 0.0, "power_at": "paper",
            "effect_source": "ours", "needed": "5 seeds", "paper_estimate": float("nan"), "paper_verdict": "",
            "units": "u"}  # fmt: skip
    n = len(next(iter(cols.values())))
    return pd.DataFrame({k: cols.get(k, [v] * n) for k, v in {**base, "id": None}.items()})


def test_a_certified_fail_stays_a_fail_whatever_the_rules_size_and_power():
    """P(fails | the paper's effect) <= 0.05 certifies a fail; size and power say nothing about it."""
    claims = pd.DataFrame({"id": ["a"], "verdict": ["fails"], "notebook": ["nb"], "seeds": [3]})
    out = apply_power(claims, _rates(id=["a"], size=[0.3], size_high=[0.33], power=[0.1], power_low=[0.08],
                                     false_fail=[0.0001], false_fail_high=[0.003]))  # fmt: skip
    assert out.loc[0, "verdict"] == "fails" and out.loc[0, "interval_verdict"] == "fails"
    assert out.loc[0, "needed"] == ""  # a decided claim needs nothing more
    out = apply_power(claims, _rates(id=["a"], false_fail=[0.04], false_fail_high=[0.06]))
    assert out.loc[0, "verdict"] == "undecided"  # the fail is not certified (its rate's upper end above 0.05)


def test_an_uncertified_holds_does_not_hold():
    claims = pd.DataFrame({"id": ["a", "b", "c"], "verdict": ["holds"] * 3, "notebook": ["nb"] * 3, "seeds": [1] * 3})
    out = apply_power(claims, _rates(id=["a", "b", "c"], size=[0.01, 0.12, 0.04], size_high=[0.018, 0.14, 0.07],
                                     size_draws=[2000, 2000, 40], power_low=[0.9, 0.9, 0.3]))  # fmt: skip
    assert list(out["verdict"]) == ["holds", "indistinguishable", "underpowered"]
    assert list(out["interval_verdict"]) == ["holds"] * 3


def test_an_undecided_interval_is_undecided_with_power_and_underpowered_without():
    claims = pd.DataFrame({"id": ["a", "b", "c"], "verdict": ["undecided", "undecided", "untested"],
                           "notebook": ["04_x"] * 3, "seeds": [3] * 3})  # fmt: skip
    out = apply_power(claims, _rates(id=["a", "b", "c"], power=[0.9, 0.5, 0.0], power_low=[0.88, 0.45, 0.0]),
                      cpu_s={"04_x": 803.0})  # fmt: skip
    assert list(out["verdict"]) == ["undecided", "underpowered", "untested"]
    assert out.loc[1, "needed"] == "5 seeds: 2 more runs, 0.4 CPU-h on the 2-core reference"


def test_a_registry_without_a_spec_is_refused():
    claim = _claim(0.0, ">")
    with pytest.raises(InputValidationError, match="no Power spec"):
        power_table([(claim, None)], figures=FIGURES)


def test_a_simulated_rule_runs_the_claims_own_decide():
    claim = Claim(id="p9.y", paper="P9", statement="s", source="src", quantity="q", threshold=0.0, direction=">",
                  criterion_source="ours", rationale="r",
                  decide=lambda x: Decision(float(x), float(x) - 0.1, float(x) + 0.1))  # fmt: skip
    rule = SimulatedRule(lambda rng, kind: {"x": 1.0 if kind == "effect" else 0.0}, "one value", draws=5)
    row = simulate(claim, Power(rule, None, "ours"), figures=FIGURES)
    assert row["size"] == 0.0 and row["power"] == 1.0 and row["false_fail"] == 0.0 and row["size_draws"] == 5
    assert row["size_high"] > 0.05 and not row["decidable"]  # 0 of 5 draws cannot show a size below 0.05


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
    out = with_registry(claims).set_index("id")
    assert out.loc["p5.mano_r2_above_cot", "group"] == "method"
    assert out.loc["p5.mde_lowest_natural_mae", "verdict"] == "untested"


def test_claims_decided_over_seeds_have_their_seeds_rule_simulated():
    from helpers.claims import superseded

    claims = pd.read_csv(FIGURES / "claims.csv", keep_default_na=False, na_values=[""])
    seeded = claims[(claims["seeds"].astype(int) >= 3) & ~superseded(claims) & claims["verdict"].ne("untested")]
    assert len(seeded) >= 20
    units = TABLE.set_index("id").loc[seeded["id"], "units"]
    simulated = units.str.extract(r"^(\d+) seeds x")[0].astype(float)  # the seeds with an outcome (a seed's may be NaN)
    assert (simulated.between(3, seeded.set_index("id")["seeds"].astype(int))).all(), units
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


def _share_seeds_size(*, world_shared: bool, rule_shared: bool, draws: int = 20000) -> float:
    """P(holds) of the seeds rule over 3 seeds that agree (no seed spread), each a share of 10 setups against
    ``>= 0.8``, at a true share of 0.8 (the edge): the units drawn once for all seeds or once per seed."""
    from helpers.claims.rules import exact_bounds
    from helpers.claims.seeds import seeds_interval, shared_seeds_interval

    rng = np.random.default_rng(11)
    k = rng.binomial(10, 0.8, (draws, 1)).repeat(3, axis=1) if world_shared else rng.binomial(10, 0.8, (draws, 3))
    low, high = exact_bounds(10)
    if rule_shared:
        _, lo, hi = shared_seeds_interval(k / 10, low[k], high[k])
    else:
        _, lo, hi = seeds_interval(k / 10, (high[k] - low[k]) / 3.92)
    return float(holds_mask(np.clip(lo, 0, 1), np.clip(hi, 0, 1), 0.8, ">=").mean())


def test_the_shared_units_simulation_catches_what_an_independent_one_misses(tmp_path):
    """A p1.gold_within_bounds-like share (10 sets, >= 0.8, three seeds on the same sets that agree): seeds drawn
    as independent samples of sets make the redrawn-units rule look safe (size ~0.001), but every seed reuses the
    same sets, and then 10 of 10 on all three seeds (P = 0.8^10 = 0.107) is read as "holds": size 0.107.  The
    shared-units rule gives three agreeing seeds one seed's exact interval and keeps its size."""
    independent = _share_seeds_size(world_shared=False, rule_shared=False)
    shared = _share_seeds_size(world_shared=True, rule_shared=False)
    assert independent < 0.01
    assert shared == pytest.approx(0.8**10, abs=0.01)
    assert _share_seeds_size(world_shared=True, rule_shared=True) <= 0.05
    # simulate() itself: the claim declared with shared units is simulated and decided that way
    folder = tmp_path / "fig"
    folder.mkdir()
    pd.DataFrame([{"paper": "P9", "id": "p9.x", "notebook": "nb", "estimate": 1.0, "low": 0.69, "high": 1.0,
                   "setups": 10, "setups_held": 10, "seeds": 3}]).to_csv(folder / "claims.csv", index=False)  # fmt: skip
    cells = {f"seed {s}": "1 [0.692, 1]" for s in range(3)}
    pd.DataFrame([{"paper": "P9", "id": "p9.x", **cells}]).to_csv(folder / "claims_seeds.csv", index=False)
    claim = _claim(0.8, ">=")
    row = simulate(claim, Power(ShareRule(), 0.9, "ours", seeds=True), figures=folder, draws=4000)
    assert row["units"].startswith("3 seeds x 10 setups") and row["size_high"] <= 0.05
    redrawn = simulate(claim, Power(ShareRule(), 0.9, "ours", seeds=True, units="redrawn"), figures=folder,
                       draws=4000)  # fmt: skip
    assert redrawn["size"] < 0.01 and redrawn["units"].endswith("units redrawn")


def test_every_published_verdict_is_what_its_interval_and_rates_certify():
    """No row whose interval decides and whose rate passes is shown as anything but holds or fails, and no holds or
    fails stands without its rate (figures/claims.csv against helpers.claims.verdicts.certify)."""
    from helpers.claims.verdicts import certify

    claims = pd.read_csv(FIGURES / "claims.csv", keep_default_na=False, na_values=[""])
    for r in claims.itertuples():
        expected = certify(r.interval_verdict, size=r.size, size_high=r.size_high, power_low=r.power_low,
                           false_fail_high=r.false_fail_high)  # fmt: skip
        assert r.verdict == expected, (r.id, r.interval_verdict, r.verdict, expected)
        if r.verdict in ("holds", "fails"):
            assert (r.size_high if r.verdict == "holds" else r.false_fail_high) <= 0.05, r.id
        assert r.verdict in ("undecided", "underpowered") or pd.isna(r.needed) or not str(r.needed).strip(), r.id
