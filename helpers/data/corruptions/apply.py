"""Applying registered corruptions: value-range conversion, one corruption at a severity, compositions."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from helpers.data.corruptions.registry import (
    _ALIASES,
    CIFAR10C_NAMES,
    CORRUPTIONS,
    CorruptionSpec,
)
from helpers.errors import InputValidationError

# ----------------------------------------------------------------------------------------------- conversions


def infer_value_range(images: np.ndarray) -> tuple[float, float]:
    """The value range an image batch lives in.

    uint8 -> (0, 255). Floating point: (0, 1) if all values are in [0, 1], (-1, 1) if in [-1, 1] (USPS),
    (0, 16) if in [0, 16] (scikit-learn digits), (0, 255) if in [0, 255]; otherwise pass ``value_range``.
    A batch that happens to fit a smaller range (e.g. digits that are all <= 1) is ambiguous: pass
    ``value_range`` explicitly when in doubt.
    """
    if images.dtype == np.uint8:
        return (0.0, 255.0)
    if not np.issubdtype(images.dtype, np.floating):
        raise InputValidationError(f"images must be uint8 or floating point, got dtype {images.dtype}")
    if not np.isfinite(images).all():
        raise InputValidationError("images contain NaN or inf")
    lo, hi = float(images.min()), float(images.max())
    for rng in ((0.0, 1.0), (-1.0, 1.0), (0.0, 16.0), (0.0, 255.0)):
        if lo >= rng[0] and hi <= rng[1]:
            return rng
    raise InputValidationError(
        f"cannot infer the value range of images in [{lo}, {hi}]; pass value_range=(lo, hi)"
    )


def _to_unit(images: np.ndarray, value_range: tuple[float, float] | None) -> tuple[np.ndarray, Callable]:
    arr = np.asarray(images)
    if arr.ndim not in (3, 4):
        raise InputValidationError(f"images must be (n, H, W) or (n, H, W, C), got shape {arr.shape}")
    if arr.ndim == 4 and arr.shape[-1] not in (1, 3):
        raise InputValidationError(
            f"images must be channels-last with 1 or 3 channels, got shape {arr.shape}"
        )
    lo, hi = infer_value_range(arr) if value_range is None else (float(value_range[0]), float(value_range[1]))
    if not hi > lo:
        raise InputValidationError(f"value_range must be (lo, hi) with hi > lo, got {value_range}")
    x = (arr.astype(np.float64) - lo) / (hi - lo)
    squeeze = arr.ndim == 3
    if squeeze:
        x = x[..., None]
    dtype = arr.dtype

    def back(u: np.ndarray) -> np.ndarray:
        u = np.clip(u, 0.0, 1.0)
        if squeeze:
            u = u[..., 0]
        if dtype == np.uint8:
            return np.rint(u * 255.0).astype(np.uint8)
        return (u * (hi - lo) + lo).astype(dtype)

    return np.clip(x, 0.0, 1.0), back


def _check_severity(severity: int) -> int:
    if isinstance(severity, bool) or not isinstance(severity, (int, np.integer)) or not 1 <= severity <= 5:
        raise InputValidationError(f"severity must be an integer in 1..5, got {severity!r}")
    return int(severity)


def _spec(name: str) -> CorruptionSpec:
    return CORRUPTIONS.get(_ALIASES.get(name, name))


def corrupt(
    images: np.ndarray,
    name: str,
    severity: int,
    seed: int | np.random.Generator | None = 0,
    *,
    value_range: tuple[float, float] | None = None,
) -> np.ndarray:
    """Apply corruption ``name`` at ``severity`` to a batch of images, deterministically for a given seed.

    Parameters
    ----------
    images : numpy.ndarray
        ``(n, H, W)`` grayscale or ``(n, H, W, C)`` with C in {1, 3}; uint8 or float.
    name : str
        A name from :func:`list_corruptions` (CIFAR-10-C names plus ``rotate`` and ``affine``).
    severity : int
        1 (mild) .. 5 (strong).
    seed : int or numpy.random.Generator or None
        Seed of the random draws (noise, angles, textures); same seed, same output.
    value_range : (float, float), keyword-only
        Range of the input values; inferred by :func:`infer_value_range` when omitted.

    Returns
    -------
    numpy.ndarray
        Same shape, dtype and value range as ``images``.

    Raises
    ------
    UnknownNameError
        Unknown corruption name.
    InputValidationError
        Severity outside 1..5, bad shape or dtype.
    """
    spec = _spec(name)
    severity = _check_severity(severity)
    x, back = _to_unit(images, value_range)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if len(x) == 0:
        return back(x)
    return back(spec.apply(x, severity, rng))


def compose(
    images: np.ndarray,
    steps: Sequence[tuple[str, int]],
    seed: int | None = 0,
    *,
    value_range: tuple[float, float] | None = None,
) -> np.ndarray:
    """Apply several corruptions in order, e.g. ``[("fog", 2), ("gaussian_noise", 3)]``.

    Each step gets its own child seed of ``seed`` (numpy ``SeedSequence.spawn``), so the result is deterministic.
    """
    x, back = _to_unit(images, value_range)
    children = np.random.SeedSequence(seed).spawn(len(steps))
    for (name, severity), child in zip(steps, children):
        spec = _spec(name)
        sev = _check_severity(severity)
        x = np.clip(spec.apply(x, sev, np.random.default_rng(child)), 0.0, 1.0)
    return back(x)


def random_composition(
    images: np.ndarray,
    *,
    n_ops: int = 2,
    seed: int | None = 0,
    names: Sequence[str] | None = None,
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    value_range: tuple[float, float] | None = None,
) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """Apply ``n_ops`` distinct corruptions drawn at random (names and severities), for synthetic meta-sets.

    Returns the corrupted images and the list of ``(name, severity)`` steps that were applied.
    """
    pool = list(names) if names is not None else list(CIFAR10C_NAMES)
    for n in pool:
        _spec(n)
    if not 1 <= n_ops <= len(pool):
        raise InputValidationError(f"n_ops must be in 1..{len(pool)}, got {n_ops}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(pool), size=n_ops, replace=False)
    steps = [(pool[i], int(rng.choice(list(severities)))) for i in chosen]
    return compose(images, steps, int(rng.integers(2**31)), value_range=value_range), steps
