"""What every attribution method shares: the options of one call, padding, and a runner that batches id sequences
through the model's forward and returns probabilities or logits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.attribution.tokenizers import Encoded
from helpers.models.text import pad_sequences as _pad  # noqa: F401  (re-exported to the methods)


@dataclass(frozen=True)
class Options:
    """The options of one attribution call (see :func:`helpers.attribution.attribute` for their meaning)."""

    batch_size: int
    n_steps: int
    internal_batch_size: int | None
    n_samples: int
    seed: int
    mask_special: bool
    mask_id: int
    embedding_layer: nn.Module | None = None


class _Runner:
    """Batches id sequences through ``forward`` and returns class probabilities or logits (numpy)."""

    def __init__(
        self, model: nn.Module, forward: Callable, pad_id: int, output: str, batch_size: int, device: Any
    ):
        self.model, self.forward, self.pad_id = model, forward, pad_id
        self.output, self.batch_size, self.device = output, batch_size, device

    def scores(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.forward(ids.to(self.device), segments.to(self.device), mask.to(self.device))
        return torch.softmax(logits, dim=-1) if self.output == "prob" else logits

    @torch.no_grad()
    def __call__(self, id_rows: np.ndarray, segments: Sequence[int]) -> np.ndarray:
        """``id_rows``: (M, T) ids sharing one length and segmentation."""
        outs = []
        seg = torch.as_tensor(list(segments), dtype=torch.long)
        for start in range(0, len(id_rows), self.batch_size):
            chunk = torch.as_tensor(np.asarray(id_rows[start : start + self.batch_size]), dtype=torch.long)
            segs = seg.unsqueeze(0).expand(len(chunk), -1)
            mask = (chunk != self.pad_id).long()
            outs.append(self.scores(chunk, segs, mask).float().cpu().numpy())
        return np.concatenate(outs, axis=0)


def free_positions(e: Encoded, mask_special: bool) -> np.ndarray:
    return np.arange(len(e.ids)) if mask_special else np.flatnonzero(~np.asarray(e.special, dtype=bool))


def per_example_scores(encs: list[Encoded], targets: np.ndarray, mask_special: bool, explain: Callable):
    """The loop shared by the perturbation methods (KernelSHAP, LIME): one zero score row per example, filled in
    place by ``explain(encoded, target, ids, free_positions, row)`` when the example has a maskable position.

    Returns (score rows, NaN convergence deltas).
    """
    scores = []
    for e, tgt in zip(encs, targets):
        ids = np.asarray(e.ids)
        free = free_positions(e, mask_special)
        row = np.zeros(len(ids))
        if len(free):
            explain(e, tgt, ids, free, row)
        scores.append(row)
    return scores, np.full(len(encs), np.nan)
