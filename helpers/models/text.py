"""Light text classifiers over a simple word vocabulary, plus the vocabulary and a dynamic-padding collate.

Models (all take a padded ``LongTensor`` of word ids, shape ``(N, T)``, id 0 = padding, and return logits):

* :class:`BagOfWords`: logits = b + Σ_t W[w_t] (a linear model on word counts; ``nn.EmbeddingBag`` in sum mode);
* :class:`EmbeddingSum`: h = Σ_t E[w_t] (or the mean), then Linear; ``E`` can start from MiniLM's WordPiece
  embedding matrix (:func:`minilm_word_embeddings`);
* :class:`TextCNN`: Kim, "Convolutional Neural Networks for Sentence Classification", EMNLP 2014 (filters of
  widths 3, 4, 5, max-pooling over time);
* :class:`LSTMClassifier`: (bi)LSTM over the packed sequence, final hidden states → Linear (Hochreiter &
  Schmidhuber 1997).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError
from helpers.models.registry import MODELS

__all__ = [
    "tokenize",
    "Vocab",
    "BagOfWords",
    "EmbeddingSum",
    "TextCNN",
    "LSTMClassifier",
    "minilm_word_embeddings",
    "PAD",
    "UNK",
]

PAD, UNK = "<pad>", "<unk>"
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokenizer: runs of letters/digits (with an optional ``'s``-style suffix) and single symbols."""
    return _TOKEN_RE.findall(text.lower())


class Vocab:
    """Word ↔ id map with ``<pad>`` = 0 and ``<unk>`` = 1.

    Parameters
    ----------
    tokens : list of str
        Words in id order, starting with ``<pad>``, ``<unk>``.

    Examples
    --------
    >>> v = Vocab.build(["a good film", "a bad film"], min_freq=1)
    >>> v.encode("a good plot")
    [2, 5, 1]
    """

    def __init__(self, tokens: Sequence[str]):
        if list(tokens[:2]) != [PAD, UNK]:
            raise InputValidationError(
                f"tokens: expected to start with {PAD!r}, {UNK!r}, got {list(tokens[:2])}"
            )
        self.itos = list(tokens)
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str], *, min_freq: int = 2, max_size: int | None = 20000) -> Vocab:
        """Vocabulary of the words occurring ≥ ``min_freq`` times, most frequent first (ties alphabetical)."""
        counts = Counter(tok for t in texts for tok in tokenize(t))
        words = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        if max_size is not None:
            words = words[: max(0, max_size - 2)]
        return cls([PAD, UNK, *words])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str, *, max_len: int | None = None) -> list[int]:
        """Word ids of ``text`` (unknown words → 1), truncated to ``max_len``."""
        ids = [self.stoi.get(t, 1) for t in tokenize(text)]
        return ids[:max_len] if max_len is not None else ids

    def encode_batch(self, texts: Iterable[str], *, max_len: int | None = None) -> list[list[int]]:
        """:meth:`encode` for many texts."""
        return [self.encode(t, max_len=max_len) for t in texts]

    @staticmethod
    def pad(seqs: Sequence[Sequence[int]]) -> torch.Tensor:
        """Right-pad id lists with 0 to the longest (at least 1), shape ``(N, T)``."""
        t = max(1, max((len(s) for s in seqs), default=1))
        out = torch.zeros((len(seqs), t), dtype=torch.long)
        for i, s in enumerate(seqs):
            if len(s):
                out[i, : len(s)] = torch.as_tensor(s, dtype=torch.long)
        return out

    @staticmethod
    def collate(items: Sequence[Any]) -> Any:
        """``collate_fn`` for items ``ids``, ``(ids, label)`` or ``(ids, label, weight)``: dynamic padding."""
        if not items:
            raise InputValidationError("items: empty batch")
        first = items[0]
        if isinstance(first, tuple):
            x = Vocab.pad([it[0] for it in items])
            y = torch.as_tensor([int(it[1]) for it in items], dtype=torch.long)
            if len(first) > 2:
                return x, y, torch.as_tensor([float(it[2]) for it in items], dtype=torch.float32)
            return x, y
        return Vocab.pad(items)

    def dataset(
        self,
        texts: Sequence[str],
        labels: Sequence[int] | None = None,
        weights: Sequence[float] | None = None,
        *,
        max_len: int | None = 256,
    ) -> list[Any]:
        """A list-of-items dataset for :func:`helpers.training.fit` / ``predict`` (use ``collate_fn=Vocab.collate``).

        Items are ``ids`` (no labels), ``(ids, label)`` or ``(ids, label, weight)``.
        """
        ids = self.encode_batch(texts, max_len=max_len)
        if labels is None:
            return ids
        if weights is None:
            return [(i, int(y)) for i, y in zip(ids, labels)]
        return [(i, int(y), float(w)) for i, y, w in zip(ids, labels, weights)]


def pad_sequences(seqs: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    """Right-pad id lists with ``value`` to the longest, shape ``(N, T)`` of int64 (every list non-empty)."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


def _mask(ids: torch.Tensor) -> torch.Tensor:
    return ids != 0


class BagOfWords(nn.Module):
    """Linear classifier on word counts: logits = b + Σ_t W[w_t] (padding contributes 0)."""

    def __init__(self, vocab_size: int, num_classes: int = 2):
        super().__init__()
        self.weights = nn.EmbeddingBag(vocab_size, num_classes, mode="sum", padding_idx=0)
        nn.init.zeros_(self.weights.weight)
        self.bias = nn.Parameter(torch.zeros(num_classes))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.weights(ids) + self.bias


class EmbeddingSum(nn.Module):
    """Sum (or mean) of word embeddings, then a linear layer.

    Parameters
    ----------
    vocab_size, num_classes : int
    dim : int, default 64
        Embedding size (ignored when ``pretrained`` is given).
    pooling : {"sum", "mean"}, default "sum"
    pretrained : torch.Tensor, optional
        Initial embedding matrix ``(vocab_size, dim)``, e.g. from :func:`minilm_word_embeddings`.
    freeze_embeddings : bool, default False
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int = 2,
        *,
        dim: int = 64,
        pooling: str = "sum",
        pretrained: torch.Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        if pooling not in ("sum", "mean"):
            raise InputValidationError(f"pooling: expected 'sum' or 'mean', got {pooling!r}")
        if pretrained is not None:
            if pretrained.shape[0] != vocab_size:
                raise InputValidationError(
                    f"pretrained: expected {vocab_size} rows (one per word), got shape {tuple(pretrained.shape)}"
                )
            dim = pretrained.shape[1]
        self.embedding = nn.EmbeddingBag(vocab_size, dim, mode=pooling, padding_idx=0)
        if pretrained is not None:
            with torch.no_grad():
                self.embedding.weight.copy_(pretrained)
                self.embedding.weight[0].zero_()
        self.embedding.weight.requires_grad_(not freeze_embeddings)
        self.feature_dim = dim
        self.classifier = nn.Linear(dim, num_classes)

    def features(self, ids: torch.Tensor) -> torch.Tensor:
        """Pooled embedding, shape ``(N, dim)``."""
        return self.embedding(ids)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(ids))


class TextCNN(nn.Module):
    """Kim (2014) CNN: embeddings → Conv1d (widths ``kernel_sizes``, ``filters`` each) → ReLU → masked max over
    time → dropout → Linear."""

    def __init__(
        self,
        vocab_size: int,
        num_classes: int = 2,
        *,
        dim: int = 64,
        filters: int = 64,
        kernel_sizes: Sequence[int] = (3, 4, 5),
        dropout: float = 0.3,
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, k, padding=k // 2) for k in kernel_sizes)
        self.dropout = nn.Dropout(dropout)
        self.feature_dim = filters * len(kernel_sizes)
        self.classifier = nn.Linear(self.feature_dim, num_classes)

    def features(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.embedding(ids).transpose(1, 2)  # (N, dim, T)
        mask = _mask(ids)
        pooled = []
        for conv in self.convs:
            h = F.relu(conv(e))[:, :, : ids.shape[1]]  # (N, filters, T)
            h = h.masked_fill(~mask[:, None, : h.shape[2]], float("-inf"))
            p = h.max(dim=2).values
            pooled.append(torch.where(torch.isinf(p), torch.zeros_like(p), p))  # all-padding rows → 0
        return torch.cat(pooled, dim=1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(self.features(ids)))


class LSTMClassifier(nn.Module):
    """Embeddings → (bi)LSTM over the packed sequence → read-out → dropout → Linear.

    ``pooling`` is the read-out: ``"last"`` = the final hidden state of each direction; ``"max"`` / ``"mean"`` =
    the element-wise max / mean of the hidden states over the (unpadded) time steps, which trains much faster on
    long documents (Conneau et al., "Supervised Learning of Universal Sentence Representations", EMNLP 2017,
    BiLSTM-max).
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int = 2,
        *,
        dim: int = 64,
        hidden: int = 64,
        num_layers: int = 1,
        bidirectional: bool = True,
        dropout: float = 0.3,
        pooling: str = "last",
    ):
        super().__init__()
        if pooling not in ("last", "max", "mean"):
            raise InputValidationError(f"pooling: expected 'last', 'max' or 'mean', got {pooling!r}")
        self.pooling = pooling
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.lstm = nn.LSTM(
            dim,
            hidden,
            num_layers=num_layers,
            batch_first=True,
            bidirectional=bidirectional,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(dropout)
        self.feature_dim = hidden * (2 if bidirectional else 1)
        self.classifier = nn.Linear(self.feature_dim, num_classes)

    def features(self, ids: torch.Tensor) -> torch.Tensor:
        lengths = _mask(ids).sum(1).clamp_min(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(
            self.embedding(ids), lengths, batch_first=True, enforce_sorted=False
        )
        out, (h, _) = self.lstm(packed)
        if self.pooling != "last":
            fill = float("-inf") if self.pooling == "max" else 0.0
            seq, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, padding_value=fill)  # (N, T', H)
            if self.pooling == "max":
                return seq.max(dim=1).values
            return seq.sum(dim=1) / lengths.to(seq.device, seq.dtype)[:, None]
        if self.lstm.bidirectional:
            return torch.cat([h[-2], h[-1]], dim=1)
        return h[-1]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(self.features(ids)))


def minilm_word_embeddings(vocab: Vocab) -> torch.Tensor:
    """Initial word embeddings from MiniLM-L6's WordPiece embedding matrix (384-d).

    Each word's vector is the mean of the input embeddings of its WordPiece pieces (no context); ``<pad>`` is 0 and
    ``<unk>`` is MiniLM's ``[UNK]`` vector.

    Returns
    -------
    torch.Tensor of float32, shape (len(vocab), 384)
    """
    from helpers.models.minilm import load_minilm

    tokenizer, encoder = load_minilm(num_layers=1)
    table = encoder.get_input_embeddings().weight.detach()
    out = torch.zeros((len(vocab), table.shape[1]), dtype=torch.float32)
    out[1] = table[tokenizer.unk_token_id]
    for i, word in enumerate(vocab.itos[2:], start=2):
        pieces = tokenizer.encode(word, add_special_tokens=False) or [tokenizer.unk_token_id]
        out[i] = table[pieces].mean(0)
    return out


@MODELS.register("bow")
def bow(vocab_size: int, num_classes: int = 2) -> BagOfWords:
    """:class:`BagOfWords`."""
    return BagOfWords(vocab_size, num_classes)


@MODELS.register("embsum")
def embsum(vocab_size: int, num_classes: int = 2, **kwargs: Any) -> EmbeddingSum:
    """:class:`EmbeddingSum`."""
    return EmbeddingSum(vocab_size, num_classes, **kwargs)


@MODELS.register("textcnn")
def textcnn(vocab_size: int, num_classes: int = 2, **kwargs: Any) -> TextCNN:
    """:class:`TextCNN`."""
    return TextCNN(vocab_size, num_classes, **kwargs)


@MODELS.register("lstm")
def lstm(vocab_size: int, num_classes: int = 2, **kwargs: Any) -> LSTMClassifier:
    """:class:`LSTMClassifier`."""
    return LSTMClassifier(vocab_size, num_classes, **kwargs)
