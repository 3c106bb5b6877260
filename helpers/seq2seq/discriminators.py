"""Ensembles of correctness discriminators on ``input [SEP] predicted output`` (paper 1, Sec. 3.1–3.2, 4.2).

A discriminator ``F: X × Y -> {Correct, Incorrect}`` is a binary classifier over the concatenation of the input
sentence and the parser's predicted output (Sec. 3.1).  Paper 1 fine-tunes RoBERTa-base / T5-base; here the
encoder-only variant uses MiniLM-L6 (:class:`helpers.models.MiniLMClassifier`, text pairs through
:class:`helpers.models.MiniLMCollator`, i.e. ``[CLS] input [SEP] output [SEP]``), and a small from-scratch
transformer encoder (:class:`ScratchPairClassifier`) serves fast smoke runs.  "For each task we train an ensemble
of 5 discriminators with different random seeds" (Sec. 4.2); their votes on a test set give the bounds of
:mod:`helpers.estimators.bounds`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.seq2seq.negatives import DiscriminatorData
from helpers.seq2seq.vocab import WordVocab
from helpers.training import fit, predict

__all__ = [
    "ScratchPairClassifier",
    "ScratchPairCollator",
    "make_discriminator",
    "train_discriminators",
    "discriminator_votes",
    "DISCRIMINATOR_KINDS",
]

DISCRIMINATOR_KINDS = ("minilm", "scratch")
SEP = "[SEP]"


class ScratchPairClassifier(nn.Module):
    """Small transformer encoder over word ids of ``input [SEP] output`` with segment embeddings, mean pooling.

    Parameters
    ----------
    vocab_size : int
    d_model, num_layers, num_heads, max_length : int, keyword-only
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        d_model: int = 64,
        num_layers: int = 2,
        num_heads: int = 4,
        max_length: int = 512,
        dropout: float = 0.1,
    ):
        super().__init__()
        if d_model % num_heads:
            raise InputValidationError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.tok = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_length, d_model)
        self.seg = nn.Embedding(2, d_model)
        layer = nn.TransformerEncoderLayer(d_model, num_heads, 4 * d_model, dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 2)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        h = self.tok(input_ids) + self.pos(pos)[None] + self.seg(token_type_ids)
        h = self.encoder(h, src_key_padding_mask=attention_mask == 0)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        return self.head((h * m).sum(1) / m.sum(1).clamp_min(1.0))


class ScratchPairCollator:
    """Collate ``(input, output)`` pairs (optionally with labels) into word-id batches for :class:`ScratchPairClassifier`.

    The sequence is ``input [SEP] output`` (``[SEP]`` is added to the vocabulary), truncated to ``max_length``.
    """

    def __init__(self, vocab: WordVocab, *, max_length: int = 512):
        if SEP not in vocab:
            raise InputValidationError(f"vocab: expected the separator token {SEP!r} in the vocabulary")
        self.vocab, self.max_length = vocab, int(max_length)

    def encode(self, pairs: Sequence[tuple[str, str]]) -> dict[str, torch.Tensor]:
        ids, seg = [], []
        for a, b in pairs:
            x = self.vocab.encode(a, add_eos=False) + [self.vocab.stoi[SEP]]
            y = self.vocab.encode(b, add_eos=False)
            ids.append((x + y)[: self.max_length])
            seg.append(([0] * len(x) + [1] * len(y))[: self.max_length])
        width = max(len(s) for s in ids)
        t = torch.zeros((len(ids), width), dtype=torch.long)
        s = torch.zeros_like(t)
        for i, (r, g) in enumerate(zip(ids, seg)):
            t[i, : len(r)] = torch.as_tensor(r)
            s[i, : len(g)] = torch.as_tensor(g)
        return {"input_ids": t, "attention_mask": (t != 0).long(), "token_type_ids": s}

    def __call__(self, items: Sequence[Any]) -> Any:
        if isinstance(items[0][0], str):
            return self.encode(items)
        enc = self.encode([it[0] for it in items])
        return enc, torch.as_tensor([int(it[1]) for it in items], dtype=torch.long)


def make_discriminator(
    kind: str, *, vocab: WordVocab | None = None, seed: int = 0, max_length: int = 256, **kwargs: Any
) -> tuple[nn.Module, Callable]:
    """One discriminator and its collate function.

    Parameters
    ----------
    kind : {"minilm", "scratch"}
        ``"minilm"``: pretrained MiniLM-L6 fine-tuned end to end (mean pooling + linear head); ``"scratch"``: a
        :class:`ScratchPairClassifier` over ``vocab`` (which must contain ``[SEP]``).
    seed : int, keyword-only
        Seeds the head / from-scratch initialisation (the ensemble members differ by seed, Sec. 4.2).
    max_length : int, keyword-only
        Truncation length in (WordPiece or word) tokens.
    """
    if kind not in DISCRIMINATOR_KINDS:
        raise InputValidationError(f"kind: expected one of {DISCRIMINATOR_KINDS}, got {kind!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        if kind == "minilm":
            from helpers.models.minilm import MiniLMClassifier, MiniLMCollator

            model = MiniLMClassifier(2, **kwargs)
            return model, MiniLMCollator(model.tokenizer, max_length=max_length)
        if vocab is None:
            raise InputValidationError("vocab: required for kind='scratch'")
        model = ScratchPairClassifier(len(vocab), max_length=max_length, **kwargs)
        return model, ScratchPairCollator(vocab, max_length=max_length)


def train_discriminators(
    data: DiscriminatorData,
    *,
    kind: str = "minilm",
    n_members: int = 5,
    seed: int = 0,
    vocab: WordVocab | None = None,
    max_length: int = 256,
    epochs: int | None = 1,
    max_steps: int | None = None,
    batch_size: int = 32,
    lr: float = 5e-5,
    weight_decay: float = 1e-3,
    checkpoint_root: str | os.PathLike | None = None,
    device: str = "auto",
    progress: bool = True,
    model_kwargs: dict | None = None,
) -> list[tuple[nn.Module, Callable]]:
    """Train an ensemble of ``n_members`` discriminators differing only in their seed (paper 1, Sec. 4.2).

    Member ``k`` uses seed ``seed + k`` for its initialisation and data order.  With ``checkpoint_root`` each
    member checkpoints into ``checkpoint_root/member{k}`` (resumable) and, once finished, keeps only its weights in
    ``checkpoint_root/member{k}.pt``, from which it is restored, not retrained.

    Returns
    -------
    list of (model, collate_fn)
    """
    if n_members < 1:
        raise InputValidationError(f"n_members: expected >= 1, got {n_members}")
    if len(data) == 0 or data.n_positive == 0 or data.n_negative == 0:
        raise InputValidationError(
            f"data: expected positives and negatives, got {data.n_positive} positive and {data.n_negative} negative"
        )
    items = data.items()
    members = []
    for k in range(n_members):
        model, collate = make_discriminator(
            kind, vocab=vocab, seed=seed + k, max_length=max_length, **(model_kwargs or {})
        )
        done = Path(checkpoint_root) / f"member{k}.pt" if checkpoint_root is not None else None
        if done is not None and done.exists():  # finished member: weights only, no optimizer state
            model.load_state_dict(torch.load(done, map_location="cpu", weights_only=True))
            members.append((model.eval(), collate))
            continue
        ck = Path(checkpoint_root) / f"member{k}" if checkpoint_root is not None else None
        fit(
            model,
            items,
            epochs=epochs,
            max_steps=max_steps,
            batch_size=batch_size,
            lr=lr,
            optimizer="adamw",
            weight_decay=weight_decay,
            collate_fn=collate,
            seed=seed + k,
            device=device,
            checkpoint_dir=ck,
            checkpoint_every=None,
            keep_checkpoints=1,
            progress=progress,
        )
        if done is not None:
            tmp = done.with_suffix(f".tmp{os.getpid()}")
            torch.save({n: t.detach().cpu() for n, t in model.state_dict().items()}, tmp)
            os.replace(tmp, done)
            shutil.rmtree(ck, ignore_errors=True)  # the full checkpoint (with Adam state) is no longer needed
        members.append((model.eval(), collate))
    return members


def discriminator_votes(
    members: Sequence[tuple[nn.Module, Callable]],
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    batch_size: int = 64,
    device: str = "auto",
) -> np.ndarray:
    """Vote matrix ``votes[i, k] = 1`` iff member ``k`` labels output ``i`` Correct, shape (n, K) int8.

    Also usable to score the discriminator's own dev set against its labels.
    """
    if len(inputs) != len(outputs):
        raise InputValidationError(
            f"inputs/outputs: expected equal lengths, got {len(inputs)} and {len(outputs)}"
        )
    pairs = [(a, b) for a, b in zip(inputs, outputs)]
    if not pairs:
        return np.zeros((0, len(members)), dtype=np.int8)
    cols = []
    for model, collate in members:
        logits = predict(model, pairs, batch_size=batch_size, collate_fn=collate, device=device)
        cols.append(logits.argmax(axis=1) == 1)
    return np.stack(cols, axis=1).astype(np.int8)
