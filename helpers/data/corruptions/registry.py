"""The corruption registry: one :class:`CorruptionSpec` (function + five parameters per image-size table) per name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from helpers.registry import Registry

Fn = Callable[[np.ndarray, Any, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class CorruptionSpec:
    """A registered corruption.

    Attributes
    ----------
    name : str
    fn : callable
        ``fn(x, param, rng)`` on float64 ``(n, H, W, C)`` in [0, 1]; returns the same layout (clipping is done
        by :func:`corrupt`).
    params : tuple
        Five parameters (severity 1..5) for images with sides >= 16 pixels (CIFAR-10-C values).
    small_params : tuple
        Five parameters for smaller images (8x8 digits).
    """

    name: str
    fn: Fn
    params: tuple
    small_params: tuple

    def param(self, severity: int, shape: tuple[int, ...]) -> Any:
        table = self.small_params if min(shape[1], shape[2]) < 16 else self.params
        return table[severity - 1]


CORRUPTIONS: Registry[CorruptionSpec] = Registry("corruption")
_ALIASES = {"jpeg": "jpeg_compression", "elastic": "elastic_transform"}

#: The 19 corruption names of CIFAR-10-C, all registered here.
CIFAR10C_NAMES = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "speckle_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "gaussian_blur",
    "snow",
    "frost",
    "fog",
    "spatter",
    "brightness",
    "contrast",
    "saturate",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)


def register_corruption(name: str, *, params: Sequence[Any], small_params: Sequence[Any] | None = None):
    """Decorator registering ``fn(x, param, rng)`` as corruption ``name`` with 5 parameters per table."""
    small = tuple(params if small_params is None else small_params)
    if len(params) != 5 or len(small) != 5:
        raise ValueError(f"corruption {name!r} needs exactly 5 parameters per table (severities 1..5)")

    def deco(fn: Fn) -> Fn:
        CORRUPTIONS.register(name, CorruptionSpec(name, fn, tuple(params), small))
        return fn

    return deco


def list_corruptions() -> list[str]:
    """Registered corruption names (aliases ``jpeg`` and ``elastic`` are accepted too)."""
    return CORRUPTIONS.names()
