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
    small_fn : callable or None
        The function for smaller images when it differs from ``fn`` (the CIFAR-10-C recipes of
        :mod:`helpers.data.corruptions.cifar10c` are defined for 32x32 images; 8x8 digits keep the scaled
        variants of :mod:`~helpers.data.corruptions.noise_blur` / :mod:`~helpers.data.corruptions.weather_digital`).
    """

    name: str
    fn: Fn
    params: tuple
    small_params: tuple
    small_fn: Fn | None = None

    @staticmethod
    def is_small(shape: tuple[int, ...]) -> bool:
        return min(shape[1], shape[2]) < 16

    def param(self, severity: int, shape: tuple[int, ...]) -> Any:
        table = self.small_params if self.is_small(shape) else self.params
        return table[severity - 1]

    def apply(self, x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
        """The corruption at ``severity`` on float ``(n, H, W, C)`` in [0, 1] (not clipped)."""
        fn = self.small_fn if self.small_fn is not None and self.is_small(x.shape) else self.fn
        return fn(x, self.param(severity, x.shape), rng)


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


def register_recipe(name: str, *, params: Sequence[Any]):
    """Decorator making ``fn(x, param, rng)`` the recipe of the already registered corruption ``name`` for images
    with sides >= 16 pixels (parameters ``params``); the registered function stays in use for smaller images."""
    if len(params) != 5:
        raise ValueError(f"corruption {name!r} needs exactly 5 parameters (severities 1..5)")

    def deco(fn: Fn) -> Fn:
        old = CORRUPTIONS.get(name)
        CORRUPTIONS._items[name] = CorruptionSpec(name, fn, tuple(params), old.small_params, old.fn)
        return fn

    return deco


def list_corruptions() -> list[str]:
    """Registered corruption names (aliases ``jpeg`` and ``elastic`` are accepted too)."""
    return CORRUPTIONS.names()
