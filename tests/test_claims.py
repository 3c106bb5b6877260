"""The claims registry: every registered claim can hold and can fail, verdicts come from intervals, records read back."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from helpers.claims import (
    CLAIM_COLUMNS,
    Claim,
    Decision,
    bootstrap_decision,
    clopper_pearson,
    collect_claims,
    decide_and_record,
    record_claim,
    share_decision,
    stability_table,
    tally,
    verdict,
)
from helpers.claims.refresh import registered
from helpers.claims.verdicts import claims_csv
from helpers.errors import HelpersError, InputValidationError
from helpers.paths import REPO_ROOT

ALL = [c for c, _ in registered()]


def test_every_claim_id_is_unique_and_has_its_words_source_and_criterion():
    ids = [c.id for c in ALL]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for c in ALL:
        assert c.statement.strip() and c.source.strip() and c.quantity.strip() and c.rationale.strip(), c.id
        assert c.criterion_source in ("paper", "ours") and c.direction in (">=", ">", "<=", "<")
        # the benchmark's hypotheses are its own, never a paper's; the ranking notebook has both kinds
        assert c.own == (c.paper == "benchmark") or c.paper == "ranking", c.id
        assert c.id.split(".")[0] in ("p1", "p2", "p3", "p4", "p5", "p8", "bench")


@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_every_claim_holds_on_its_holding_case_and_fails_on_its_failing_case(claim):
    """A claim that cannot fail is not a claim: each one decides a plausible frame each way (an untested claim says
    why it cannot be decided instead)."""
    if claim.untested:
        assert claim.run()[1] == "untested" and len(claim.untested) > 20 and not claim.cases, claim.id
        return
    assert set(claim.cases) == {"holds", "fails"}, claim.id
    for expected, make in claim.cases.items():
        decision, got = claim.run(**make())
        assert got == expected, (claim.id, expected, decision)
        assert decision.low <= decision.estimate + 1e-12 or np.isnan(decision.low), claim.id


def test_verdict_from_the_interval_hand_computed():
    assert verdict(0.80, 0.95, 0.8, ">=") == "holds"  # lower end on the threshold: >= holds
    assert verdict(0.80, 0.95, 0.8, ">") == "undecided"  # ... but > does not
    assert verdict(0.40, 0.79, 0.8, ">=") == "fails"
    assert verdict(0.60, 0.95, 0.8, ">=") == "undecided"
    assert verdict(-0.3, -0.1, 0.0, "<") == "holds" and verdict(0.0, 0.2, 0.0, "<") == "fails"
    assert verdict(float("nan"), 1.0, 0.5, ">") == "undecided"
    with pytest.raises(InputValidationError, match="direction"):
        verdict(0.1, 0.2, 0.0, "=>")


def test_clopper_pearson_matches_the_beta_quantiles():
    # 7 of 10: the exact interval (scipy.stats.binomtest gives the same) is [0.3475, 0.9333]
    low, high = clopper_pearson(7, 10)
    assert low == pytest.approx(0.3475, abs=1e-4) and high == pytest.approx(0.9333, abs=1e-4)
    assert clopper_pearson(0, 5)[0] == 0.0 and clopper_pearson(5, 5)[1] == 1.0
    with pytest.raises(InputValidationError, match="k"):
        clopper_pearson(6, 5)


def test_share_decision_leaves_undefined_setups_out():
    d = share_decision([True, False, np.nan, True])
    assert (d.estimate, d.setups_held, d.setups) == (pytest.approx(2 / 3), 2, 3)


def test_bootstrap_decision_is_deterministic_and_brackets_the_mean():
    x = np.random.default_rng(0).normal(1.0, 1.0, 200)
    a = bootstrap_decision(lambda i: float(x[i].mean()), len(x))
    b = bootstrap_decision(lambda i: float(x[i].mean()), len(x))
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low < x.mean() < a.high and a.high - a.low == pytest.approx(2 * 1.96 / np.sqrt(200), rel=0.25)
    one = bootstrap_decision(lambda i: float(x[i].mean()), 1)  # one unit: no interval, so no verdict
    assert np.isnan(one.low) and np.isnan(one.high)


def test_a_claim_without_source_or_with_a_bad_criterion_is_refused():
    kw = dict(id="x.y", paper="P1", statement="s", quantity="q", threshold=0.0, direction=">",
              criterion_source="paper", rationale="r", decide=lambda: Decision(0, 0, 0))  # fmt: skip
    with pytest.raises(InputValidationError, match="source"):
        Claim(source="  ", **kw)
    with pytest.raises(InputValidationError, match="criterion_source"):
        Claim(source="s", **{**kw, "criterion_source": "after the fact"})
    with pytest.raises(InputValidationError, match="direction"):
        Claim(source="s", **{**kw, "direction": "about"})


def _claim(cid: str, *, own: bool = False, exploratory: bool = False, superseded_by: str = "") -> Claim:
    return Claim(id=cid, paper="benchmark" if own else "P9", statement="s", source="paper 9, Table 1", quantity="q",
                 threshold=0.5, direction=">", criterion_source="ours", rationale="r", own=own,
                 exploratory=exploratory, superseded_by=superseded_by,
                 decide=lambda v: Decision(v, v - 0.1, v + 0.1))  # fmt: skip


def test_records_read_back_one_row_per_claim_last_wins(tmp_path):
    c = _claim("p9.a")
    record_claim(c, Decision(0.1, 0.0, 0.2), notebook="nb", results=tmp_path)
    record_claim(c, Decision(0.9, 0.7, 0.95, setups_held=3, setups=4, detail=pd.DataFrame({"s": [1]})),
                 notebook="nb", results=tmp_path)  # fmt: skip
    (tmp_path / "claims" / "nb.jsonl").open("a").write('{"cut by a kill')  # a torn last line is skipped
    got = collect_claims(tmp_path)
    assert len(got) == 1 and got.loc[0, "verdict"] == "holds" and got.loc[0, "estimate"] == 0.9
    assert (tmp_path / "claims" / "nb.p9.a.csv").exists()  # the per-setup detail beside it
    table = claims_csv(got)
    assert list(table.columns) == CLAIM_COLUMNS and table.loc[0, "seeds"] == 1 and table.loc[0, "seeds_held"] == 1


def test_decide_and_record_refuses_an_unknown_id(tmp_path):
    with pytest.raises(InputValidationError, match="unknown claim ids"):
        decide_and_record([_claim("p9.a")], {"p9.b": {"v": 1.0}}, notebook="nb", results=tmp_path)
    out = decide_and_record([_claim("p9.a")], {"p9.a": {"v": 1.0}}, notebook="nb", results=tmp_path)
    assert out.loc[0, "verdict"] == "holds"


def test_tally_counts_distinct_paper_claims_and_keeps_own_and_exploratory_apart(tmp_path):
    for cid, v, kw in [("p9.a", 1.0, {}), ("p9.b", 0.0, {}), ("p9.c", 0.5, {}), ("p9.d", 1.0, {"exploratory": True}),
                       ("p9.f", 1.0, {"superseded_by": "p9.a"}), ("bench.e", 1.0, {"own": True})]:  # fmt: skip
        record_claim(_claim(cid, **kw), Decision(v, v - 0.1, v + 0.1), notebook="nb", results=tmp_path)
    claims = collect_claims(tmp_path)
    t = tally(claims).set_index(["paper", "kind"])
    none = {"underpowered": 0, "indistinguishable": 0, "untested": 0}
    assert t.loc[("P9", "paper")].to_dict() == {"claims": 3, "holds": 1, "fails": 1, "undecided": 1} | none | {
        "one run": 3}
    assert t.loc[("benchmark", "own")].to_dict() == {"claims": 1, "holds": 1, "fails": 0, "undecided": 0} | none | {
        "one run": 1}
    power = pd.DataFrame({"id": ["p9.a", "p9.b"], "size": [0.2, 0.0], "size_high": [0.22, 0.0], "power": [0.9, 0.1],
                          "power_low": [0.88, 0.09], "false_fail": [0.0, 0.2], "false_fail_high": [0.0, 0.22],
                          "needed": ["40 setups", "5 seeds"]})  # fmt: skip
    t = tally(claims_csv(claims, power=power)).set_index(["paper", "kind"])  # holds too often at the edge; an
    assert t.loc[("P9", "paper")].to_dict() == {"claims": 3, "holds": 0, "fails": 0, "undecided": 1,  # uncertified
                                                "underpowered": 1, "indistinguishable": 1, "untested": 0,  # fail
                                                "one run": 3}  # fmt: skip


def test_stability_table_counts_seeds_and_names_the_claims_that_change(tmp_path):
    runs = {}
    for seed, values in {0: (1.0, 1.0), 1: (1.0, 0.0), 2: (1.0, 1.0)}.items():
        folder = tmp_path / f"s{seed}"
        for cid, v in zip(("p9.a", "p9.b"), values):
            record_claim(_claim(cid), Decision(v, v - 0.1, v + 0.1), notebook="nb", results=folder)
        runs[seed] = collect_claims(folder)
    st = stability_table(runs).set_index("id")
    assert st.loc["p9.a", "seeds_held"] == 3 and not st.loc["p9.a", "changes"]
    assert st.loc["p9.b", "seeds_held"] == 2 and st.loc["p9.b", "changes"] and st.loc["p9.b", "seeds"] == 3
    merged = claims_csv(runs[0], st.reset_index()).set_index("id")
    assert merged.loc["p9.b", "seeds_held"] == 2 and merged.loc["p9.b", "seeds"] == 3


def test_no_notebook_decides_a_claim_in_its_cells():
    """Verdicts come from the registries; a notebook cell never holds a ``passed=`` expression."""
    for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            assert "passed=" not in "".join(cell["source"]), path.name


def test_a_run_with_only_another_seed_is_labelled_by_its_seed():
    from helpers.run.runner import run_label

    assert run_label({"seed": 2}) == "seed2"
    assert run_label({"seed": 2, "epochs": 3}) == "custom" and run_label({"seed": "2"}) == "custom"
    assert run_label({}) == "" and run_label({"byod_path": "x.csv"}) == "byod"


def test_seeds_command_builds_the_stability_table_from_the_reference_and_the_seed_runs(tmp_path):
    from helpers.paths import mark_latest, runs_dir
    from helpers.publish import seed_runs, seeds_stability

    def run(name: str, label: str, value: float):
        folder = runs_dir() / "default" / name
        record_claim(_claim("p9.a"), Decision(value, value - 0.1, value + 0.1), notebook="nb", results=folder / "results")
        (folder / "run_status.json").write_text(json.dumps({"_run": {"label": label, "status": "ok"}}))
        return folder

    base = run("20260101-000000", "", 1.0)
    mark_latest(base)
    run("20260101-010000-seed1", "seed1", 0.0)
    run("20260101-020000-seed2", "seed2", 1.0)
    assert sorted(seed_runs("default")) == [0, 1, 2]
    dest = tmp_path / "figs"
    dest.mkdir()
    claims_csv(collect_claims(base / "results")).to_csv(dest / "claims.csv", index=False)
    table = seeds_stability("default", destination=dest)
    assert table.loc[0, "seeds_held"] == 2 and table.loc[0, "changes"]
    assert "p9.a" in (dest / "claims_seeds.md").read_text()
    assert pd.read_csv(dest / "claims.csv").loc[0, "seeds"] == 3
    # seeds runs of one notebook: its claims' rows are replaced, the others' kept
    kept = table.assign(id="p8.kept", paper="P8")
    pd.concat([table, kept]).to_csv(dest / "claims_seeds.csv", index=False)
    merged = seeds_stability("default", destination=dest, only=["nb"]).set_index("id")
    assert set(merged.index) == {"p9.a", "p8.kept"} and merged.loc["p9.a", "seeds_held"] == 2
    with pytest.raises(HelpersError, match="holding claims of other"):  # no seeds runs of that notebook: said so
        seeds_stability("default", destination=dest, only=["other"], write=False)
    # a later run of another notebook moves the latest pointer; seed 0 of "nb" stays nb's own run
    other = runs_dir() / "default" / "20260101-030000"
    record_claim(_claim("p8.x"), Decision(1.0, 0.9, 1.1), notebook="other", results=other / "results")
    (other / "run_status.json").write_text(json.dumps({"_run": {"label": "", "status": "ok"}}))
    mark_latest(other)
    assert seed_runs("default", ["nb"])[0] == base and seed_runs("default")[0] == other


def test_publishing_the_seeds_re_renders_what_quotes_the_claims(tmp_path):
    """``seeds --publish`` changes claims.csv; summary.md, the README section and the reports' blocks follow it."""
    from helpers.publish import render_published

    figs = tmp_path / "figures"
    shutil.copytree(REPO_ROOT / "figures", figs)
    reports = tmp_path / "reproductions"
    shutil.copytree(REPO_ROOT / "docs" / "reproductions", reports)
    (figs / "summary.md").unlink()
    claims = pd.read_csv(figs / "claims.csv", keep_default_na=False, na_values=[""])
    flipped = claims.index[claims["verdict"] == "holds"][0]
    claims.loc[flipped, "verdict"] = "fails"  # one verdict changes: every count quoting it must follow
    claims.to_csv(figs / "claims.csv", index=False)
    before = {p.name: p.read_text() for p in reports.glob("*.md")}
    render_published(figs, reports=reports)
    assert "hold" in (figs / "summary.md").read_text()
    changed = [p.name for p in reports.glob("*.md") if p.read_text() != before[p.name]]
    assert changed, "no report block followed the changed verdict"


def test_bootstrap_clusters_draws_whole_clusters_on_every_group():
    from helpers.claims import bootstrap_clusters

    # two groups share the cluster labels; a replicate draws a label for both groups at once
    values = {"a": np.array([1.0, 1.0, 5.0, 5.0]), "b": np.array([1.0, 5.0])}
    labels = {"a": ["x", "x", "y", "y"], "b": ["x", "y"]}
    seen = []

    def stat(idx):
        seen.append((tuple(labels["a"][i] for i in idx["a"]), tuple(labels["b"][i] for i in idx["b"])))
        return float(values["a"][idx["a"]].mean() - values["b"][idx["b"]].mean())

    d = bootstrap_clusters(stat, labels, n_boot=50)
    assert d.estimate == 0.0 and d.low == 0.0 and d.high == 0.0  # the same draw on both groups: no difference
    for a, b in seen[1:]:
        assert sorted(set(a)) == sorted(set(b)) and len(a) == 2 * len(b)  # whole clusters, jointly
    one = bootstrap_clusters(lambda idx: 1.0, {0: ["x", "x"]})
    assert np.isnan(one.low)  # one cluster: no interval


def test_a_cluster_bootstrap_is_wider_than_a_row_bootstrap_when_rows_of_a_cluster_move_together():
    from helpers.claims import bootstrap_clusters, bootstrap_decision

    rng = np.random.default_rng(3)
    per_type = rng.normal(0, 1, 19)
    rows = np.repeat(per_type, 5) + rng.normal(0, 0.1, 95)  # 19 types x 5 severities
    labels = np.repeat(np.arange(19), 5).tolist()
    clustered = bootstrap_clusters(lambda idx: float(rows[idx[0]].mean()), {0: labels})
    independent = bootstrap_decision(lambda i: float(rows[i].mean()), 95)
    assert clustered.estimate == pytest.approx(independent.estimate)
    assert (clustered.high - clustered.low) > 1.8 * (independent.high - independent.low)


def test_report_bullets_show_a_zero_width_interval_as_a_point_and_say_when_power_is_not_simulated():
    from helpers.publish.reports import claim_bullets

    row = {"id": "bench.x", "source": "ours", "statement": "s", "criterion": "c", "criterion_source": "ours",
           "estimate": -2.88, "low": -2.88, "high": -2.88, "verdict": "underpowered", "interval_verdict": "holds",
           "size": float("nan"), "power": float("nan"), "needed": "", "setups_held": "", "setups": "",
           "seeds_held": 1, "seeds": 1, "own": True, "exploratory": False, "rationale": ""}  # fmt: skip
    text = claim_bullets(pd.DataFrame([row]))
    assert "-2.88 (a point: no interval)" in text and "[-2.88, -2.88]" not in text
    assert "the rule has no simulated error rate" in text and "size is  and" not in text
    row |= {"low": -3.1, "high": -2.5, "size": 0.02, "power": 0.4}
    text = claim_bullets(pd.DataFrame([row]))
    assert "-2.88 [-3.1, -2.5]" in text and "size is 0.02, its power at the paper's effect 0.4" in text


def test_p1_tightness_without_any_oracle_bound_is_undefined_not_an_error():
    """A smoke run where no set has an oracle bound (seed 1 of the smoke profile) has no 'Oracle *' column after
    the pivot: the claim's share is over no set (NaN), not a TypeError."""
    import math

    import pandas as pd

    from helpers.experiments.p1_bounds.claims import _good, _tighter_than_oracle

    summary = _good()
    estimates = pd.DataFrame({"set": summary["set"], "method": "Mean bounds", "accuracy": 0.5})
    decision = _tighter_than_oracle(summary, estimates)
    assert math.isnan(decision.estimate) and decision.setups == 0
