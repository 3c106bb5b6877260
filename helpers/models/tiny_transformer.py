"""A tiny from-scratch Transformer classifier for word-level text and text pairs (paper 4 suites on CPU).

Token embedding (``self.embedding``, the layer Integrated Gradients attributes to) + learned position and
segment embeddings → ``num_layers`` pre-norm Transformer encoder layers (Vaswani et al. 2017) → mean pooling over
non-padding tokens → linear head.  Padding id is 0.

With ``exact_match=True`` each token also gets an embedding of a binary *exact-match* feature (the same word
occurs in the other segment), as in ESIM / DrQA-style NLI and QA readers: it makes cross-sentence lexical overlap
-- the heuristic HANS and PAWS probe -- easy to learn for a model this small trained from scratch.  The feature is
computed from the (possibly masked) ids; ids ≤ ``special_max`` (pad, unk, sep) never match.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from helpers.errors import InputValidationError

__all__ = ["TinyTransformer", "exact_match_feature", "segments_from_sep"]


def segments_from_sep(ids: torch.Tensor, sep_id: int) -> torch.Tensor:
    """Segment ids from a separator: 0 up to and including the first ``sep_id``, 1 after it."""
    is_sep = (ids == sep_id).long()
    return ((torch.cumsum(is_sep, dim=1) - is_sep) > 0).long()


def exact_match_feature(ids: torch.Tensor, segments: torch.Tensor, *, special_max: int = 2) -> torch.Tensor:
    """1 where the token's id (> ``special_max``) also occurs in the other segment of the same row, else 0."""
    same = ids[:, :, None] == ids[:, None, :]
    other = segments[:, :, None] != segments[:, None, :]
    return ((same & other).any(-1) & (ids > special_max)).long()


class TinyTransformer(nn.Module):
    """Small Transformer encoder classifier.

    Parameters
    ----------
    vocab_size : int
    num_classes : int, default 2
    dim, heads, num_layers, ff : int
        Width, attention heads, layers and feed-forward width.
    max_len : int, default 64
    sep_id : int, optional
        When given and ``segments`` is not passed, segments are derived from the first separator.
    dropout : float, default 0.1
    exact_match : bool, default False
        Add the exact-match feature embedding (see the module docstring).
    special_max : int, default 2
        Ids up to this value (pad, unk, sep) never count as a match.
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int = 2,
        *,
        dim: int = 64,
        heads: int = 4,
        num_layers: int = 2,
        ff: int = 128,
        max_len: int = 64,
        sep_id: int | None = None,
        dropout: float = 0.1,
        exact_match: bool = False,
        special_max: int = 2,
    ):
        super().__init__()
        if dim % heads:
            raise InputValidationError(f"dim ({dim}) must be divisible by heads ({heads})")
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.position = nn.Embedding(max_len, dim)
        self.segment = nn.Embedding(2, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.classifier = nn.Linear(dim, num_classes)
        self.max_len, self.sep_id = max_len, sep_id
        self.match = nn.Embedding(2, dim) if exact_match else None
        self.special_max = special_max

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``(N, num_classes)`` for padded ids ``(N, T)``."""
        if ids.shape[1] > self.max_len:
            ids = ids[:, : self.max_len]
            segments = None if segments is None else segments[:, : self.max_len]
        if segments is None:
            segments = (
                segments_from_sep(ids, self.sep_id) if self.sep_id is not None else torch.zeros_like(ids)
            )
        pad = ids == 0
        pos = torch.arange(ids.shape[1], device=ids.device)[None, :]
        h = self.embedding(ids) + self.position(pos) + self.segment(segments.clamp(0, 1))
        if self.match is not None:
            h = h + self.match(exact_match_feature(ids, segments, special_max=self.special_max))
        if self.training or not torch.is_grad_enabled():
            h = self.encoder(h, src_key_padding_mask=pad)  # training (dropout) / torch's fused inference path
        else:
            h = self._encode_with_grad(h, pad)
        h = self.norm(h)
        keep = (~pad).unsqueeze(-1).float()
        return self.classifier((h * keep).sum(1) / keep.sum(1).clamp(min=1.0))

    def _encode_with_grad(self, h: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """The encoder's eval-mode computation, written out for the autograd case (Integrated Gradients).

        The same operations as ``nn.TransformerEncoderLayer(norm_first=True)`` in eval mode (pre-norm
        self-attention through ``scaled_dot_product_attention`` with the key-padding mask, then the ReLU
        feed-forward), on batch-first tensors: the same results to float rounding (tested), but without
        ``nn.MultiheadAttention``'s sequence-first transposes and packed-projection copies.  q, k and v come from
        three projections (the three row blocks of the packed ``in_proj_weight``) rather than one packed projection
        split by ``unbind``: the backward of that split writes the three gradients into a zero-filled packed buffer
        and copies it back into the projection's layout, ~10% of an IG forward/backward on CPU.
        """
        n, t, d = h.shape
        keep = (~pad)[:, None, None, :] if bool(pad.any()) else None  # no padding: no mask (same result)
        for layer in self.encoder.layers:
            attn = layer.self_attn
            heads = attn.num_heads
            y = F.layer_norm(h, (d,), layer.norm1.weight, layer.norm1.bias, layer.norm1.eps)
            w, b = attn.in_proj_weight.chunk(3), attn.in_proj_bias.chunk(3)
            q, k, v = (F.linear(y, w[i], b[i]).view(n, t, heads, d // heads).transpose(1, 2) for i in range(3))
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(n, t, d)
            h = h + F.linear(a, attn.out_proj.weight, attn.out_proj.bias)
            y = F.layer_norm(h, (d,), layer.norm2.weight, layer.norm2.bias, layer.norm2.eps)
            h = h + layer.linear2(layer.activation(layer.linear1(y)))
        return h
