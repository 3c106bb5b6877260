"""Length bucketing in helpers.training.fit, the biLSTM max/mean read-out, MiniLM head+tail truncation and the
per-member recipes of notebook 02's suite."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.errors import InputValidationError, UnknownNameError
from helpers.models.text import LSTMClassifier, Vocab
from helpers.training import fit
from helpers.training.data import _epoch_order


def _gen(seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def test_bucketed_epoch_covers_every_example_once_and_groups_lengths():
    rng = np.random.default_rng(0)
    lengths = torch.as_tensor(rng.integers(1, 500, size=1000))
    plain = _epoch_order(1000, _gen(), shuffle=True, batch_size=20)
    sortish = _epoch_order(1000, _gen(), shuffle=True, batch_size=20, lengths=lengths, pool_batches=10)
    for batches in (plain, sortish):
        assert sorted(torch.cat(batches).tolist()) == list(range(1000))
        assert len(batches) == 50

    # padding waste: sum over batches of (max length - mean length)
    def waste(batches):
        return sum(float(lengths[b].max() - lengths[b].float().mean()) for b in batches)

    assert waste(sortish) < 0.2 * waste(plain)
    again = _epoch_order(1000, _gen(), shuffle=True, batch_size=20, lengths=lengths, pool_batches=10)
    assert all(torch.equal(a, b) for a, b in zip(sortish, again))  # deterministic given the generator
    # batches are not in length order (the batch order is shuffled)
    firsts = [int(lengths[b].max()) for b in sortish]
    assert firsts != sorted(firsts)


def test_bucketed_drop_last_drops_only_the_short_batch():
    lengths = torch.arange(105)
    batches = _epoch_order(105, _gen(), shuffle=True, batch_size=10, lengths=lengths, drop_last=True)
    assert len(batches) == 10 and all(len(b) == 10 for b in batches)


def test_fit_with_lengths_is_deterministic_and_validates():
    vocab = Vocab.build(["a good film", "a bad film", "great", "boring plot here now"], min_freq=1)
    texts = ["a good film", "a bad film", "great", "boring plot here now"] * 5
    data = vocab.dataset(texts, [1, 0, 1, 0] * 5)
    lens = [len(ids) for ids, _ in data]

    def run():
        torch.manual_seed(0)
        model = LSTMClassifier(len(vocab), dim=8, hidden=8, pooling="max")
        res = fit(model, data, epochs=2, batch_size=4, lengths=lens, collate_fn=Vocab.collate, progress=False)
        return res, [p.detach().clone() for p in model.parameters()]

    (r1, p1), (r2, p2) = run(), run()
    assert r1.steps == 10 and r1.losses == r2.losses
    assert all(torch.equal(a, b) for a, b in zip(p1, p2))
    with pytest.raises(InputValidationError, match="one length per training example"):
        fit(LSTMClassifier(len(vocab)), data, lengths=lens[:-1], collate_fn=Vocab.collate, progress=False)


@pytest.mark.parametrize("pooling", ["max", "mean"])
def test_lstm_pooled_readout_ignores_padding(pooling):
    torch.manual_seed(0)
    model = LSTMClassifier(20, dim=6, hidden=5, pooling=pooling).eval()
    ids = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    with torch.no_grad():
        both = model.features(ids)
        alone = model.features(ids[1:, :2])
        seq, _ = model.lstm(model.embedding(ids[1:, :2]))  # unpadded sequence, by hand
    expected = seq[0].max(0).values if pooling == "max" else seq[0].mean(0)
    torch.testing.assert_close(both[1], alone[0])
    torch.testing.assert_close(alone[0], expected)
    with pytest.raises(InputValidationError, match="pooling"):
        LSTMClassifier(20, pooling="first")


def test_minilm_head_tail_truncation_keeps_first_quarter_and_the_end():
    from helpers.models.minilm import MiniLMCollator, load_minilm

    tok, _ = load_minilm(num_layers=1)
    words = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    words += " seventeen eighteen"
    collate = MiniLMCollator(tok, max_length=16, truncation="head_tail")
    enc = collate.encode([words, "a short one"])
    # 16 tokens = [CLS] + first 4 + last 10 + [SEP]
    assert tok.decode(enc["input_ids"][0]) == (
        "[CLS] one two three four nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen [SEP]"
    )
    head = MiniLMCollator(tok, max_length=16).encode(["a short one"])
    assert enc["input_ids"][1, :5].tolist() == head["input_ids"][0, :5].tolist()  # short texts: unchanged
    assert enc["attention_mask"][1].tolist() == [1] * 5 + [0] * 11
    with pytest.raises(InputValidationError, match="truncation"):
        MiniLMCollator(tok, truncation="tail")


def test_suite_recipes_overrides():
    from helpers.experiments.p2_selective.suite import RECIPES, SUITE, TARGETS, SuiteConfig

    assert set(RECIPES) == set(SUITE) == set(TARGETS)
    cfg = SuiteConfig(overrides={"*": {"epochs": 1}, "lstm_random": {"epochs": 3, "max_len": 64}})
    assert cfg.recipe("lstm_random").epochs == 3 and cfg.recipe("lstm_random").max_len == 64
    assert cfg.recipe("bow_sum").epochs == 1 and cfg.recipe("bow_sum").max_len == RECIPES["bow_sum"].max_len
    with pytest.raises(InputValidationError, match="unknown recipe field 'epoch'"):
        SuiteConfig(overrides={"bow_sum": {"epoch": 2}}).recipe("bow_sum")
    with pytest.raises(UnknownNameError):
        SuiteConfig(overrides={"gpt": {"epochs": 2}}).recipe("bow_sum")
