"""Noise and blur corruptions of CIFAR-10-C (Hendrycks & Dietterich 2019, ``make_cifar_c.py``): gaussian, shot,
impulse and speckle noise; gaussian, defocus, glass, motion and zoom blur.

The four noises follow the recipe at every image size. The blurs here serve 8x8 digits (scaled parameters,
vectorised stand-ins); images with sides >= 16 pixels get the recipe's blurs from
:mod:`helpers.data.corruptions.cifar10c`."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from helpers.data.corruptions.ops import (
    _disk_kernel,
    _filter_spatial,
    _group_apply,
    _motion_kernel,
    _resample_axis,
    _warp,
)
from helpers.data.corruptions.registry import register_corruption

# ------------------------------------------------------------------------------------------------- noise


@register_corruption(
    "gaussian_noise", params=(0.04, 0.06, 0.08, 0.09, 0.10), small_params=(0.08, 0.12, 0.18, 0.26, 0.36)
)
def gaussian_noise(x: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Additive Gaussian noise of standard deviation ``sigma`` (CIFAR-10-C)."""
    return x + rng.normal(scale=sigma, size=x.shape)


@register_corruption("shot_noise", params=(500, 250, 100, 75, 50), small_params=(60, 25, 12, 6, 3))
def shot_noise(x: np.ndarray, photons: float, rng: np.random.Generator) -> np.ndarray:
    """Poisson (shot) noise: ``Poisson(x * photons) / photons`` (CIFAR-10-C)."""
    return rng.poisson(x * photons) / photons


@register_corruption(
    "impulse_noise", params=(0.01, 0.02, 0.03, 0.05, 0.07), small_params=(0.03, 0.06, 0.09, 0.14, 0.2)
)
def impulse_noise(x: np.ndarray, amount: float, rng: np.random.Generator) -> np.ndarray:
    """Salt-and-pepper noise on a fraction ``amount`` of the values, half salt, half pepper (CIFAR-10-C)."""
    u = rng.random(x.shape)
    salt = rng.random(x.shape) < 0.5
    out = x.copy()
    hit = u < amount
    out[hit & salt] = 1.0
    out[hit & ~salt] = 0.0
    return out


@register_corruption(
    "speckle_noise", params=(0.06, 0.1, 0.12, 0.16, 0.2), small_params=(0.15, 0.25, 0.35, 0.45, 0.6)
)
def speckle_noise(x: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Multiplicative noise ``x + x * N(0, sigma)`` (CIFAR-10-C)."""
    return x + x * rng.normal(scale=sigma, size=x.shape)


# -------------------------------------------------------------------------------------------------- blur


@register_corruption(
    "gaussian_blur", params=(0.4, 0.6, 0.7, 0.8, 1.0), small_params=(0.4, 0.55, 0.7, 0.85, 1.0)
)
def gaussian_blur(x: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Gaussian blur with standard deviation ``sigma`` pixels (CIFAR-10-C)."""
    return ndimage.gaussian_filter(x, sigma=(0, sigma, sigma, 0), mode="reflect")


@register_corruption(
    "defocus_blur",
    params=((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1.0, 0.2), (1.5, 0.1)),
    small_params=((0.5, 0.4), (0.5, 0.6), (1.0, 0.4), (1.0, 0.6), (1.5, 0.5)),
)
def defocus_blur(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Convolution with an anti-aliased disk of radius ``p[0]`` (alias blur ``p[1]``) (CIFAR-10-C)."""
    return _filter_spatial(x, _disk_kernel(*p))


@register_corruption(
    "glass_blur",
    params=((0.3, 1, 1, 0.25), (0.4, 1, 1, 0.5), (0.5, 1, 1, 0.75), (0.6, 1, 2, 1.0), (0.7, 2, 2, 1.0)),
    small_params=((0.2, 1, 1, 0.1), (0.3, 1, 1, 0.2), (0.4, 1, 1, 0.35), (0.5, 1, 1, 0.5), (0.6, 1, 1, 0.7)),
)
def glass_blur(x: np.ndarray, p: tuple[float, int, int, float], rng: np.random.Generator) -> np.ndarray:
    """Gaussian blur (``p[0]``), ``p[2]`` rounds of local pixel displacement by up to ``p[1]`` pixels of a
    fraction ``p[3]`` of the pixels, then blur again.

    CIFAR-10-C swaps neighbouring pixels in a sequential loop over all pixels with sigmas 0.05, 0.25, 0.4,
    0.25, 0.4, which are not ordered by strength; here a pixel takes the value of a random neighbour at once
    (vectorised), and sigma, the moving fraction, the rounds and the reach grow together with severity, so
    that the distance from the clean image grows with severity.
    """
    sigma, delta, iters, frac = p
    n, h, w, _ = x.shape
    out = ndimage.gaussian_filter(x, sigma=(0, sigma, sigma, 0), mode="reflect")
    r, c = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    for _ in range(int(iters)):
        move = rng.random((n, h, w)) < frac
        dr = rng.integers(-delta, delta + 1, size=(n, h, w)) * move
        dc = rng.integers(-delta, delta + 1, size=(n, h, w)) * move
        out = _warp(out, np.clip(r + dr, 0, h - 1), np.clip(c + dc, 0, w - 1), order=0)
    return ndimage.gaussian_filter(out, sigma=(0, sigma, sigma, 0), mode="reflect")


@register_corruption(
    "motion_blur",
    params=((10, 1.0), (10, 1.5), (10, 2.0), (10, 2.5), (12, 3.0)),
    small_params=((3, 0.5), (3, 0.75), (3, 1.0), (4, 1.25), (4, 1.5)),
)
def motion_blur(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Motion blur along a random angle in [-45, 45] degrees per image (CIFAR-10-C: ImageMagick radius, sigma).

    Angles are drawn per image and rounded to 5 degrees; images sharing an angle are filtered together.
    """
    length, sigma = p
    angles = np.round(rng.uniform(-45, 45, size=len(x)) / 5) * 5
    return _group_apply(
        x, angles, lambda b, a: _filter_spatial(b, _motion_kernel(min(length, 3 * sigma), sigma, a))
    )


@register_corruption(
    "zoom_blur",
    params=tuple(
        tuple(np.round(np.arange(1, e, s), 3))
        for e, s in ((1.06, 0.01), (1.11, 0.01), (1.16, 0.02), (1.21, 0.02), (1.26, 0.03))
    ),
    small_params=tuple(
        tuple(np.round(np.arange(1, e, s), 3))
        for e, s in ((1.06, 0.01), (1.11, 0.01), (1.16, 0.02), (1.21, 0.02), (1.26, 0.03))
    ),
)
def zoom_blur(x: np.ndarray, zooms: tuple[float, ...], rng: np.random.Generator) -> np.ndarray:
    """Average of the image zoomed about its centre by each factor in ``zooms`` (CIFAR-10-C)."""
    _, h, w, _ = x.shape
    out = x.copy()
    for z in zooms[1:]:
        zr = _resample_axis(x, (np.arange(h) - (h - 1) / 2) / z + (h - 1) / 2, 1)
        out += _resample_axis(zr, (np.arange(w) - (w - 1) / 2) / z + (w - 1) / 2, 2)
    return out / len(zooms)
