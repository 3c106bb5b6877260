"""Notebook 08's tables and claim inputs on a synthetic zoo: what each row says, intervals, skipped methods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.errors import InputValidationError
from helpers.experiments.p8_ranking import (
    Collection,
    RankingSettings,
    advice,
    best_by_family,
    family_table,
    ranking_table,
)
from helpers.experiments.p8_ranking.claims import CLAIMS, claim_inputs, paired


def _collection(target: str, family: str, *, models: int = 4, features: bool = True, seed: int = 0) -> Collection:
    rng = np.random.default_rng(seed)
    y, y_ref = rng.integers(0, 3, 300), rng.integers(0, 3, 300)
    outs, ref = {}, {}
    for i, skill in enumerate(np.linspace(0.5, 2.5, models)):
        z = rng.normal(size=(300, 3)) + 0.7 * skill * np.eye(3)[y]
        zr = rng.normal(size=(300, 3)) + skill * np.eye(3)[y_ref]
        outs[f"m{i}"] = {"logits": z, **({"features": np.tanh(z @ rng.normal(size=(3, 5)))} if features else {})}
        ref[f"m{i}"] = {"logits": zr, "labels": y_ref, **({"features": np.tanh(zr)} if features else {})}
    return Collection("toy", family, target, outs, y, ref)


SETS = [_collection(f"s{i}", "fam-a" if i < 2 else "fam-b", seed=i) for i in range(3)]
METHODS = ["id_accuracy", "average_confidence", "atc_mc", "nuclear_norm", "mano", "aline_d", "gdscore"]


def test_every_method_ranks_every_set_with_its_interval_and_a_reason_when_it_cannot():
    table = ranking_table([*SETS, _collection("two", "fam-c", models=2, features=False)], METHODS, n_boot=30,
                          progress=False)  # fmt: skip
    done = table[table["skipped"].isna()]
    assert ((done["kendall_tau_lower"] <= done["kendall_tau"] + 1e-12)
            & (done["kendall_tau"] <= done["kendall_tau_upper"] + 1e-12)).all()  # fmt: skip
    # four models far apart in skill (GdScore reads random stand-in features here: not held to it)
    assert (done[(done["target"] != "two") & (done["method"] != "gdscore")]["kendall_tau"] > 0.3).all()
    why = table.set_index(["target", "method"])["skipped"]
    assert why[("two", "aline_d")].startswith("models: ALine needs at least 3")
    assert "penultimate features" in why[("two", "gdscore")]
    assert np.isnan(done.set_index(["target", "method"]).loc[("s0", "nuclear_norm"), "mae_pp"])  # a score: no MAE


def test_family_means_their_bootstrap_over_sets_and_the_best_method_per_family():
    table = ranking_table(SETS, METHODS, n_boot=20, progress=False)
    fam = family_table(table)
    a = fam[(fam["family"] == "fam-a") & (fam["method"] == "atc_mc")].iloc[0]
    rows = table[(table["family"] == "fam-a") & (table["method"] == "atc_mc")]
    assert a["sets"] == 2 and a["kendall_tau"] == pytest.approx(rows["kendall_tau"].mean())
    assert a["kendall_tau_lower"] <= a["kendall_tau"] <= a["kendall_tau_upper"]
    b = fam[(fam["family"] == "fam-b") & (fam["method"] == "atc_mc")].iloc[0]  # one set: its own interval
    assert b["kendall_tau_lower"] == table[(table["family"] == "fam-b") & (table["method"] == "atc_mc")][
        "kendall_tau_lower"].iloc[0]  # fmt: skip
    best = best_by_family(fam)
    assert set(best["family"]) == {"fam-a", "fam-b"} and best["best_estimator"].notna().all()
    assert "mean τ" in advice(fam)


def test_the_claims_read_paired_differences_on_the_sets_where_both_ran():
    table = pd.DataFrame({"zoo": "z", "family": "f", "target": ["a", "a", "b", "b", "c"],
                          "method": ["nuclear_norm", "average_confidence"] * 2 + ["nuclear_norm"],
                          "kendall_tau": [0.8, 0.2, 0.6, 0.6, 1.0]})  # fmt: skip
    d = paired(table, "nuclear_norm", "average_confidence")
    assert list(d["target"]) == ["a", "b"] and d["delta"].tolist() == pytest.approx([0.6, 0.0])
    inputs = claim_inputs(ranking_table(SETS, METHODS, n_boot=0, progress=False))
    assert set(inputs) == {c.id for c in CLAIMS}
    for c in CLAIMS:
        assert len(inputs[c.id]["detail"]) == len(SETS)


def test_bad_settings_are_refused_naming_the_parameter():
    with pytest.raises(InputValidationError, match="^zoos: "):
        RankingSettings.for_profile("smoke", zoos=["mnist"])
    with pytest.raises(InputValidationError, match="^methods: "):
        RankingSettings.for_profile("smoke", methods=["no_such"])
    with pytest.raises(InputValidationError, match="^cifar_backbones: "):
        RankingSettings.for_profile("smoke", cifar_backbones=[20, 32])
