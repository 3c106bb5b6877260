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

import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.metrics import roc_auc
from helpers.seq2seq.negatives import DiscriminatorData
from helpers.seq2seq.trunk import FrozenTrunk, ItemList, TrunkCollator, frozen_depth, top_logits
from helpers.seq2seq.vocab import WordVocab
from helpers.training import TrainSettings, fit, predict

__all__ = [
    "TRAINING_RECIPE",
    "ScratchPairClassifier",
    "ScratchPairCollator",
    "make_discriminator",
    "train_discriminators",
    "discriminator_votes",
    "discriminator_margins",
    "DISCRIMINATOR_KINDS",
    "freeze_lower_layers",
    "balanced_accuracy",
    "member_is_degenerate",
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


def freeze_lower_layers(model: nn.Module, n_layers: int) -> nn.Module:
    """Freeze the embeddings and the lowest ``n_layers`` transformer layers of a MiniLM classifier (in place).

    A speed knob for the CPU budget: no gradients flow through the frozen part, and since it is identical for every
    ensemble member its hidden states are computed once (:class:`helpers.seq2seq.trunk.FrozenTrunk`).
    ``n_layers = 0`` leaves everything trainable.  Sets ``model.frozen_layers``.
    """
    layers = model.encoder.encoder.layer
    if not 0 <= int(n_layers) <= len(layers):
        raise InputValidationError(f"freeze_layers: expected 0..{len(layers)}, got {n_layers}")
    model.frozen_layers = int(n_layers)
    if n_layers:
        for p in model.encoder.embeddings.parameters():
            p.requires_grad_(False)
        for layer in layers[: int(n_layers)]:
            for p in layer.parameters():
                p.requires_grad_(False)
    return model


def balanced_accuracy(votes: np.ndarray, labels: np.ndarray) -> float:
    """(Correct-Recall + Incorrect-Recall) / 2 of 0/1 predictions; a class absent from ``labels`` is skipped.

    The model-selection criterion on the discriminator's dev set: unlike plain accuracy it cannot be maximised
    by predicting the majority class when positives and negatives are unbalanced.
    """
    votes, labels = np.asarray(votes).astype(int), np.asarray(labels).astype(int)
    recalls = [float((votes[labels == c] == c).mean()) for c in (1, 0) if (labels == c).any()]
    return float(np.mean(recalls)) if recalls else float("nan")


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
    freeze_layers : int, keyword-only (in ``kwargs``), minilm only
        Freeze the embeddings and the lowest ``freeze_layers`` transformer layers (see :func:`freeze_lower_layers`).
    """
    if kind not in DISCRIMINATOR_KINDS:
        raise InputValidationError(f"kind: expected one of {DISCRIMINATOR_KINDS}, got {kind!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        if kind == "minilm":
            from helpers.models.minilm import MiniLMClassifier, MiniLMCollator

            freeze = int(kwargs.pop("freeze_layers", 0) or 0)
            model = MiniLMClassifier(2, **kwargs)
            freeze_lower_layers(model, freeze)
            return model, MiniLMCollator(model.tokenizer, max_length=max_length)
        kwargs.pop("freeze_layers", None)
        if vocab is None:
            raise InputValidationError("vocab: required for kind='scratch'")
        model = ScratchPairClassifier(len(vocab), max_length=max_length, **kwargs)
        return model, ScratchPairCollator(vocab, max_length=max_length)


def _frozen_names(model: nn.Module) -> set[str]:
    """State-dict names of the frozen parameters of a MiniLM discriminator with frozen lower layers."""
    if not frozen_depth(model):
        return set()
    return {n for n, p in model.named_parameters() if not p.requires_grad}


def _logit_margins(m: nn.Module, xs: ItemList, *, collate, forward, device) -> np.ndarray:
    """Correct-minus-Incorrect logit of every dev item (the score whose AUC selects checkpoints)."""
    logits = predict(m, xs, batch_size=64, collate_fn=collate, forward_fn=forward, device=device)
    return logits[:, 1] - logits[:, 0]


def member_is_degenerate(
    dev_auc: float, vote_rate: float, *, min_auc: float = 0.6, vote_rate_range: tuple[float, float] = (0.05, 0.95)
) -> bool:
    """Whether a member is rejected: dev AUC ≤ ``min_auc`` (barely better than chance) or a Correct-vote rate on
    its dev set outside ``vote_rate_range`` (a member that (almost) always votes one way pins a bound to 0 or 1)."""
    lo, hi = vote_rate_range
    return not (dev_auc > min_auc and lo <= vote_rate <= hi)


def _fit_member(model, collate, trunk, items, dev, s: TrainSettings, *, evals_per_epoch: int) -> dict:
    """Train one member with dev selection by AUC (App. B.1); returns its selected dev AUC and vote rate."""
    device = s.device
    best: dict = {"score": -1.0, "state": None}
    fwd = top_logits if trunk is not None else None
    fit_collate = TrunkCollator() if trunk is not None else collate
    use_dev = dev is not None and len(dev) > 0
    train_items, dev_items = items, dev.items() if use_dev else None
    if trunk is not None:  # the frozen part runs once per pair, shared by all members
        train_items = ItemList(zip(trunk.states([x for x, _ in items]), [y for _, y in items]))
        if use_dev:
            dev_items = ItemList(zip(trunk.states([x for x, _ in dev_items]), [y for _, y in dev_items]))
    dev_x = ItemList([x for x, _ in dev_items]) if use_dev else None
    dev_y = np.array([y for _, y in dev_items]) if use_dev else None

    def select(m: nn.Module, _dev_items: list) -> float:
        score = roc_auc(scores=_logit_margins(m, dev_x, collate=fit_collate, forward=fwd, device=device), labels=dev_y)
        if score > best["score"]:
            best["score"] = score
            best["state"] = {n: t.detach().cpu().clone() for n, t in m.state_dict().items()}
        return score

    # length-bucketed batches (sortish, as the text-model zoo trains): similar pair lengths pad little
    lengths = [x.shape[0] for x, _ in train_items] if trunk is not None else [len(x[0]) + len(x[1]) for x, _ in items]
    steps_per_epoch = max(1, -(-len(items) // s.batch_size))
    evals = max(1, int(evals_per_epoch))
    settings = s.replace(optimizer="adamw", eval_every=max(1, steps_per_epoch // evals) if use_dev else None,
                         checkpoint_every=None, keep_checkpoints=1)  # fmt: skip
    res = fit(model, train_items, settings, forward_fn=fwd, eval_data=dev_items, eval_fn=select if use_dev else None,
              collate_fn=fit_collate, lengths=lengths)  # fmt: skip
    if not use_dev:
        return {"dev_auc": float("nan"), "dev_vote_rate": float("nan")}
    if best["state"] is not None:
        model.load_state_dict(best["state"])
    model.dev_history = [(int(e["step"]), float(e["value"])) for e in res.evals]
    margins = _logit_margins(model, dev_x, collate=fit_collate, forward=fwd, device=device)
    return {"dev_auc": float(best["score"]), "dev_vote_rate": float((margins > 0).mean())}


def _restore_member(model: nn.Module, done: Path) -> dict:
    saved = torch.load(done, map_location="cpu", weights_only=True)
    missing, unexpected = model.load_state_dict(saved, strict=False)
    frozen = _frozen_names(model)
    if unexpected or set(missing) - frozen:  # only the frozen (pretrained) weights may be left out
        raise InputValidationError(
            f"{done}: weights do not match the discriminator (missing {sorted(set(missing) - frozen)[:3]}, "
            f"unexpected {unexpected[:3]}); delete the file to retrain"
        )
    meta = done.with_suffix(".json")
    return json.loads(meta.read_text()) if meta.exists() else {}


def _save_member(model: nn.Module, done: Path, stats: dict) -> None:
    frozen = _frozen_names(model)  # frozen pretrained weights are not stored (they are rebuilt identically)
    tmp = done.with_suffix(f".tmp{os.getpid()}")
    torch.save({n: t.detach().cpu() for n, t in model.state_dict().items() if n not in frozen}, tmp)
    done.with_suffix(".json").write_text(json.dumps(stats, indent=1))
    os.replace(tmp, done)


#: What :func:`train_discriminators` does beyond its arguments.  Callers put it in the cache key of trained members
#: and their votes, so change it whenever the training procedure changes (a cache made by the old procedure must
#: not be served under the new one).
TRAINING_RECIPE = (
    "dev-AUC selection, degenerate members retrained until one member exhausts its attempts, length-bucketed batches"
)


DISCRIMINATOR_SETTINGS = TrainSettings(epochs=1, batch_size=32, lr=5e-5, weight_decay=1e-3)
"""The defaults of :func:`train_discriminators` (members train with AdamW)."""


def train_discriminators(
    data: DiscriminatorData,
    settings: TrainSettings | None = None,
    *,
    kind: str = "minilm",
    n_members: int = 5,
    vocab: WordVocab | None = None,
    max_length: int = 256,
    model_kwargs: dict | None = None,
    dev: DiscriminatorData | None = None,
    evals_per_epoch: int = 2,
    max_attempts: int = 3,
    min_dev_auc: float = 0.6,
    vote_rate_range: tuple[float, float] = (0.05, 0.95),
    keep_retrying: bool = False,
    **overrides: Any,
) -> list[tuple[nn.Module, Callable]]:
    """Train an ensemble of ``n_members`` discriminators differing only in their seed (paper 1, Sec. 4.2).

    ``settings`` (default :data:`DISCRIMINATOR_SETTINGS`: one epoch of AdamW at 5e-5, batches of 32, weight decay
    1e-3; ``**overrides`` change it) train every member.  Member ``k``'s attempt ``a`` uses seed
    ``settings.seed + k + 1000·a`` for its initialisation and data order; batches are length-bucketed
    (:func:`helpers.training.fit` with ``lengths``: pairs of similar token length share a batch, so little padding
    is computed).  With ``settings.checkpoint_dir`` each attempt checkpoints into ``checkpoint_dir/member{k}``
    (``..._a{a}`` for retries) and a finished member keeps only its weights in ``member{k}.pt`` and its statistics
    in ``member{k}.json``, from which it is restored, not retrained.

    With a discriminator dev set ``dev`` (built like the training set from dev data, App. B.1), each attempt is
    evaluated ``evals_per_epoch`` times per epoch and at the end, and the weights with the best dev AUC of the
    Correct-minus-Incorrect logit are kept (the paper selects checkpoints by dev AUC; first best wins ties).  A
    member whose selected weights are degenerate (:func:`member_is_degenerate`: dev AUC ≤ ``min_dev_auc`` or a
    Correct-vote rate outside ``vote_rate_range``) is retrained with the next seed, up to ``max_attempts``
    attempts; if none passes, the attempt with the best dev AUC is kept and marked ``accepted = False``.  Once a
    member has exhausted its attempts that way, the later members get one attempt each (unless ``keep_retrying``):
    when ``max_attempts`` seeds in a row all fail, the setup, not the seed, is the cause, and further retries only
    cost time.
    ``model.dev_stats`` holds ``seed, attempts, dev_auc, dev_vote_rate, accepted`` of every member.

    Returns
    -------
    list of (model, collate_fn)
    """
    if n_members < 1 or max_attempts < 1:
        raise InputValidationError(f"n_members, max_attempts: expected >= 1, got {n_members}, {max_attempts}")
    if len(data) == 0 or data.n_positive == 0 or data.n_negative == 0:
        raise InputValidationError(
            f"data: expected positives and negatives, got {data.n_positive} positive and {data.n_negative} negative"
        )
    s = TrainSettings.resolve(settings if settings is not None else DISCRIMINATOR_SETTINGS, **overrides)
    checkpoint_root, seed = s.checkpoint_dir, s.seed
    items = data.items()
    members = []
    trunk: FrozenTrunk | None = None
    exhausted = False  # has an earlier member failed every one of its max_attempts attempts?
    for k in range(n_members):
        done = Path(checkpoint_root) / f"member{k}.pt" if checkpoint_root is not None else None
        tried = []
        attempts = max_attempts if dev is not None and len(dev) and (keep_retrying or not exhausted) else 1
        for attempt in range(attempts):
            member_seed = seed + k + 1000 * attempt
            model, collate = make_discriminator(
                kind, vocab=vocab, seed=member_seed, max_length=max_length, **(model_kwargs or {})
            )
            if frozen_depth(model):
                trunk = trunk or FrozenTrunk(model, collate)
                model.trunk = trunk
            if done is not None and done.exists():  # finished member: weights and statistics only
                model.dev_stats = _restore_member(model, done)
                tried = [(model, collate, model.dev_stats)]
                break
            ck = None if checkpoint_root is None else Path(checkpoint_root) / (
                f"member{k}" if attempt == 0 else f"member{k}_a{attempt}")  # fmt: skip
            stats = _fit_member(model, collate, trunk, items, dev, s.replace(seed=member_seed, checkpoint_dir=ck),
                                evals_per_epoch=evals_per_epoch)  # fmt: skip
            stats = {"seed": member_seed, "attempts": attempt + 1, **stats}
            stats["accepted"] = not member_is_degenerate(
                stats["dev_auc"], stats["dev_vote_rate"], min_auc=min_dev_auc, vote_rate_range=vote_rate_range
            ) if dev is not None and len(dev) else True  # fmt: skip
            tried.append((model, collate, stats))
            if stats["accepted"]:
                break
        model, collate, stats = max(tried, key=lambda t: (t[2].get("accepted", True), t[2].get("dev_auc", 0.0)))
        stats = {**stats, "attempts": max(t[2].get("attempts", 1) for t in tried)}
        model.dev_stats = stats
        model.dev_best = stats.get("dev_auc", float("nan"))
        exhausted = exhausted or (not stats.get("accepted", True) and stats["attempts"] >= max_attempts > 1)
        if done is not None and not done.exists():
            _save_member(model, done, stats)
            for a in range(max_attempts):  # the full checkpoints (with Adam state) are no longer needed
                shutil.rmtree(Path(checkpoint_root) / (f"member{k}" if a == 0 else f"member{k}_a{a}"), ignore_errors=True)
        members.append((model.eval(), collate))
    return members


def discriminator_margins(
    members: Sequence[tuple[nn.Module, Callable]],
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    batch_size: int = 64,
    device: str = "auto",
) -> np.ndarray:
    """Margin matrix ``margins[i, k]`` = Correct-minus-Incorrect logit of member ``k`` on output ``i``, shape (n, K).

    The score each member's checkpoint is selected on (its dev AUC); a member votes Correct where it is > 0.
    """
    if len(inputs) != len(outputs):
        raise InputValidationError(
            f"inputs/outputs: expected equal lengths, got {len(inputs)} and {len(outputs)}"
        )
    pairs = [(a, b) for a, b in zip(inputs, outputs)]
    if not pairs:
        return np.zeros((0, len(members)), dtype=np.float64)
    cols = []
    depths = {frozen_depth(m) for m, _ in members}
    states = None
    if len(depths) == 1 and min(depths) > 0:  # shared frozen trunk: computed once for all members
        trunk = getattr(members[0][0], "trunk", None) or FrozenTrunk(*members[0])
        states = trunk.states(pairs)
    for model, collate in members:
        if states is not None:
            logits = predict(model, ItemList(states), batch_size=batch_size, collate_fn=TrunkCollator(), forward_fn=top_logits,
                             device=device)
        else:
            logits = predict(model, pairs, batch_size=batch_size, collate_fn=collate, device=device)
        cols.append(logits[:, 1] - logits[:, 0])
    return np.stack(cols, axis=1).astype(np.float64)


def discriminator_votes(
    members: Sequence[tuple[nn.Module, Callable]],
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    batch_size: int = 64,
    device: str = "auto",
) -> np.ndarray:
    """Vote matrix ``votes[i, k] = 1`` iff member ``k`` labels output ``i`` Correct (its margin
    :func:`discriminator_margins` is > 0, i.e. the argmax of its two logits), shape (n, K) int8.

    Also usable to score the discriminator's own dev set against its labels.
    """
    margins = discriminator_margins(members, inputs, outputs, batch_size=batch_size, device=device)
    return (margins > 0).astype(np.int8)
