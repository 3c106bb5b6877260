"""Shared frozen trunk of MiniLM discriminators: run the frozen lower layers once, train/evaluate only the top.

With the embeddings and the lowest ``k`` transformer layers frozen (:func:`freeze_lower_layers`), every member of
a discriminator ensemble computes exactly the same hidden states after layer ``k`` (the frozen weights are the
pretrained ones for every seed).  :class:`FrozenTrunk` computes them once per ``(input, output)`` pair, and
:func:`top_logits` runs only the trainable top layers, pooling and head on them — the same function as the full
forward pass (tested), at a fraction of the CPU cost for training, dev-set selection and voting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from helpers.errors import InputValidationError

__all__ = ["FrozenTrunk", "TrunkCollator", "ItemList", "top_logits", "frozen_depth"]


def frozen_depth(model: nn.Module) -> int:
    """Number of frozen lower layers of a MiniLM classifier (0 for any other model)."""
    return int(getattr(model, "frozen_layers", 0) or 0)


def _extended_mask(model: nn.Module, hidden: torch.Tensor, mask: torch.Tensor) -> Any:
    from transformers.masking_utils import create_bidirectional_mask

    return create_bidirectional_mask(config=model.encoder.config, inputs_embeds=hidden, attention_mask=mask)


class FrozenTrunk:
    """Hidden states after the frozen part of a MiniLM classifier, one ``(length, hidden)`` tensor per pair.

    Parameters
    ----------
    model : MiniLMClassifier
        With ``frozen_layers = k >= 1`` (set by :func:`helpers.seq2seq.discriminators.freeze_lower_layers`).
    collate : MiniLMCollator
        Tokenises ``(input, output)`` pairs.
    batch_size : int, keyword-only
    """

    def __init__(self, model: nn.Module, collate: Any, *, batch_size: int = 64):
        self.depth = frozen_depth(model)
        if self.depth < 1:
            raise InputValidationError("model: expected a MiniLM classifier with frozen lower layers (k >= 1)")
        self.model, self.collate, self.batch_size = model, collate, int(batch_size)
        self._memo: dict[tuple[str, str], torch.Tensor] = {}

    @torch.inference_mode()
    def states(self, pairs: Sequence[tuple[str, str]]) -> list[torch.Tensor]:
        """Hidden states of the non-padding tokens after layer ``k`` for every pair (memoised)."""
        todo = list(dict.fromkeys(p for p in map(tuple, pairs) if p not in self._memo))
        todo.sort(key=lambda p: len(p[0]) + len(p[1]))  # similar lengths per batch: little padding (it is masked)
        enc_model = self.model.encoder
        was = enc_model.training
        enc_model.eval()
        try:
            for b in range(0, len(todo), self.batch_size):
                chunk = todo[b : b + self.batch_size]
                enc = self.collate.encode(chunk)
                mask = enc["attention_mask"]
                h = enc_model.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
                ext = _extended_mask(self.model, h, mask)
                for layer in enc_model.encoder.layer[: self.depth]:
                    h = layer(h, ext)
                for p, hi, m in zip(chunk, h, mask):
                    self._memo[p] = hi[: int(m.sum())].clone()
        finally:
            enc_model.train(was)
        return [self._memo[tuple(p)] for p in pairs]


class ItemList(torch.utils.data.Dataset):
    """A plain list as a torch Dataset (a bare list of tensors would be read as array columns by ``fit``)."""

    def __init__(self, items: Sequence[Any]):
        self.items = list(items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]


class TrunkCollator:
    """``collate_fn`` for items ``states`` or ``(states, label)``: pads to ``dict(hidden, mask)`` (+ labels)."""

    def __call__(self, items: Sequence[Any]) -> Any:
        labelled = isinstance(items[0], tuple)
        hs = [it[0] if labelled else it for it in items]
        width = max(h.shape[0] for h in hs)
        hidden = torch.zeros((len(hs), width, hs[0].shape[1]), dtype=hs[0].dtype)
        mask = torch.zeros((len(hs), width), dtype=torch.long)
        for i, h in enumerate(hs):
            hidden[i, : h.shape[0]] = h
            mask[i, : h.shape[0]] = 1
        batch = {"hidden": hidden, "mask": mask}
        if labelled:
            return batch, torch.as_tensor([int(it[1]) for it in items], dtype=torch.long)
        return batch


def top_logits(model: nn.Module, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """Logits from the trunk's hidden states: top layers ``k..``, mean pooling, dropout and head of ``model``.

    A ``forward_fn`` for :func:`helpers.training.fit` / :func:`helpers.training.predict`.
    """
    from helpers.models.minilm import mean_pool

    h, mask = inputs["hidden"], inputs["mask"]
    ext = _extended_mask(model, h, mask)
    for layer in model.encoder.encoder.layer[frozen_depth(model) :]:
        h = layer(h, ext)
    pooled = mean_pool(h, mask) if model.pooling == "mean" else h[:, 0]
    return model.classifier(model.dropout(pooled))
