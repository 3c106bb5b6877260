"""Model factories, registered by name so a papermill parameter can pick one.

>>> from helpers.models import build_model
>>> model = build_model("cnn_bn", num_classes=10)

Families live in one module each: :mod:`~helpers.models.vision` (small CNNs for 8x8 / 16x16 digits),
:mod:`~helpers.models.resnet_cifar` (CIFAR ResNet-20/32/44/56 with the shipped weights),
:mod:`~helpers.models.dann` (gradient reversal, DANN wrapper and loss), :mod:`~helpers.models.text` (vocabulary and
light text classifiers), :mod:`~helpers.models.minilm` (MiniLM-L6 encoder and classifier) and
:mod:`~helpers.models.mlp` (fully connected networks over TF-IDF features).  ``transformers`` is imported only when a
MiniLM model is built.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from helpers.models import dann, minilm, mlp, resnet_cifar, text, vision  # noqa: E402,F401  (register factories)
from helpers.models.registry import MODELS

__all__ = ["MODELS", "build_model", "available_models"]


def build_model(name: str, *, seed: int | None = None, **kwargs: Any) -> nn.Module:
    """Build the model registered as ``name`` with keyword arguments ``kwargs``.

    ``seed`` makes the random initial weights reproducible across processes (torch seeds its global generator
    randomly in every new process): the model is built under ``torch.manual_seed(seed)`` inside
    ``torch.random.fork_rng``, so the caller's global RNG state is left as it was.  ``None`` draws from the global
    generator as torch does.

    Raises
    ------
    helpers.errors.UnknownNameError
        If ``name`` is not registered; the message lists the known names.
    """
    factory = MODELS.get(name)
    if seed is None:
        return factory(**kwargs)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return factory(**kwargs)


def available_models() -> list[str]:
    """Sorted names accepted by :func:`build_model`."""
    return MODELS.names()
