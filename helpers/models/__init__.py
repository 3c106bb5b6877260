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

from torch import nn

from helpers.models import dann, minilm, mlp, resnet_cifar, text, vision  # noqa: E402,F401  (register factories)
from helpers.models.registry import MODELS

__all__ = ["MODELS", "build_model", "available_models"]


def build_model(name: str, **kwargs: Any) -> nn.Module:
    """Build the model registered as ``name`` with keyword arguments ``kwargs``.

    Raises
    ------
    helpers.errors.UnknownNameError
        If ``name`` is not registered; the message lists the known names.
    """
    return MODELS.get(name)(**kwargs)


def available_models() -> list[str]:
    """Sorted names accepted by :func:`build_model`."""
    return MODELS.names()
