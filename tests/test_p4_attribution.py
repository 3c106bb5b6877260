"""Suite training and the end-to-end ranking experiment of paper 4 on a tiny problem; the tiny Transformer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from helpers.data.msgs import msgs_examples, msgs_training_set
from helpers.errors import InputValidationError, UnknownNameError
from helpers.experiments.p4_attribution import (
    SettingResult,
    accuracy_table,
    build_model,
    factor_readings,
    factor_variants,
    held_out_directions,
    pair_vocab,
    predict_probs,
    run_setting,
    train_suite,
    window_ablation,
)
from helpers.models.tiny_transformer import TinyTransformer, exact_match_feature

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_exact_match_feature():
    ids = torch.tensor([[5, 6, 2, 6, 7, 0], [1, 5, 2, 1, 5, 0]])
    seg = torch.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1]])
    assert exact_match_feature(ids, seg).tolist() == [[0, 1, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0]]


def test_tiny_transformer_shapes_and_padding_invariance():
    torch.manual_seed(0)
    m = TinyTransformer(
        20, 3, dim=16, heads=2, num_layers=1, ff=32, sep_id=2, dropout=0.0, exact_match=True
    ).eval()
    x = torch.tensor([[5, 6, 2, 6, 7]])
    padded = torch.tensor([[5, 6, 2, 6, 7, 0, 0]])
    with torch.no_grad():
        assert m(x).shape == (1, 3)
        torch.testing.assert_close(m(x), m(padded), atol=1e-5, rtol=1e-5)
    with pytest.raises(InputValidationError):
        TinyTransformer(20, dim=10, heads=4)


def test_pair_vocab_and_build_model():
    v = pair_vocab(["the cat", "a dog ,"])
    assert v.itos[:3] == ["<pad>", "<unk>", "<sep>"] and set(v.itos[3:]) == {",", "a", "cat", "dog", "the"}
    assert isinstance(build_model("tiny-em", v), TinyTransformer)
    with pytest.raises(UnknownNameError):
        build_model("bert", v)


def test_suite_checkpoints_are_keyed_by_content(monkeypatch):
    """The same training set under two suite names and member names is trained once; other data trains anew."""
    import helpers.training as training
    from helpers.paths import cache_dir

    calls = []
    real_fit = training.fit
    monkeypatch.setattr(training, "fit", lambda *a, **k: calls.append(a[2].checkpoint_dir) or real_fit(*a, **k))
    v = pair_vocab(["the cat saw a dog , drew"])
    frame = pd.DataFrame({"text": ["the cat saw a dog", "a dog drew the cat"] * 4, "label": [0, 1] * 4})
    a = train_suite({"inoc 1%": frame}, v, columns=["text"], key="hans", epochs=1, progress=False)
    b = train_suite({"tiny": frame}, v, columns=["text"], key="arch", epochs=1, progress=False)
    assert calls[0] == calls[1]  # one checkpoint folder: the second call resumes the finished training
    assert all(torch.equal(x, y) for x, y in zip(a["inoc 1%"].state_dict().values(), b["tiny"].state_dict().values()))
    train_suite({"x": frame.assign(label=1 - frame.label)}, v, columns=["text"], epochs=1, progress=False)
    train_suite({"x": frame}, v, columns=["text"], epochs=1, seed=1, progress=False)
    assert len(set(calls)) == 3 and all(c.parent == cache_dir() / "checkpoints" for c in calls)


def test_msgs_end_to_end_small():
    """Two MSGS models trained briefly; the pipeline gives tidy outputs and ACC ranks a clear pair correctly."""
    words = {w for f in ("morph",) for k in ("ambiguous", "ood", "inoc_L") for t in
             msgs_examples(f, n=400, kind=k, seed=0).text for w in t.split()}  # fmt: skip
    v = pair_vocab([" ".join(sorted(words | {"the"}))])
    sets = {"none": msgs_training_set("morph", n=300, mix="none", seed=0),
            "2%L+2%S": msgs_training_set("morph", n=300, mix="2%L+2%S", seed=0)}  # fmt: skip
    suite = train_suite(sets, v, columns=["text"], key="test-msgs", epochs=1, progress=False)
    ood = msgs_examples("morph", n=60, kind="ood", seed=5)
    pop = ood.head(12).reset_index(drop=True)
    res = run_setting(suite, v, ood=ood, population=pop, columns=["text"], factors=["IRREG"], methods=["ig"],
                      meta_columns=["critical"], n_boot=50, attribution_kw={"n_steps": 4}, progress=False)  # fmt: skip
    assert list(res.models.model) == ["none", "2%L+2%S"]
    assert set(res.summary.ranker) == {"ACC", "CONF", "CONF-GT", "RANDOM", "IRREG"}
    assert res.factors.shape[0] == 2 * 12
    assert ((res.summary.accuracy >= 0) & (res.summary.accuracy <= 1) | res.summary.accuracy.isna()).all()
    t = accuracy_table(res.summary, ["ACC", "IRREG", "NOPE"])
    assert list(t.index) == ["ACC", "IRREG"] and list(t.columns) == ["ig"]
    p = predict_probs(suite["none"], v, pop.text.tolist())
    assert p.shape == (12, 2) and np.allclose(p.sum(1), 1, atol=1e-5)
    acc = (predict_probs(suite["none"], v, ood.text.tolist()).argmax(1) == ood.label).mean()
    assert res.models.ood_accuracy.iloc[0] == pytest.approx(acc)
    abl = window_ablation(res, pop, n_boot=50)  # same bootstrap samples as run_setting above
    assert set(abl.variant) == {"window ±1", "window ±1 |a|", "window ±0", "window ±0 |a|", '-mass on "the"'}
    signed = abl.set_index("variant").accuracy["window ±1"]  # = the IRREG factor exactly
    np.testing.assert_equal(signed, res.summary.set_index("ranker").accuracy["IRREG"])
    with pytest.raises(InputValidationError):
        run_setting({"a": suite["none"]}, v, ood=ood, population=pop, columns=["text"], factors=["IRREG"])
    with pytest.raises(UnknownNameError):
        run_setting(suite, v, ood=ood, population=pop, columns=["text"], factors=["NOPE"])
    _ = pd  # noqa


def _two_model_result(scores_a, scores_b, acc=(0.9, 0.5), targets=(0, 1)) -> SettingResult:
    """Two models, 4 identical examples of tokens a b | c (segments 0 0 0 1, '|' special)."""
    rows = []
    for model, target, scores in (("A", targets[0], scores_a), ("B", targets[1], scores_b)):
        for ex in range(4):
            for pos, (tok, seg, sp, sc) in enumerate(zip("ab|c", [0, 0, 0, 1], [0, 0, 1, 0], scores)):
                rows.append((ex, model, "shap", seg, pos, tok, bool(sp), sc, target, -1 if sp else pos % 3))
    attr = pd.DataFrame(rows, columns=["example", "model", "method", "segment", "position", "token", "special",
                                       "score", "target", "word"])  # fmt: skip
    models = pd.DataFrame({"model": ["A", "B"], "ood_accuracy": list(acc), "id_accuracy": [1.0, 1.0]})
    informative = np.array([[False, acc[0] != acc[1]], [acc[0] != acc[1], False]])
    return SettingResult(models, pd.DataFrame(), pd.DataFrame(), attr, pd.DataFrame(), informative)


def test_factor_variants_known_answer():
    """Model A (better) explains class 0 everywhere, B class 1: negating A's scores (fixed class 1) flips SUM-DIFF."""
    res = _two_model_result([0.1, 0.1, 0.0, 0.5], [0.3, 0.1, 0.0, 0.2])
    out = factor_variants(res, pd.DataFrame(index=range(4)), factors=["SUM-DIFF"], n_boot=20).set_index("variant")
    # paper reading: A's SUM-DIFF (-0.43) < B's (0.33), lower = better -> correct; negated A (0.43) -> wrong
    assert out.accuracy.to_dict() == {"paper reading": 1.0, "opposite direction": 0.0, "fixed class 1": 0.0}


def test_held_out_directions_chooses_on_the_independent_suite():
    """SUM-DIFF: A = -0.43, B = +0.33 (lower is better a priori).  On a suite where A is better the a-priori reading
    is right; where B is better only the opposite one is.  The protocol applies the independent suite's choice."""
    pop = pd.DataFrame(index=range(4))
    a_better = _two_model_result([0.1, 0.1, 0.0, 0.5], [0.3, 0.1, 0.0, 0.2], acc=(0.9, 0.5))
    b_better = _two_model_result([0.1, 0.1, 0.0, 0.5], [0.3, 0.1, 0.0, 0.2], acc=(0.5, 0.9))
    kw = dict(independent_population=pop, population=pop, factors=["SUM-DIFF"], n_boot=20)
    out = held_out_directions(b_better, a_better, **kw).iloc[0]
    assert out.reading == "opposite" and out.chosen_on == 1.0
    assert out.a_priori == 1.0 and out.protocol == 0.0  # the independent suite's choice is applied unchanged
    out = held_out_directions(a_better, a_better, **kw).iloc[0]
    assert out.reading == "a priori" and out.protocol == out.a_priori == 1.0
    tie = _two_model_result([0.1, 0.1, 0.0, 0.5], [0.3, 0.1, 0.0, 0.2], acc=(0.7, 0.7))  # no informative pair
    out = held_out_directions(tie, b_better, **kw).iloc[0]
    assert out.reading == "a priori" and np.isnan(out.chosen_on) and out.protocol == 0.0
    with pytest.raises(InputValidationError):
        held_out_directions(a_better, a_better, **kw, methods=["ig"])


def test_window_factor_has_four_readings():
    """|a| readings exist for the window factor only; |a| = magnitude of the L1-normalised attributions."""
    res = _two_model_result([0.1, -0.4, 0.0, 0.5], [0.3, 0.1, 0.0, 0.2])
    pop = pd.DataFrame({"critical": [(0, 1)] * 4})
    r = factor_readings(res, pop, "IRREG", method="shap", meta_columns=["critical"])
    assert list(r) == ["a priori", "opposite", "|a| a priori", "|a| opposite"]
    # A: L1-normalised (.1, -.4, 0, .5); window over positions 0..2: signed -0.3, |a| 0.5
    np.testing.assert_allclose(r["a priori"][0][0], -0.3)
    np.testing.assert_allclose(r["|a| a priori"][0][0], 0.5)
    assert r["opposite"][1] is False and r["a priori"][1] is True
    assert list(factor_readings(res, pop, "SUM-DIFF", method="shap")) == ["a priori", "opposite"]


def test_p4_intervals_resample_models_not_pairs():
    """The informative pairs share models: with 8 models (28 pairs) whose pairs' accuracy follows the models, the
    model bootstrap's interval is wider than a pair bootstrap's, around the same estimate."""
    from helpers.claims import bootstrap_decision
    from helpers.experiments.p4_attribution.claims import _boot

    rng = np.random.default_rng(4)
    skill = rng.uniform(0.3, 1.0, 8)
    rows = [{"setting": "S", "ranker": "ACC", "model_a": f"m{i}", "model_b": f"m{j}",
             "accuracy": float((skill[i] + skill[j]) / 2)} for i in range(8) for j in range(i + 1, 8)]  # fmt: skip
    frame = pd.DataFrame(rows)
    by_model = _boot(frame, lambda t: float(t["ACC"].mean()))
    acc = frame["accuracy"].to_numpy()
    by_pair = bootstrap_decision(lambda i: float(100 * acc[i].mean()), len(acc))
    assert by_model.estimate == pytest.approx(100 * acc.mean())
    assert (by_model.high - by_model.low) > 1.5 * (by_pair.high - by_pair.low)
    one = pd.DataFrame([{"setting": "S", "ranker": "ACC", "model_a": "a", "model_b": "a", "accuracy": 1.0}])
    assert np.isnan(_boot(one, lambda t: float(t["ACC"].mean())).low)  # one model: no interval
