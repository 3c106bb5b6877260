"""Paper 1 POS and user test sets: constrained decoding (one tag per word), the most-frequent-tag baseline, tagging
scores, TSV / CoNLL-U test sets added by the user (labelled and unlabelled) and their path through the pipeline."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.data import read_seq2seq_tsv
from helpers.errors import DataNotFoundError, InputValidationError
from helpers.experiments.p1_bounds import PipelineConfig, Seq2SeqTask, run_task
from helpers.experiments.p1_bounds.analysis import estimates_table, recall_table, set_summary
from helpers.experiments.p1_bounds.tasks import add_test_sets
from helpers.seq2seq import WordVocab, beam_search, build_parser
from helpers.seq2seq.constraints import OutputConstraint
from helpers.seq2seq.tagging import MostFrequentTagger, position_tags, tag_dictionary, tagging_scores

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TINY = {"d_model": 8, "d_ff": 16, "num_layers": 1, "num_heads": 2, "d_kv": 4, "dropout_rate": 0.0}


# ------------------------------------------------------------------------------------------ constrained decoding
def test_beam_search_emits_exactly_one_allowed_tag_per_word():
    vocab = WordVocab.build(["a b c X Y Z"])
    model = build_parser(len(vocab), TINY, seed=0)
    inputs = ["a b c", "a", "b c", "c c c c"]
    free = beam_search(model, vocab, inputs, num_beams=3, max_new_tokens=6, device="cpu")
    r = beam_search(model, vocab, inputs, num_beams=3, max_new_tokens=6, device="cpu",
                    output_lengths=[3, 1, 2, 4], allowed_tokens=["X", "Y"])  # fmt: skip
    for x, beams in zip(inputs, r.beams):
        for b in beams:
            assert len(b.split()) == len(x.split()) and set(b.split()) <= {"X", "Y"}
    assert r.confidence.shape == (4,) and ((r.confidence > 0) & (r.confidence <= 1)).all()
    assert free.beams != r.beams  # an untrained model does not emit aligned tag sequences on its own


def test_fixed_length_beams_do_not_depend_on_early_stopping(monkeypatch):
    """A tagger's beams all end at the same step, so the canonical search returns what an early-stopped one did:
    the reason POS caches from before the search became canonical stay valid (pipeline ``_search_key``)."""
    vocab = WordVocab.build(["a b c X Y Z"])
    inputs = ["a b c", "a", "b c", "c c c c"]
    kw = dict(
        num_beams=3,
        max_new_tokens=6,
        device="cpu",
        output_lengths=[3, 1, 2, 4],
        allowed_tokens=["X", "Y", "Z"],
    )
    for seed in range(3):
        model = build_parser(len(vocab), TINY, seed=seed)
        canonical = beam_search(model, vocab, inputs, **kw)
        generate = model.generate
        monkeypatch.setattr(model, "generate", lambda g=generate, **a: g(**{**a, "early_stopping": True}))
        early = beam_search(model, vocab, inputs, **kw)
        monkeypatch.undo()
        assert canonical.beams == early.beams
        assert np.allclose(canonical.confidence, early.confidence)


def test_beam_search_is_the_canonical_search(monkeypatch):
    """``early_stopping=True`` with ``length_penalty=0`` returns beams that closed early (SCAN: dev exact match .30
    instead of .63); the search must run until no open beam can beat the finished ones."""
    vocab = WordVocab.build(["a b c"])
    model = build_parser(len(vocab), TINY, seed=0)
    seen = {}
    generate = model.generate

    def spy(**a):
        seen.update(a)
        return generate(**a)

    monkeypatch.setattr(model, "generate", spy)
    beam_search(model, vocab, ["a b"], num_beams=4, max_new_tokens=5, device="cpu")
    assert seen["early_stopping"] == "never" and seen["length_penalty"] == 0.0 and seen["num_beams"] == 4


def test_beam_search_constraint_bad_input():
    vocab = WordVocab.build(["a b X Y"])
    model = build_parser(len(vocab), TINY, seed=0)
    with pytest.raises(InputValidationError, match="output_lengths"):
        beam_search(model, vocab, ["a b"], output_lengths=[1, 2], device="cpu")
    with pytest.raises(InputValidationError, match="max_new_tokens"):
        beam_search(model, vocab, ["a b"], output_lengths=[6], max_new_tokens=6, device="cpu")
    with pytest.raises(InputValidationError, match="allowed_tokens"):
        beam_search(model, vocab, ["a b"], allowed_tokens=["NOPE"], device="cpu")


def test_beam_search_keeps_every_word_to_its_dictionary_tags():
    vocab = WordVocab.build(["a b c X Y Z"])
    model = build_parser(len(vocab), TINY, seed=0)
    inputs = ["a b c", "c a", "b b b b"]
    dictionary = {"a": ("X",), "b": ("Y", "Z")}  # "c" is not in it: any allowed tag
    kw = dict(num_beams=3, max_new_tokens=6, device="cpu", allowed_tokens=["X", "Y", "Z"],
              output_lengths=[3, 2, 4])  # fmt: skip
    r = beam_search(model, vocab, inputs, position_tokens=position_tags(inputs, dictionary), **kw)
    for x, beams in zip(inputs, r.beams):
        for b in beams:
            assert len(b.split()) == len(x.split())
            for w, tag in zip(x.split(), b.split()):
                assert tag in dictionary.get(w, ("X", "Y", "Z"))
    # one admissible tag per position: the beams can only be that sequence
    forced = beam_search(model, vocab, ["a b"], num_beams=2, max_new_tokens=4, device="cpu", output_lengths=[2],
                         position_tokens=[[("X",), ("Z",)]])  # fmt: skip
    assert forced.top == ["X Z"]
    with pytest.raises(InputValidationError, match="position_tokens"):
        beam_search(model, vocab, ["a b"], position_tokens=[[None, None]], device="cpu")  # no output_lengths
    with pytest.raises(InputValidationError, match="position_tokens"):
        beam_search(
            model, vocab, ["a b"], output_lengths=[2], position_tokens=[[("NOPE",), None]], device="cpu"
        )


def test_output_constraint_masks_by_position_hand_made():
    # 1 example, 2 beams, vocabulary of 5 ids (eos = 1); allowed 2, 3, 4; position 0: {2}, position 1: any
    proc = OutputConstraint(np.array([2]), [2, 3, 4], num_beams=2, eos_id=1, vocab_size=5,
                            position_ids=[[[2], None]])  # fmt: skip
    scores = torch.zeros(2, 5)
    out = proc(torch.zeros(2, 1, dtype=torch.long), scores)  # t = 0
    assert torch.isinf(out[:, [0, 1, 3, 4]]).all() and (out[:, 2] == 0).all()
    out = proc(torch.zeros(2, 2, dtype=torch.long), scores)  # t = 1: position 1 has no extra limit
    assert (out[:, [2, 3, 4]] == 0).all() and torch.isinf(out[:, [0, 1]]).all()
    out = proc(torch.zeros(2, 3, dtype=torch.long), scores)  # t = 2 = length: only </s>
    assert (out[:, 1] == 0).all() and torch.isinf(out[:, [0, 2, 3, 4]]).all()


def test_tag_dictionary_hand_computed():
    sents, tags = ["the dog runs", "the run", "dogs run fast"], ["DET NOUN VERB", "DET NOUN", "NOUN VERB ADV"]
    d = tag_dictionary(sents, tags)
    assert d == {"the": ("DET",), "dog": ("NOUN",), "runs": ("VERB",), "run": ("NOUN", "VERB"), "dogs": ("NOUN",),
                 "fast": ("ADV",)}  # fmt: skip
    assert tag_dictionary(sents, tags, min_count=2) == {"the": ("DET",), "run": ("NOUN", "VERB")}
    assert position_tags(["the cat run"], d) == [[("DET",), None, ("NOUN", "VERB")]]
    with pytest.raises(InputValidationError, match="min_count"):
        tag_dictionary(sents, tags, min_count=0)
    with pytest.raises(InputValidationError, match="one tag per word"):
        tag_dictionary(["a b"], ["X"])
    with pytest.raises(InputValidationError, match="equal, non-zero lengths"):
        tag_dictionary(["a b"], [])


def test_task_decode_constraints_read_the_dictionary_from_training_pairs_only():
    task = Seq2SeqTask("pos", train=[("the dog", "DET NOUN"), ("dog runs", "NOUN VERB")], dev=[("the", "DET")],
                       test_sets={"t": [("the runs", "PRON NOUN")]}, shift={"t": "ID"}, max_new_tokens=4,
                       tag_set=("DET", "NOUN", "PRON", "VERB"))  # fmt: skip
    kw = task.decode_constraints(["the cat runs"], dictionary_min_count=1)
    assert kw["position_tokens"] == [
        [("DET",), None, ("VERB",)]
    ]  # the test gold ("the" = PRON) is never read
    assert "position_tokens" not in task.decode_constraints(["the"])
    assert "decode_tag_dictionary" not in PipelineConfig().key()  # off: cache keys as before
    assert PipelineConfig(decode_tag_dictionary=1).key()["decode_tag_dictionary"] == 1


# ------------------------------------------------------------------------------------------ most-frequent tag
def test_most_frequent_tagger_hand_computed():
    sents = ["the dog", "the run", "dog run"]
    tags = ["DET NOUN", "DET VERB", "NOUN NOUN"]
    t = MostFrequentTagger().fit(sents, tags)
    # dog: NOUN x2; run: VERB x1, NOUN x1 -> tie broken by the overall count (NOUN 3 > VERB 1); unseen -> NOUN
    assert t.word_tag_ == {"the": "DET", "dog": "NOUN", "run": "NOUN"} and t.default_tag_ == "NOUN"
    assert t.predict(["the cat run", "The"]) == ["DET NOUN NOUN", "NOUN"]
    assert MostFrequentTagger(lowercase=True).fit(sents, tags).predict(["The"]) == ["DET"]
    with pytest.raises(InputValidationError, match="one tag per word"):
        MostFrequentTagger().fit(["a b"], ["X"])
    with pytest.raises(InputValidationError, match="fit"):
        MostFrequentTagger().predict(["a"])


def test_tagging_scores_hand_computed():
    s = tagging_scores(["A B", "A", "B B"], ["A B", "A C", "B A"])
    # exact: 1 of 3; tokens: 2 + 1 + 1 right of max-lengths 2 + 2 + 2; one prediction has the wrong length
    assert s == {"exact_match": pytest.approx(1 / 3), "token_accuracy": pytest.approx(4 / 6),
                 "wrong_length": pytest.approx(1 / 3), "n": 3}  # fmt: skip
    with pytest.raises(InputValidationError):
        tagging_scores(["A"], [])


# ------------------------------------------------------------------------------------------------ user sets
CONLLU = """# sent_id = 1
1\tthe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_

# sent_id = 2
1\tdogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\trun\trun\tVERB\tVBP\t_\t0\troot\t_\t_

"""


def _unlabelled(text: str) -> str:
    rows = [line.split("\t") for line in text.splitlines()]
    return "\n".join("\t".join(r[:3] + ["_", "_"] + r[5:]) if len(r) == 10 else r[0] for r in rows) + "\n"


def _tag_task() -> Seq2SeqTask:
    train = [("the dog runs", "DET NOUN VERB"), ("dogs run", "NOUN VERB"), ("the dogs", "DET NOUN")] * 4
    return Seq2SeqTask("pos", train, train[:3], {"toy-ID": train[:3]}, {"toy-ID": "ID"}, max_new_tokens=5,
                       output_per_input=1.0, tag_set=("DET", "NOUN", "VERB"))  # fmt: skip


def test_read_seq2seq_tsv(tmp_path):
    (tmp_path / "a.tsv").write_text("jump twice\tjump jump\n\nwalk\twalk\n")
    assert read_seq2seq_tsv(tmp_path / "a.tsv") == [("jump twice", "jump jump"), ("walk", "walk")]
    (tmp_path / "b.tsv").write_text("jump twice\nwalk  left\n")
    assert read_seq2seq_tsv(tmp_path / "b.tsv") == [("jump twice", None), ("walk left", None)]
    (tmp_path / "mixed.tsv").write_text("jump\tjump\nwalk\n")
    with pytest.raises(InputValidationError, match="all or none"):
        read_seq2seq_tsv(tmp_path / "mixed.tsv")
    (tmp_path / "wide.tsv").write_text("a\tb\tc\n")
    with pytest.raises(InputValidationError, match="3 columns"):
        read_seq2seq_tsv(tmp_path / "wide.tsv")
    with pytest.raises(DataNotFoundError):
        read_seq2seq_tsv(tmp_path / "missing.tsv")


def test_add_test_sets_conllu_labelled_and_unlabelled(tmp_path):
    (tmp_path / "mine.conllu").write_text(CONLLU)
    (tmp_path / "raw.conllu").write_text(_unlabelled(CONLLU))
    t = add_test_sets(_tag_task(), [tmp_path / "mine.conllu", str(tmp_path / "raw.conllu")])
    assert t.test_sets["mine"] == [("the dog runs", "DET NOUN VERB"), ("dogs run", "NOUN VERB")]
    assert t.test_sets["raw"] == [("the dog runs", None), ("dogs run", None)]
    assert t.shift == {"toy-ID": "ID", "mine": "extra", "raw": "extra"}
    assert t.train == _tag_task().train and t.max_new_tokens == 5  # training side untouched
    with pytest.raises(InputValidationError, match="already exists"):
        add_test_sets(t, [tmp_path / "mine.conllu"])
    (tmp_path / "adj.conllu").write_text(CONLLU.replace("\tDET\t", "\tADJ\t"))
    with pytest.raises(InputValidationError, match="ADJ"):
        add_test_sets(_tag_task(), [tmp_path / "adj.conllu"])
    (tmp_path / "x.tsv").write_text("a\tb\n")
    with pytest.raises(InputValidationError, match="CoNLL-U"):
        add_test_sets(_tag_task(), [tmp_path / "x.tsv"])


def test_your_sets_are_filtered_and_subsampled_like_the_built_in_ones(tmp_path):
    """A user set enters as the built-in sets do (#44 item 4): sentences of at most ``max_words`` words, then
    ``n_test`` of them on the set's own seeded stream; ``None`` keeps it whole."""
    long = "# sent_id = 3\n" + "".join(f"{i}\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\n" for i in range(1, 8)) + "\n"
    (tmp_path / "big.conllu").write_text(CONLLU * 20 + long * 5)  # 40 short sentences, 5 of seven words
    whole = add_test_sets(_tag_task(), [tmp_path / "big.conllu"]).test_sets["big"]
    assert len(whole) == 45
    cut = add_test_sets(_tag_task(), [tmp_path / "big.conllu"], n_test=10, max_words=5, seed=0).test_sets["big"]
    assert len(cut) == 10 and all(len(x.split()) <= 5 for x, _ in cut)
    again = add_test_sets(_tag_task(), [tmp_path / "big.conllu"], n_test=10, max_words=5, seed=0).test_sets["big"]
    assert cut == again  # seeded
    assert add_test_sets(_tag_task(), [tmp_path / "big.conllu"], max_words=5).test_sets["big"] == [
        p for p in whole if len(p[0].split()) <= 5
    ]
    with pytest.raises(InputValidationError, match="none of its 45 sentences has at most 1 words"):
        add_test_sets(_tag_task(), [tmp_path / "big.conllu"], max_words=1)


def test_a_malformed_conllu_line_names_the_file_and_the_line(tmp_path):
    bad = CONLLU.replace("2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_", "2\tdog\tNOUN")
    (tmp_path / "bad.conllu").write_text(bad)
    with pytest.raises(InputValidationError, match=r"bad\.conllu, line 3: 3 tab-separated columns, expected 10"):
        add_test_sets(_tag_task(), [tmp_path / "bad.conllu"])


def test_unlabelled_and_tagging_sets_through_the_pipeline(tmp_path):
    (tmp_path / "raw.conllu").write_text(_unlabelled(CONLLU))
    (tmp_path / "mine.conllu").write_text(CONLLU)
    task = add_test_sets(_tag_task(), [tmp_path / "raw.conllu", tmp_path / "mine.conllu"])
    cfg = PipelineConfig(
        parser_config=tuple(TINY.items()), parser_steps=6, parser_batch_size=4, snapshot_every=2, n_snapshots=3,
        n_mine=None, max_negative_ratio=None, disc_kind="scratch", n_members=2, disc_epochs=1, disc_batch_size=8,
        disc_lr=1e-3, beam_batch_size=16, disc_select_on_dev=False,
    )  # fmt: skip
    r = run_task(task, cfg, device="cpu", progress=False)
    for s in [r.dev, *r.sets.values()]:  # a tagger emits one known tag per word, also on unseen sentences
        for x, p in zip(s.inputs, s.predictions):
            assert len(p.split()) == len(x.split()) and set(p.split()) <= set(task.tag_set)
    raw = r.sets["raw"]
    assert not raw.labelled and raw.golds is None and np.isnan(raw.accuracy) and raw.votes.shape == (2, 2)
    est = estimates_table(r)
    f = est[est["set"] == "raw"].set_index("method")
    assert "Gold" not in f.index and f["abs_error"].isna().all()
    assert f.loc["Upper", "accuracy"] == pytest.approx(raw.votes.any(1).mean())
    assert "Gold" in est[est["set"] == "mine"]["method"].values
    assert set(recall_table(r)["set"]) == {"toy-ID", "mine"}
    summ = set_summary(est).set_index("set")
    assert np.isnan(summ.loc["raw", "gold"]) and summ.loc["raw", "width"] == pytest.approx(
        summ.loc["raw", "upper"] - summ.loc["raw", "lower"]
    )


def test_assign_test_files():
    from helpers.experiments.p1_bounds.tasks import assign_test_files

    assert assign_test_files(["a.conllu", "b.tsv"], ["scan", "pos"]) == {
        "pos": ["a.conllu"],
        "scan": ["b.tsv"],
    }
    assert assign_test_files({"cogs": ["c.tsv"]}, ["scan", "cogs"]) == {"cogs": ["c.tsv"]}
    assert assign_test_files([], ["scan"]) == {}
    with pytest.raises(InputValidationError, match="dict"):
        assign_test_files(["b.tsv"], ["scan", "cogs"])
    with pytest.raises(InputValidationError, match=r"not run .*-p 'tasks=\[scan, pos\]'"):
        assign_test_files(["a.conllu"], ["scan"])
    with pytest.raises(InputValidationError, match="list of paths"):
        assign_test_files("a.conllu", ["pos"])


@pytest.mark.slow
def test_notebook_01_takes_your_own_test_sets(tmp_path):
    """``-p extra_test_sets=[...]``: a labelled and an unlabelled TSV set reach the summary table of notebook 01."""
    from conftest import shared_data_dir

    from helpers.run import runner

    if shared_data_dir() is None:
        pytest.skip("data not available")
    (tmp_path / "my_scan.tsv").write_text("jump twice\tI_JUMP I_JUMP\nwalk left\tI_TURN_LEFT I_WALK\n")
    (tmp_path / "my_raw.tsv").write_text("run thrice\nlook\n")
    files = [str(tmp_path / "my_scan.tsv"), str(tmp_path / "my_raw.tsv")]
    run = runner.run_notebooks(profile="smoke", only=["01_discriminator_bounds"], echo=False,
                               parameters={"extra_test_sets": files})[0]  # fmt: skip
    assert run.status == "ok", f"failed at cell {run.failed_cell}: {run.error}"
    import pandas as pd

    from helpers.paths import figures_dir

    summ = pd.read_csv(figures_dir() / "01_discriminator_bounds_summary.csv").set_index("set")
    assert {"my_scan", "my_raw"} <= set(summ.index)
    assert summ.loc["my_scan", "shift"] == "extra" and summ.loc["my_scan", "gold"] in (0.0, 0.5, 1.0)
    assert (
        np.isnan(summ.loc["my_raw", "gold"])
        and 0 <= summ.loc["my_raw", "lower"] <= summ.loc["my_raw", "upper"]
    )


def test_vote_auc_column_hand_computed():
    from helpers.experiments.p1_bounds.pipeline import SetResult, TaskResult
    from helpers.seq2seq import DiscriminatorData

    votes = np.array([[1, 1], [1, 0], [0, 0], [1, 1]], dtype=np.int8)  # mean votes 1, .5, 0, 1
    correct = np.array([True, True, False, False])
    preds = ["a", "a b b", "a b", "a b c"]  # lengths 1, 3, 2, 3
    s = SetResult("s", "ID", ["i"] * 4, ["g"] * 4, preds, np.full(4, 0.5), correct, votes)
    empty = DiscriminatorData([], [], np.zeros(0, dtype=int))
    r = TaskResult("t", s, {"s": s}, empty, empty, np.zeros((0, 2)))
    # positive scores {1, .5} vs negative {0, 1}: pairs 1 + .5 + 1 + 0 = 2.5 of 4
    assert recall_table(r).loc[0, "Vote AUC"] == pytest.approx(0.625)
    row = r.info_row()
    assert row["vote_auc_final_dev"] == pytest.approx(0.625)
    # length only (shorter = Correct): positives -1, -3 vs negatives -2, -3: pairs 1 + 1 + 0 + .5 = 2.5 of 4
    assert row["length_auc_final_dev"] == pytest.approx(0.625)
    assert np.isnan(row["length_auc_disc_dev"])  # no discriminator dev pairs: undefined, not 0.5


def test_notebook_01_settings_are_shared_with_notebook_06():
    from helpers.experiments.p1_bounds.settings import notebook_parameters, pipeline_config

    params = notebook_parameters("default")
    cfg = pipeline_config(params, "scan")
    assert cfg.parser_steps == params["task_overrides"].get("scan", {}).get(
        "parser_steps", params["parser_steps"]
    )
    scan_over = params["task_overrides"].get("scan", {})
    assert cfg.n_mine == params["n_mine"]
    assert cfg.disc_epochs == scan_over.get("disc_epochs", params["disc_epochs"])
    assert cfg.disc_kind == scan_over.get("disc_kind", params["disc_kind"])
    smoke = pipeline_config(notebook_parameters("smoke"), "scan")
    assert smoke.disc_kind == "scratch" and smoke.disc_freeze_layers == 0  # frozen layers are MiniLM-only
    short = notebook_parameters("default", parser_steps=7, snapshot_every=1, task_overrides={})
    assert pipeline_config(short, "pos").parser_steps == 7
    with pytest.raises(InputValidationError, match="exceeds parser_steps"):  # 5 snapshots every 400 steps > 7
        pipeline_config(notebook_parameters("default", parser_steps=7, task_overrides={}), "pos")
    with pytest.raises(InputValidationError, match="not parameters"):
        notebook_parameters("default", no_such_knob=1)
    with pytest.raises(InputValidationError, match="PipelineConfig"):
        pipeline_config({**params, "task_overrides": {"scan": {"nope": 1}}}, "scan")


def test_unk_singletons_replaces_only_once_seen_source_words():
    from helpers.seq2seq.parser import Seq2SeqDataset

    pairs = [("the dog runs", "D N V"), ("the cat", "D N"), ("a dog", "D N")]  # once: runs, cat, a
    vocab = WordVocab.build([p[0] for p in pairs] + [p[1] for p in pairs])
    unk = vocab.unk_id
    plain = Seq2SeqDataset(pairs, vocab)
    assert all(unk not in src for src, _ in plain.items)
    every = Seq2SeqDataset(pairs, vocab, unk_singletons=1.0)
    once = {vocab.stoi[w] for w in ("runs", "cat", "a")}
    for (src, tgt), (s0, t0) in zip(every.items, plain.items):
        assert tgt == t0 and src == [unk if i in once else i for i in s0]
    rare = [(f"w{i} the", "N D") for i in range(200)]  # every w{i} is seen once
    rv = WordVocab.build([p[0] for p in rare] + ["N D"])
    half = [Seq2SeqDataset(rare, rv, unk_singletons=0.5, seed=s).items for s in (0, 0, 1)]
    assert half[0] == half[1] and half[0] != half[2]  # drawn from the seed: identical on resume
    share = np.mean([src[0] == rv.unk_id for src, _ in half[0]])
    assert 0.4 < share < 0.6 and all(src[1] == rv.stoi["the"] for src, _ in half[0])
    with pytest.raises(InputValidationError, match="unk_singletons"):
        Seq2SeqDataset(pairs, vocab, unk_singletons=1.5)


def test_pipeline_config_key_is_unchanged_by_a_default_unk_singletons():
    cfg = PipelineConfig()
    assert "parser_unk_singletons" not in cfg.key()
    assert PipelineConfig(parser_unk_singletons=0.5).key()["parser_unk_singletons"] == 0.5


def test_unknown_word_classes_hand_computed():
    from helpers.seq2seq.vocab import UNK_SIGNATURES, unk_signature

    assert unk_signature("walking") == "<unk:ing>"
    assert unk_signature("Walked") == "<unk:Ced>"
    assert unk_signature("x-ray") == "<unk:hyph>"
    assert unk_signature("B52") == "<unk:Cnum>"
    assert unk_signature("is") == "<unk:other>"  # suffixes count from 4 characters on
    assert unk_signature("cats") == "<unk:s>"
    assert unk_signature("Zyx") == "<unk:Cother>"
    assert len(set(UNK_SIGNATURES)) == len(UNK_SIGNATURES) == 2 * 19


def test_vocab_with_classes_encodes_unknown_words_by_class_and_round_trips():
    from helpers.seq2seq import WordVocab
    from helpers.seq2seq.parser import Seq2SeqDataset

    plain = WordVocab.build(["the dog barks", "DET NOUN VERB"])
    assert not plain.signatures and plain.encode("the cat") == [plain.stoi["the"], plain.unk_id, plain.eos_id]
    v = WordVocab.build(["the dog barks", "DET NOUN VERB"], unk_signatures=True)
    assert v.signatures and WordVocab(v.to_list()).signatures
    assert v.encode("the jumping Cats", add_eos=False) == [
        v.stoi["the"],
        v.stoi["<unk:ing>"],
        v.stoi["<unk:Cs>"],
    ]
    assert v.encode("dog barks") == plain.encode("dog barks")  # known words keep their ids
    # a once-seen training word replaced with probability 1 becomes its class token, as an unseen test word will
    ds = Seq2SeqDataset([("the dog barks", "DET NOUN VERB"), ("the dog", "DET NOUN")], v, unk_singletons=1.0)
    assert ds[0][0] == v.encode("the dog <unk:s>")


def test_a_task_override_may_pick_the_discriminator_kind_and_drops_minilm_freezing():
    from helpers.experiments.p1_bounds.settings import pipeline_config

    params = {"disc_kind": "minilm", "disc_freeze_layers": 4, "disc_lr": 2e-4,
              "task_overrides": {"scan": {"disc_kind": "scratch", "disc_lr": 1e-3}}}  # fmt: skip
    scan, pos = pipeline_config(params, "scan"), pipeline_config(params, "pos")
    assert (scan.disc_kind, scan.disc_freeze_layers, scan.disc_lr) == ("scratch", 0, 1e-3)
    assert (pos.disc_kind, pos.disc_freeze_layers, pos.disc_lr) == ("minilm", 4, 2e-4)
    with pytest.raises(InputValidationError):
        pipeline_config({**params, "task_overrides": {"scan": {"disc_kinds": "x"}}}, "scan")
