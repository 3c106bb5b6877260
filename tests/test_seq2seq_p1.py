"""Tests of helpers.seq2seq (paper 1): vocabulary, parser confidence, exact match, negative mining,
discriminators, analysis tables and the resume-without-retraining property of the cached pipeline."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.errors import InputValidationError
from helpers.experiments.p1_bounds import PipelineConfig, Seq2SeqTask, render_scan_output, run_task
from helpers.experiments.p1_bounds import pipeline as pipeline_mod
from helpers.experiments.p1_bounds.analysis import (
    error_kind,
    error_types,
    estimates_table,
    recall_table,
    set_summary,
    subset_curve,
)
from helpers.experiments.p1_bounds.pipeline import SetResult, TaskResult
from helpers.metrics import roc_auc
from helpers.seq2seq import (
    DiscriminatorData,
    ScratchPairCollator,
    WordVocab,
    beam_search,
    build_parser,
    collate_seq2seq,
    discriminator_dataset,
    discriminator_margins,
    discriminator_votes,
    exact_match,
    make_discriminator,
    mine_negatives,
    sequence_probability,
    snapshot_beams,
    snapshot_paths,
    train_discriminators,
    train_parser,
)

TINY = {"d_model": 8, "d_ff": 16, "num_layers": 1, "num_heads": 2, "d_kv": 4, "dropout_rate": 0.0}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ------------------------------------------------------------------------------------------------------ vocabulary
def test_vocab_build_order_encode_decode():
    v = WordVocab.build(["b a", "a c", "a"])
    assert v.itos == ["<pad>", "</s>", "<unk>", "a", "b", "c"]  # frequency, then alphabetical
    assert v.encode("a c z") == [3, 5, 2, 1]
    assert v.encode("a", add_eos=False) == [3]
    assert v.decode([3, 0, 5, 1, 4]) == "a c"  # pad skipped, stops at eos
    assert WordVocab(v.to_list()).itos == v.itos
    assert v.coverage(["a z"]) == 0.5


def test_vocab_min_freq_and_bad_input():
    assert WordVocab.build(["a a b"], min_freq=2).to_list() == ["a"]
    with pytest.raises(InputValidationError):
        WordVocab(["a", "a"])
    with pytest.raises(InputValidationError):
        WordVocab(["a b"])
    with pytest.raises(InputValidationError):
        WordVocab.build("a b")
    with pytest.raises(InputValidationError):
        WordVocab.build(["a"]).decode([99])


# ------------------------------------------------------------------------------------------- parser and confidence
def _tiny_parser(vocab, seed=0):
    return build_parser(len(vocab), TINY, seed=seed).eval()


def test_sequence_probability_is_product_of_token_probabilities():
    v = WordVocab.build(["x y z"])
    m = _tiny_parser(v)
    src = torch.tensor([v.encode("x y")])
    target = v.encode("z x")  # [z, x, </s>]
    # hand computation: decode step by step from the start token (pad id 0), multiply p(y_t | y_<t)
    prob, prefix = 1.0, [v.pad_id]
    with torch.no_grad():
        for tok in target:
            logits = m(input_ids=src, decoder_input_ids=torch.tensor([prefix])).logits[0, -1]
            prob *= torch.softmax(logits, -1)[tok].item()
            prefix.append(tok)
    got = sequence_probability(m, v, ["x y"], ["z x"], device="cpu")
    assert got.shape == (1,)
    assert got[0] == pytest.approx(prob, rel=1e-5)
    logp = sequence_probability(m, v, ["x y"], ["z x"], device="cpu", log=True)
    assert logp[0] == pytest.approx(np.log(prob), rel=1e-5)


def test_sequence_probability_batching_and_order_invariant():
    v = WordVocab.build(["a b c d"])
    m = _tiny_parser(v)
    ins, outs = ["a", "a b c d", "b c"], ["d", "c", "a b"]
    one = np.concatenate([sequence_probability(m, v, [i], [o], device="cpu") for i, o in zip(ins, outs)])
    assert np.allclose(sequence_probability(m, v, ins, outs, batch_size=2, device="cpu"), one, rtol=1e-5)
    with pytest.raises(InputValidationError):
        sequence_probability(m, v, ["a"], ["a", "b"])


def test_beam_search_shapes_and_confidence_of_top_beam():
    v = WordVocab.build(["a b c"])
    m = _tiny_parser(v)
    r = beam_search(m, v, ["a b", "c", "a"], num_beams=4, max_new_tokens=5, device="cpu")
    assert len(r.beams) == 3 and all(len(b) == 4 for b in r.beams)
    assert r.top == [b[0] for b in r.beams]
    assert np.allclose(
        r.confidence, sequence_probability(m, v, ["a b", "c", "a"], r.top, device="cpu"), rtol=1e-5
    )
    assert np.all((r.confidence > 0) & (r.confidence <= 1))
    # the top beam is the most probable of the returned beams (length_penalty = 0)
    for x, beam in zip(["a b", "c", "a"], r.beams):
        p = sequence_probability(m, v, [x] * len(beam), beam, device="cpu")
        finished = [i for i, b in enumerate(beam) if len(b.split()) < 5]
        if 0 in finished:
            assert p[0] >= max(p[i] for i in finished) - 1e-6


def test_exact_match():
    assert exact_match(["a  b", "a b", ""], ["a b", "a c", ""]).tolist() == [True, False, True]
    with pytest.raises(InputValidationError):
        exact_match(["a"], ["a", "b"])
    with pytest.raises(InputValidationError):
        exact_match("a", "a")


def test_collate_pads_labels_with_ignore_index():
    b = collate_seq2seq([([3, 1], [4, 5, 1]), ([3, 4, 5, 1], [1])])
    assert b["input_ids"].tolist() == [[3, 1, 0, 0], [3, 4, 5, 1]]
    assert b["attention_mask"].tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]
    assert b["labels"].tolist() == [[4, 5, 1], [1, -100, -100]]


def test_build_parser_bad_config():
    with pytest.raises(InputValidationError):
        build_parser(10, "t5-huge")
    with pytest.raises(InputValidationError):
        build_parser(10, {"depth": 3})
    with pytest.raises(InputValidationError):
        build_parser(2)


# ------------------------------------------------------------------------------------------------ negative mining
def test_mine_negatives_keeps_only_distinct_incorrect_beams():
    inputs, golds = ["i1", "i2"], ["g1", "g2"]
    beams = [
        [["g1", "w1", "w1 ", "w2"], ["g2", "g2", "g2", "g2"]],  # ckpt 0: i2 fully correct -> no negative
        [["w1", "g1", "w3", "w3"], ["v1", "g2", "v1", "v2"]],
    ]
    ni, no = mine_negatives(beams, inputs, golds, per_example=5)
    pairs = list(zip(ni, no))
    assert len(pairs) == len(set(pairs))
    assert ("i1", "g1") not in pairs and ("i2", "g2") not in pairs
    assert set(pairs) == {("i1", "w1"), ("i1", "w2"), ("i1", "w3"), ("i2", "v1"), ("i2", "v2")}
    ni1, no1 = mine_negatives(beams, inputs, golds, per_example=1, seed=3)
    assert len(ni1) <= 3 and all(o not in ("g1", "g2") for o in no1)  # at most one per input and checkpoint


def test_mine_negatives_bad_input():
    with pytest.raises(InputValidationError):
        mine_negatives([[["a"]]], ["x", "y"], ["a", "b"])
    with pytest.raises(InputValidationError):
        mine_negatives([[["a"]]], ["x"], ["a"], per_example=0)


def test_discriminator_dataset_labels_and_ratio():
    d = discriminator_dataset(["a", "b"], ["A", "B"], ["a", "a", "b"], ["x", "y", "z"], shuffle=False)
    assert d.labels.tolist() == [1, 1, 0, 0, 0] and d.outputs[:2] == ["A", "B"]
    assert (d.n_positive, d.n_negative) == (2, 3)
    capped = discriminator_dataset(
        ["a", "b"], ["A", "B"], ["a", "a", "b"], ["x", "y", "z"], max_negative_ratio=0.5
    )
    assert (capped.n_positive, capped.n_negative) == (2, 1)
    assert capped.items()[0][0] == (capped.inputs[0], capped.outputs[0])


def test_snapshot_beams_are_cached():
    calls = []

    def decode(step):
        calls.append(step)
        return [["a", "b"], ["c", ""]]

    first = snapshot_beams(decode, [1, 2], key={"t": "x"})
    again = snapshot_beams(decode, [1, 2], key={"t": "x"})
    assert calls == [1, 2] and first == again == [[["a", "b"], ["c", ""]]] * 2


# -------------------------------------------------------------------------------------------------- discriminators
def test_scratch_collator_segments_and_truncation():
    v = WordVocab.build(["a b [SEP] c"])
    enc = ScratchPairCollator(v, max_length=4).encode([("a b", "c"), ("a", "c c c")])
    sep = v.stoi["[SEP]"]
    assert enc["input_ids"][0].tolist() == [v.stoi["a"], v.stoi["b"], sep, v.stoi["c"]]
    assert enc["token_type_ids"][0].tolist() == [0, 0, 0, 1]
    assert enc["token_type_ids"][1].tolist() == [0, 0, 1, 1]
    with pytest.raises(InputValidationError):
        ScratchPairCollator(WordVocab.build(["a"]))
    with pytest.raises(InputValidationError):
        make_discriminator("roberta")


def test_scratch_ensemble_learns_and_votes():
    rng = np.random.default_rng(0)
    ins = [" ".join(rng.choice(["a", "b", "c"], size=3)) for _ in range(80)]
    outs = [s if i % 2 == 0 else s + " x" for i, s in enumerate(ins)]
    labels = np.array([1 if i % 2 == 0 else 0 for i in range(80)])
    data = DiscriminatorData(ins, outs, labels)
    v = WordVocab.build([*ins, *outs, "[SEP]"])
    members = train_discriminators(
        data,
        kind="scratch",
        n_members=2,
        vocab=v,
        epochs=15,
        batch_size=16,
        lr=3e-3,
        device="cpu",
        progress=False,
    )
    votes = discriminator_votes(members, ins, outs, device="cpu")
    assert votes.shape == (80, 2) and set(np.unique(votes)) <= {0, 1}
    assert (votes == labels[:, None]).mean() > 0.9
    margins = discriminator_margins(members, ins, outs, device="cpu")
    assert margins.shape == (80, 2) and np.array_equal(votes, (margins > 0).astype(np.int8))
    assert roc_auc(scores=margins[:, 0], labels=labels) > 0.9
    assert discriminator_margins(members, [], [], device="cpu").shape == (0, 2)
    with pytest.raises(InputValidationError, match="equal lengths"):
        discriminator_margins(members, ins, outs[:-1], device="cpu")
    with pytest.raises(InputValidationError):
        train_discriminators(DiscriminatorData(["a"], ["a"], np.array([1])), kind="scratch", vocab=v)


# -------------------------------------------------------------------------------------------------------- tasks
def test_render_scan_output():
    assert render_scan_output("I_TURN_LEFT I_JUMP I_WALK") == "left jump walk"
    # lossless: a parser that emits the input word "jump" is wrong, and must not read as the action I_JUMP
    assert render_scan_output("jump") == "[jump]" != render_scan_output("I_JUMP")
    outputs = ["I_JUMP", "jump", "I_JUMP I_WALK", "jump walk", "I_JUMP walk", "<unk>"]
    assert len({render_scan_output(o) for o in outputs}) == len(outputs)


def test_scan_task_keeps_ood_tests_out_of_training():
    from conftest import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("SCAN data not available")
    import os

    os.environ.setdefault("HELPERS_DATA", str(shared_data_dir()))
    t = __import__("helpers.experiments.p1_bounds.tasks", fromlist=["load_task"]).load_task("scan", n_dev=50, n_test=200)
    train_inputs = {x for x, _ in t.train} | {x for x, _ in t.dev}
    for name in ("SCAN-length", "SCAN-jump", "SCAN-turn-left"):
        assert not train_inputs & {x for x, _ in t.test_sets[name]}
    assert t.shift == {"SCAN-simple": "ID", "SCAN-length": "OOD", "SCAN-jump": "OOD", "SCAN-turn-left": "OOD"}
    assert not any("turn left" in x and x != "turn left" for x in train_inputs)  # only as a primitive
    assert max(len(o.split()) for _, o in t.train) <= 22


def test_scan_task_trains_the_add_primitives_in_their_split_share():
    from conftest import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("SCAN data not available")
    import os

    os.environ.setdefault("HELPERS_DATA", str(shared_data_dir()))
    from helpers.experiments.p1_bounds.tasks import load_task

    t = load_task("scan", n_train=400, n_dev=50, n_test=100)
    counts = {p: sum(x == p for x, _ in t.train) for p in ("jump", "turn left")}
    assert counts == {"jump": 50, "turn left": 50}  # 1,467/14,670 and 2,189/21,890 = .1 of 400 / .8 = 500 lines
    assert len(t.train) == 500 and ("jump", "I_JUMP") in t.train and ("turn left", "I_TURN_LEFT") in t.train
    held_out = {x for x, _ in t.dev} | {x for x, _ in t.test_sets["SCAN-simple"]}
    assert not held_out & {"jump", "turn left"}  # the primitives are training lines, never ID test or dev
    for name in ("SCAN-length", "SCAN-jump", "SCAN-turn-left"):  # no OOD test command among them
        assert not {x for x, _ in t.train} & {x for x, _ in t.test_sets[name]}


def test_scan_primitive_lines_hand_computed():
    from types import SimpleNamespace as P

    from helpers.experiments.p1_bounds.tasks import scan_primitive_lines

    jump = [P(input="jump", output="I_JUMP")] + [P(input="walk", output="I_WALK")] * 3  # share 1/4
    left = [P(input="turn left", output="I_TURN_LEFT")] + [P(input="run", output="I_RUN")] * 9  # share 1/10
    lines = scan_primitive_lines({"addprim_jump": jump, "addprim_turn_left": left}, 130)
    # N = 130 / (1 - .25 - .1) = 200: 50 jump, 20 turn left
    assert lines.count(("jump", "I_JUMP")) == 50 and lines.count(("turn left", "I_TURN_LEFT")) == 20
    with pytest.raises(InputValidationError, match="addprim_jump"):
        scan_primitive_lines({"addprim_jump": jump[1:], "addprim_turn_left": left}, 10)


# ------------------------------------------------------------------------------------------------------- analysis
def _fake_result():
    rng = np.random.default_rng(0)

    def mk(name, shift, n, acc):
        correct = rng.random(n) < acc
        conf = np.clip(correct * 0.5 + rng.random(n) * 0.5, 0, 1)
        votes = (rng.random((n, 3)) < np.where(correct, 0.9, 0.2)[:, None]).astype(np.int8)
        return SetResult(name, shift, ["i"] * n, ["g"] * n, ["p"] * n, conf, correct, votes)

    sets = {"ID-set": mk("ID-set", "ID", 200, 0.7), "OOD-set": mk("OOD-set", "OOD", 150, 0.3)}
    empty = DiscriminatorData([], [], np.zeros(0, dtype=int))
    return TaskResult("fake", mk("dev", "ID", 100, 0.7), sets, empty, empty, np.zeros((0, 3)))


def test_estimates_recall_summary_tables():
    r = _fake_result()
    est = estimates_table(r)
    assert set(est["set"]) == {"ID-set", "OOD-set"}
    for name, s in r.sets.items():
        f = est[est["set"] == name].set_index("method")
        assert f.loc["Gold", "accuracy"] == pytest.approx(s.accuracy)
        assert f.loc["Upper", "accuracy"] == pytest.approx(s.votes.any(1).mean())
        assert f.loc["Lower", "accuracy"] == pytest.approx(s.votes.all(1).mean())
        assert f.loc["Mean_bounds", "abs_error"] == pytest.approx(
            abs(s.accuracy - (s.votes.any(1).mean() + s.votes.all(1).mean()) / 2)
        )
        assert f.loc["MaxProb", "accuracy"] == pytest.approx((s.confidence >= 0.5).mean())
        assert np.isnan(f.loc["Upper", "abs_error"])
    t1 = recall_table(r)
    assert (t1["Upper CR"] >= t1["Single CR"]).all() and (t1["Lower IR"] >= t1["Single IR"]).all()
    summ = set_summary(est)
    assert list(summ["set"]) == ["ID-set", "OOD-set"]
    assert summ["best_baseline_ae"].le(summ["atc_ae"] + 1e-12).all()


def test_subset_curve():
    votes = np.array([[1, 1], [1, 0], [0, 0], [1, 1]] * 25)
    gold = np.array([1, 1, 0, 0] * 25)
    f = subset_curve(votes, gold, sizes=[4, 100], n_draws=10)
    assert set(f["quantity"]) == {"upper", "lower", "gold"} and len(f) == 6
    full = f[f["size"] == 100].set_index("quantity")
    assert full.loc["upper", "mean"] == pytest.approx(0.75) and full.loc["lower", "mean"] == pytest.approx(
        0.5
    )
    assert full.loc["gold", "low"] == full.loc["gold", "high"] == pytest.approx(0.5)
    assert ((f["low"] <= f["mean"] + 1e-12) & (f["mean"] <= f["high"] + 1e-12)).all()
    with pytest.raises(InputValidationError):
        subset_curve(votes, gold, sizes=[101])


def test_error_kind_hand_cases():
    gold = "I_RUN I_RUN I_TURN_LEFT I_WALK"
    assert error_kind("I_RUN I_RUN", gold, tagging=False) == "prefix"  # stops before the second conjunct
    assert error_kind("I_RUN I_WALK", gold, tagging=False) == "shorter"
    assert error_kind(gold + " I_WALK", gold, tagging=False) == "longer"
    assert error_kind("I_RUN I_RUN I_TURN_RIGHT I_WALK", gold, tagging=False) == "same length"
    assert error_kind("DET NOUN VERB", "DET NOUN NOUN", tagging=True) == "1 tag wrong"
    assert error_kind("DET VERB VERB", "DET NOUN NOUN", tagging=True) == "2 tags wrong"
    assert error_kind("ADP VERB VERB", "DET NOUN NOUN", tagging=True) == "3+ tags wrong"
    assert error_kind("DET NOUN", "DET NOUN NOUN", tagging=True) == "wrong length"
    with pytest.raises(InputValidationError, match="equals its gold"):
        error_kind("a  b", "a b", tagging=False)


def test_error_types_counts_negatives_and_final_errors():
    neg = DiscriminatorData(["x y", "x y", "z"], ["jump", "jump jump jump", "walk"], np.array([0, 0, 1]))
    train = [("x y", "I_JUMP I_JUMP"), ("z", "I_WALK")]

    def mk(name, preds, golds):
        correct = np.array([p == g for p, g in zip(preds, golds)])
        n = len(preds)
        return SetResult(name, "ID", ["x y"] * n, golds, preds, np.ones(n), correct, np.ones((n, 1), np.int8))

    dev = mk("dev", ["I_JUMP", "I_JUMP I_JUMP", "I_WALK I_JUMP"], ["I_JUMP I_JUMP"] * 3)
    test = mk("T", ["I_JUMP I_JUMP"], ["I_JUMP I_JUMP"])  # no errors: shares are NaN
    r = TaskResult("scan", dev, {"T": test}, neg, neg, np.zeros((0, 1)))
    t = error_types(r, train, tagging=False).set_index("source")
    assert list(t.index) == ["snapshot negatives", "final: dev", "final: T"]
    assert t.loc["snapshot negatives", "n_errors"] == 2
    assert t.loc["snapshot negatives", "prefix"] == pytest.approx(0.5)  # "jump" vs rendered gold "jump jump"
    assert t.loc["snapshot negatives", "longer"] == pytest.approx(0.5)
    assert t.loc["final: dev", "n_errors"] == 2 and t.loc["final: dev", "prefix"] == pytest.approx(0.5)
    assert t.loc["final: dev", "same length"] == pytest.approx(0.5)
    assert t.loc["final: T", "n_errors"] == 0 and np.isnan(t.loc["final: T", "prefix"])
    with pytest.raises(InputValidationError, match="no gold output"):
        error_types(r, train[1:], tagging=False)


# ------------------------------------------------------------------------- resume: never retrain a finished parser
PAIRS = [(f"{a} {b}", f"{b} {a}") for a in "pqrs" for b in "pqrs"]


def test_train_parser_resume_matches_uninterrupted(tmp_path):
    v = WordVocab.build([x for p in PAIRS for x in p])
    full = _tiny_parser(v)
    train_parser(
        full,
        PAIRS,
        v,
        max_steps=6,
        batch_size=4,
        checkpoint_dir=tmp_path / "a",
        snapshot_every=2,
        n_snapshots=2,
        device="cpu",
        progress=False,
    )
    part = _tiny_parser(v)
    r1 = train_parser(
        part,
        PAIRS,
        v,
        max_steps=3,
        batch_size=4,
        checkpoint_dir=tmp_path / "b",
        snapshot_every=2,
        n_snapshots=2,
        device="cpu",
        progress=False,
    )  # "interrupted" after 3 steps
    resumed = _tiny_parser(v)
    r2 = train_parser(
        resumed,
        PAIRS,
        v,
        max_steps=6,
        batch_size=4,
        checkpoint_dir=tmp_path / "b",
        snapshot_every=2,
        n_snapshots=2,
        device="cpu",
        progress=False,
    )
    assert r1.steps == 3 and r2.resumed_from == 3 and r2.steps == 6
    for a, b in zip(full.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)
    assert list(snapshot_paths(tmp_path / "a")) == list(snapshot_paths(tmp_path / "b")) == [2, 4]


def test_pipeline_resumes_without_retraining_or_redecoding(monkeypatch):
    task = Seq2SeqTask(
        "toy",
        PAIRS,
        PAIRS[:6],
        {"toy-ID": PAIRS[:8], "toy-OOD": PAIRS[8:]},
        {"toy-ID": "ID", "toy-OOD": "OOD"},
        max_new_tokens=4,
    )
    cfg = PipelineConfig(
        parser_config=tuple(TINY.items()),
        parser_steps=10,
        parser_batch_size=4,
        snapshot_every=2,
        n_snapshots=5,
        n_mine=None,
        disc_kind="scratch",
        n_members=2,
        disc_epochs=1,
        disc_batch_size=8,
        disc_lr=1e-3,
        beam_batch_size=16,
    )

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt("simulated interruption while training discriminators")

    real_train = pipeline_mod.train_discriminators
    monkeypatch.setattr(pipeline_mod, "train_discriminators", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_task(task, cfg, device="cpu", progress=False)
    monkeypatch.setattr(pipeline_mod, "train_discriminators", real_train)

    calls = {"beam": 0}
    real_beam = pipeline_mod.beam_search

    def counting_beam(*a, **k):
        calls["beam"] += 1
        return real_beam(*a, **k)

    monkeypatch.setattr(pipeline_mod, "beam_search", counting_beam)
    r = run_task(task, cfg, device="cpu", progress=False)
    assert r.info["parser_resumed_from"] == 10  # the finished parser was restored, not retrained
    assert calls["beam"] == 0  # snapshot beams, negatives and final outputs all came from the cache
    assert r.sets["toy-ID"].votes.shape == (8, 2)
    again = run_task(task, cfg, device="cpu", progress=False)
    assert np.array_equal(again.sets["toy-OOD"].votes, r.sets["toy-OOD"].votes)
    assert again.sets["toy-OOD"].predictions == r.sets["toy-OOD"].predictions


def test_negatives_from_the_last_snapshots_only(monkeypatch):
    """``negative_snapshots = m`` mines the last m snapshots, reusing their cached beams; m = all equals None."""
    task = Seq2SeqTask("toy", PAIRS, PAIRS[:6], {"toy-ID": PAIRS[:8]}, {"toy-ID": "ID"}, max_new_tokens=4)
    base = dict(parser_config=tuple(TINY.items()), parser_steps=6, parser_batch_size=4, snapshot_every=2,
                n_snapshots=3, n_mine=None, disc_kind="scratch", n_members=1, disc_epochs=1, disc_batch_size=8,
                disc_lr=1e-3, beam_batch_size=16)  # fmt: skip
    every = run_task(task, PipelineConfig(**base), device="cpu", progress=False)
    assert every.info["snapshot_steps"] == [2, 4, 6]
    assert "negative_snapshots" not in PipelineConfig(**base).key()  # off: keys (and caches) as before

    def no_decoding(*_a, **_k):
        raise AssertionError("the snapshots' beams were cached by the first run")

    monkeypatch.setattr(pipeline_mod, "beam_search", no_decoding)
    late = run_task(task, PipelineConfig(**base, negative_snapshots=2), device="cpu", progress=False)
    assert late.info["snapshot_steps"] == [4, 6]
    assert PipelineConfig(**base, negative_snapshots=2).key()["negative_snapshots"] == 2
    same = run_task(task, PipelineConfig(**base, negative_snapshots=3), device="cpu", progress=False)
    assert same.disc_train.items() == every.disc_train.items() and same.disc_dev.items() == every.disc_dev.items()
    for bad in (0, 4):
        with pytest.raises(InputValidationError, match="negative_snapshots: expected 1..3"):
            run_task(task, PipelineConfig(**base, negative_snapshots=bad), device="cpu", progress=False)


def test_negatives_need_the_parsers_snapshots(tmp_path):
    """Mining without the parser's snapshots is an error naming the folder, not a training set with 0 negatives."""
    task = Seq2SeqTask("toy", PAIRS, PAIRS[:6], {"toy-ID": PAIRS[:8]}, {"toy-ID": "ID"}, max_new_tokens=4)
    cfg = PipelineConfig(parser_config=tuple(TINY.items()), parser_steps=6, snapshot_every=2, n_snapshots=3)
    vocab = WordVocab.build([p[0] for p in PAIRS] + [p[1] for p in PAIRS])
    with pytest.raises(InputValidationError, match="parser snapshots: expected 3 .* found 0"):
        pipeline_mod._negative_sets(task, cfg, vocab, "key", tmp_path, dict(TINY), {})


def _member_hashes() -> dict[str, str]:
    import hashlib

    from helpers.paths import cache_dir

    return {
        str(p.relative_to(cache_dir())): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((cache_dir() / "checkpoints").glob("p1_disc_*/*"))
    }


def test_test_sets_do_not_reach_the_discriminators():
    """Adding a test set (with long gold outputs) leaves the discriminator data and members byte-identical."""
    base = Seq2SeqTask("toy", PAIRS, PAIRS[:6], {"toy-ID": PAIRS[:8]}, {"toy-ID": "ID"}, max_new_tokens=4,
                       output_per_input=1.0)  # fmt: skip
    long_gold = [("p q", "p q r s p q r s")] * 4  # a test label far longer than anything in training
    more = Seq2SeqTask("toy", PAIRS, PAIRS[:6], {"toy-ID": PAIRS[:8], "toy-long": long_gold},
                       {"toy-ID": "ID", "toy-long": "OOD"}, max_new_tokens=4, output_per_input=1.0)  # fmt: skip
    cfg = PipelineConfig(
        parser_config=tuple(TINY.items()), parser_steps=6, parser_batch_size=4, snapshot_every=2, n_snapshots=3,
        n_mine=None, disc_kind="scratch", n_members=2, disc_epochs=1, disc_batch_size=8, disc_lr=1e-3,
        beam_batch_size=16,
    )  # fmt: skip
    a = run_task(base, cfg, device="cpu", progress=False)
    hashes = _member_hashes()
    b = run_task(more, cfg, device="cpu", progress=False)
    assert len(hashes) == 4 and _member_hashes() == hashes  # one ensemble (weights + statistics), same bytes
    assert a.disc_train.items() == b.disc_train.items() and a.disc_dev.items() == b.disc_dev.items()
    assert np.array_equal(a.sets["toy-ID"].votes, b.sets["toy-ID"].votes)
    assert more.decode_budget([x for x, _ in long_gold]) == 4  # from the inputs (2 words × ratio 1 + 2), not gold


def test_load_task_training_side_ignores_the_test_sets(monkeypatch):
    """Train, dev and the decoding budget do not depend on the test sets (their size here)."""
    from conftest import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("data not available")
    monkeypatch.setenv("HELPERS_DATA", str(shared_data_dir()))
    from helpers.experiments.p1_bounds.tasks import load_task

    a = load_task("pos", n_train=100, n_dev=20, n_test=30, max_words=15)
    b = load_task("pos", n_train=100, n_dev=20, n_test=60, max_words=15)
    assert a.train == b.train and a.dev == b.dev and a.max_new_tokens == b.max_new_tokens
    assert a.max_new_tokens == 2 + max(len(o.split()) for _, o in a.train + a.dev)
    assert len(b.test_sets["POS-WSJ"]) == 60
    assert a.output_per_input == pytest.approx(1.0)  # a tagger: one tag per word


def test_finished_discriminators_are_restored_not_retrained(tmp_path, monkeypatch):
    ins = ["a b", "b a", "a a", "b b"] * 4
    outs = ["a b", "x", "a a", "y"] * 4
    data = DiscriminatorData(ins, outs, np.array([1, 0, 1, 0] * 4))
    v = WordVocab.build([*ins, *outs, "[SEP]"])
    kw = dict(
        kind="scratch", n_members=2, vocab=v, epochs=2, batch_size=4, lr=1e-3, device="cpu", progress=False
    )
    first = train_discriminators(data, checkpoint_dir=tmp_path, **kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["member0.json", "member0.pt", "member1.json", "member1.pt"]
    from helpers.seq2seq import discriminators as disc_mod

    def no_fit(*_a, **_k):
        raise AssertionError("a finished member was retrained")

    monkeypatch.setattr(disc_mod, "fit", no_fit)
    second = train_discriminators(data, checkpoint_dir=tmp_path, **kw)
    assert np.array_equal(
        discriminator_votes(first, ins, outs, device="cpu"),
        discriminator_votes(second, ins, outs, device="cpu"),
    )


@pytest.mark.parametrize("name", ["cogs", "pos"])
def test_cogs_and_pos_tasks(name, monkeypatch):
    from conftest import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("data not available")
    monkeypatch.setenv("HELPERS_DATA", str(shared_data_dir()))
    from helpers.data.pos import UNIVERSAL_TAGS
    from helpers.experiments.p1_bounds.tasks import load_task

    t = load_task(name, n_train=200, n_dev=20, n_test=30, max_words=20)
    assert len(t.train) == 200 and all(len(s) == 30 for s in t.test_sets.values())
    if name == "pos":
        assert t.shift == {"POS-WSJ": "ID", "POS-Brown": "OOD", "POS-EWT": "ID"}
        assert t.is_tagging and set(t.tag_set) <= set(UNIVERSAL_TAGS)
        assert t.decode_constraints(["a b c"]) == {"output_lengths": [3], "allowed_tokens": list(t.tag_set)}
        test_inputs = {x for pairs in t.test_sets.values() for x, _ in pairs}
        assert len(test_inputs & {x for x, _ in t.train}) <= 2  # a few short sentences recur verbatim in the corpora
        for pairs in t.test_sets.values():
            for x, y in pairs:
                assert len(x.split()) == len(y.split()) <= 20 and set(y.split()) <= set(UNIVERSAL_TAGS)
    else:
        assert t.shift == {"COGS-test": "ID", "COGS-gen": "OOD", "SLOG-gen": "OOD"}
    with pytest.raises(InputValidationError):
        load_task("cfq")


def test_train_parser_schedule_changes_training_and_bad_name_fails(tmp_path):
    v = WordVocab.build([x for p in PAIRS for x in p])
    kw = dict(max_steps=4, batch_size=4, lr=1e-2, device="cpu", progress=False)
    const, linear = _tiny_parser(v), _tiny_parser(v)
    train_parser(const, PAIRS, v, **kw)
    train_parser(linear, PAIRS, v, scheduler="linear", warmup=0.5, **kw)
    same = [torch.equal(a, b) for a, b in zip(const.state_dict().values(), linear.state_dict().values())]
    assert not all(same)  # the warm-up and decay change the steps taken
    with pytest.raises(InputValidationError, match="scheduler"):
        train_parser(_tiny_parser(v), PAIRS, v, scheduler="exponential", **kw)


def test_parser_schedule_enters_the_cache_key_only_when_set():
    assert "parser_schedule" not in PipelineConfig().key()  # off: keys (and caches) as before
    assert PipelineConfig(parser_schedule="linear").key()["parser_schedule"] == "linear"
