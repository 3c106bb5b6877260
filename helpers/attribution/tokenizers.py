"""Tokenizer adapters for attributions: word vocabularies and Hugging Face tokenizers, single texts and pairs,
encoded with their segments, special tokens and word indices; and the parameter fingerprint of a model."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from helpers.errors import InputValidationError

__all__ = ["Encoded", "WordTokenizer", "HFTokenizer", "as_tokenizer", "model_fingerprint"]


@dataclass
class Encoded:
    """One tokenised input: ids, segment of each token, token strings, which positions are special, and words.

    ``words[t]`` is the index, within its segment, of the word that token t belongs to (several WordPiece tokens
    share one word), or -1 for special tokens; ``None`` means one word per non-special token.
    """

    ids: list[int]
    segments: list[int]
    tokens: list[str]
    special: list[bool]
    words: list[int] | None = None

    def word_index(self) -> list[int]:
        """``words``, or (when not given) the running count of non-special tokens per segment."""
        if self.words is not None:
            return list(self.words)
        out, count = [], {}
        for seg, sp in zip(self.segments, self.special):
            if sp:
                out.append(-1)
                continue
            out.append(count.get(seg, 0))
            count[seg] = count.get(seg, 0) + 1
        return out


class WordTokenizer:
    """Adapter for :class:`helpers.models.text.Vocab` word vocabularies.

    A pair ``(a, b)`` becomes ``a-tokens + [sep] + b-tokens`` with segments 0…0, 0 (the separator closes segment
    0), 1…1.  The baseline / mask token is ``<unk>`` (id 1) unless ``mask_token`` names another vocabulary entry.

    Parameters
    ----------
    vocab : Vocab
    sep_token : str, default "<sep>"
        Must be in the vocabulary when pairs are encoded.
    mask_token : str, default "<unk>"
    max_len : int, optional
        Truncate each segment to this many words.
    """

    def __init__(
        self, vocab: Any, *, sep_token: str = "<sep>", mask_token: str = "<unk>", max_len: int | None = None
    ):
        from helpers.models.text import tokenize

        self.vocab = vocab
        self._tokenize = tokenize
        self.sep_token = sep_token
        if mask_token not in vocab.stoi:
            raise InputValidationError(f"mask_token {mask_token!r} is not in the vocabulary")
        self.mask_id = vocab.stoi[mask_token]
        self.pad_id = 0
        self.max_len = max_len

    def identity(self) -> str:
        return hashlib.sha256("\n".join(self.vocab.itos).encode()).hexdigest()[:16]

    def _words(self, text: str) -> list[str]:
        words = self._tokenize(text)
        return words[: self.max_len] if self.max_len else words

    def encode(self, item: str | Sequence[str]) -> Encoded:
        unk = self.vocab.stoi.get("<unk>", 1)
        if isinstance(item, str):
            words = self._words(item)
            return Encoded(
                [self.vocab.stoi.get(w, unk) for w in words], [0] * len(words), words, [False] * len(words)
            )
        if len(item) != 2:
            raise InputValidationError(f"a pair input must have 2 texts, got {len(item)}")
        if self.sep_token not in self.vocab.stoi:
            raise InputValidationError(f"pairs need the separator {self.sep_token!r} in the vocabulary")
        a, b = self._words(item[0]), self._words(item[1])
        words = a + [self.sep_token] + b
        return Encoded(
            [self.vocab.stoi.get(w, unk) for w in words],
            [0] * (len(a) + 1) + [1] * len(b),
            words,
            [False] * len(a) + [True] + [False] * len(b),
        )

    def default_forward(self, model: nn.Module) -> Callable[..., torch.Tensor]:
        return lambda ids, segments, mask: model(ids)


class HFTokenizer:
    """Adapter for a Hugging Face (WordPiece) tokenizer such as MiniLM's.

    ``[CLS] a [SEP] b [SEP]``; token_type_ids give the segments (the first [SEP] closes segment 0); [CLS] and
    [SEP] are ``special``.  The baseline / mask token is ``[MASK]``.

    Parameters
    ----------
    tokenizer : transformers (fast) tokenizer
    max_length : int, default 128
        Truncation length of the encoded input (pairs: longest-first).
    split_words : callable ``str -> list[str]``, optional
        Pre-split each text into words (e.g. :func:`helpers.models.text.tokenize`) and tokenise with
        ``is_split_into_words=True``: the ``words`` of every token then index the same words as the word-level
        tokenizer, so example metadata given as ``(segment, word_index)`` (critical, swapped, control words) map
        to the right WordPiece tokens.
    """

    def __init__(
        self, tokenizer: Any, *, max_length: int = 128, split_words: Callable[[str], list[str]] | None = None
    ):
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.split_words = split_words
        self.mask_id = (
            tokenizer.mask_token_id if tokenizer.mask_token_id is not None else tokenizer.unk_token_id
        )
        self.pad_id = tokenizer.pad_token_id or 0

    def identity(self) -> str:
        name = getattr(self.tokenizer, "name_or_path", "")
        split = getattr(self.split_words, "__qualname__", None) if self.split_words else None
        return f"{type(self.tokenizer).__name__}:{name}:{len(self.tokenizer)}:{self.max_length}:{split}"

    def encode(self, item: str | Sequence[str]) -> Encoded:
        texts = [item] if isinstance(item, str) else list(item)
        if not isinstance(item, str) and len(texts) != 2:
            raise InputValidationError(f"a pair input must have 2 texts, got {len(texts)}")
        kw: dict[str, Any] = dict(truncation=True, max_length=self.max_length)
        if self.split_words is not None:
            texts = [self.split_words(t) for t in texts]
            kw["is_split_into_words"] = True
        enc = self.tokenizer(*texts, **kw)
        ids = list(enc["input_ids"])
        segs = list(enc.get("token_type_ids", [0] * len(ids)))
        special_ids = set(self.tokenizer.all_special_ids)
        special = [i in special_ids for i in ids]
        words = None
        if getattr(enc, "is_fast", False):
            words = [-1 if sp or w is None else int(w) for w, sp in zip(enc.word_ids(), special)]
        return Encoded(ids, segs, self.tokenizer.convert_ids_to_tokens(ids), special, words)

    def default_forward(self, model: nn.Module) -> Callable[..., torch.Tensor]:
        return lambda ids, segments, mask: model(input_ids=ids, attention_mask=mask, token_type_ids=segments)


def as_tokenizer(tokenizer: Any) -> WordTokenizer | HFTokenizer:
    """Wrap a :class:`Vocab` or a Hugging Face tokenizer in the matching adapter (adapters pass through)."""
    if isinstance(tokenizer, (WordTokenizer, HFTokenizer)):
        return tokenizer
    if hasattr(tokenizer, "stoi") and hasattr(tokenizer, "itos"):
        return WordTokenizer(tokenizer)
    if callable(tokenizer) and hasattr(tokenizer, "convert_ids_to_tokens"):
        return HFTokenizer(tokenizer)
    raise InputValidationError(
        f"tokenizer: expected a Vocab, a HF tokenizer or an adapter, got {type(tokenizer).__name__}"
    )


def model_fingerprint(model: nn.Module) -> str:
    """sha256 of the model's state dict (names, shapes, bytes): the model part of the cache key."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(name.encode())
        arr = t.detach().cpu().contiguous()
        h.update(str(tuple(arr.shape)).encode())
        h.update(arr.numpy().tobytes() if arr.dtype != torch.bfloat16 else arr.float().numpy().tobytes())
    return h.hexdigest()[:32]
