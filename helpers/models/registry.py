"""The model registry (kept in its own module so family modules can import it without cycles)."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from helpers.registry import Registry

MODELS: Registry[Callable[..., nn.Module]] = Registry("model")
