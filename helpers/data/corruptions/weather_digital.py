"""Weather and digital corruptions: fog, frost, snow, spatter; contrast, brightness, saturate, JPEG, pixelate,
elastic transform; and the extra geometric transforms (rotate, affine).

Contrast, brightness and JPEG follow CIFAR-10-C's ``make_cifar_c.py`` at every image size. For images with sides
>= 16 pixels the other CIFAR-10-C types are replaced by the recipe in :mod:`helpers.data.corruptions.cifar10c`;
the versions here (procedural fog/frost/snow/spatter textures, scaled parameters) serve 8x8 digits."""

from __future__ import annotations

import io

import numpy as np
from scipy import ndimage

from helpers.data.corruptions.noise_blur import motion_blur
from helpers.data.corruptions.ops import (
    _affine_warp,
    _area_matrix,
    _gray,
    _lowfreq_noise,
    _resample_twice,
    _warp,
)
from helpers.data.corruptions.registry import register_corruption

# ---------------------------------------------------------------------------------------------- weather


@register_corruption(
    "fog",
    params=((0.2, 3.0), (0.5, 3.0), (0.75, 2.5), (1.0, 2.0), (1.5, 1.75)),
    small_params=((0.2, 3.0), (0.5, 3.0), (0.75, 2.5), (1.0, 2.0), (1.5, 1.75)),
)
def fog(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Fog-like haze: ``(x + p[0] * F) * max(x) / (max(x) + p[0])`` with F smooth 1/f noise in [0, 1].

    CIFAR-10-C uses a diamond-square plasma fractal whose roughness decays with ``p[1]``; here the noise has a
    1/f^(0.6 p[1] + 0.2) amplitude spectrum (smoother for larger ``p[1]``).
    """
    amount, decay = p
    n, h, w, _ = x.shape
    f = _lowfreq_noise(rng, n, h, w, 0.6 * decay + 0.2)[..., None]
    mx = x.max(axis=(1, 2, 3), keepdims=True)
    return (x + amount * f) * mx / (mx + amount)


@register_corruption(
    "frost",
    params=((1.0, 0.2), (1.0, 0.3), (0.95, 0.4), (0.9, 0.5), (0.85, 0.6)),
    small_params=((1.0, 0.2), (1.0, 0.3), (0.95, 0.4), (0.9, 0.5), (0.85, 0.6)),
)
def frost(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Frost-like overlay ``p[0] * x + p[1] * T``: CIFAR-10-C blends frost photographs with weights
    (1, .2), (1, .3), (.9, .4), (.85, .4), (.75, .45); here T is a procedural ice texture (bright low-frequency
    patches modulated by fine noise) and the weights are (1, .2), (1, .3), (.95, .4), (.9, .5), (.85, .6) so that
    strength grows with severity for this texture."""
    n, h, w, _ = x.shape
    low = _lowfreq_noise(rng, n, h, w, 1.5)
    fine = _lowfreq_noise(rng, n, h, w, 0.5)
    tex = np.clip(1.6 * low * (0.5 + fine) - 0.3, 0.0, 1.0)[..., None]
    tex = tex * np.array([0.85, 0.9, 1.0])[: x.shape[-1]] if x.shape[-1] == 3 else tex
    return p[0] * x + p[1] * tex


@register_corruption(
    "snow",
    params=((0.08, 0.2, 0.8), (0.1, 0.3, 0.7), (0.14, 0.35, 0.7), (0.18, 0.45, 0.65), (0.22, 0.55, 0.55)),
    small_params=(
        (0.08, 0.2, 0.8),
        (0.1, 0.3, 0.7),
        (0.14, 0.35, 0.7),
        (0.18, 0.45, 0.65),
        (0.22, 0.55, 0.55),
    ),
)
def snow(x: np.ndarray, p: tuple[float, float, float], rng: np.random.Generator) -> np.ndarray:
    """Snow-like: a whitened image (weight ``1 - p[2]``) plus a fraction ``p[0]`` of motion-blurred bright flakes
    of strength ``p[1]`` (after CIFAR-10-C's snow, which uses ImageMagick motion blur on a noise layer)."""
    density, strength, keep = p
    n, h, w, _ = x.shape
    flakes = (rng.random((n, h, w, 1)) < density).astype(np.float64)
    flakes = motion_blur(flakes, (3.0, 1.0), rng) * 2.0
    bright = np.maximum(x, _gray(x) * 1.5 + 0.5)
    return keep * x + (1 - keep) * bright + strength * flakes


@register_corruption(
    "spatter",
    params=((0.05, 0.6), (0.1, 0.6), (0.15, 0.7), (0.2, 0.7), (0.3, 0.8)),
    small_params=((0.05, 0.6), (0.1, 0.6), (0.15, 0.7), (0.2, 0.7), (0.3, 0.8)),
)
def spatter(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Spatter-like mud: the fraction ``p[0]`` of each image under the peaks of smooth random noise is blended
    (opacity ``p[1]``) with a dark brown mud colour (CIFAR-10-C draws liquid or mud blobs)."""
    area, alpha = p
    n, h, w, _ = x.shape
    f = _lowfreq_noise(rng, n, h, w, 1.2)
    thr = np.quantile(f.reshape(n, -1), 1 - area, axis=1)[:, None, None]
    mask = ndimage.gaussian_filter((f >= thr).astype(np.float64), sigma=(0, 0.5, 0.5))[..., None]
    mud = np.array([0.25, 0.17, 0.08]) if x.shape[-1] == 3 else np.array([0.2])
    return x * (1 - alpha * mask) + alpha * mask * mud


# ------------------------------------------------------------------------------------------------ digital


@register_corruption(
    "contrast", params=(0.75, 0.5, 0.4, 0.3, 0.15), small_params=(0.75, 0.6, 0.45, 0.3, 0.15)
)
def contrast(x: np.ndarray, c: float, rng: np.random.Generator) -> np.ndarray:
    """Shrink towards each image's mean: ``(x - mean) * c + mean`` (CIFAR-10-C)."""
    m = x.mean(axis=(1, 2, 3), keepdims=True)
    return (x - m) * c + m


@register_corruption(
    "brightness", params=(0.05, 0.1, 0.15, 0.2, 0.3), small_params=(0.05, 0.1, 0.15, 0.2, 0.3)
)
def brightness(x: np.ndarray, c: float, rng: np.random.Generator) -> np.ndarray:
    """Add ``c`` to the HSV value channel (CIFAR-10-C); hue and saturation are kept.

    With V = max over channels, RGB scales by V'/V (black pixels become grey V'); for grayscale it is ``x + c``.
    """
    v = x.max(axis=-1, keepdims=True)
    v_new = np.clip(v + c, 0.0, 1.0)
    return np.where(v > 0, x * v_new / np.maximum(v, 1e-12), v_new)


@register_corruption(
    "saturate",
    params=((0.3, 0.0), (0.1, 0.0), (2.0, 0.0), (5.0, 0.1), (20.0, 0.2)),
    small_params=((0.3, 0.0), (0.1, 0.0), (2.0, 0.0), (5.0, 0.1), (20.0, 0.2)),
)
def saturate(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """HSV saturation ``S' = clip(S * p[0] + p[1])`` with hue and value kept (CIFAR-10-C).

    Uses ``x' = V - (V - x) * S'/S``. Grayscale images have no saturation: identity. As in CIFAR-10-C, the
    severities are not ordered by distance (1-2 desaturate, 3-5 oversaturate).
    """
    if x.shape[-1] == 1:
        return x
    v = x.max(axis=-1, keepdims=True)
    mn = x.min(axis=-1, keepdims=True)
    s = np.where(v > 0, (v - mn) / np.maximum(v, 1e-12), 0.0)
    s_new = np.clip(s * p[0] + p[1], 0.0, 1.0)
    ratio = np.where(s > 0, s_new / np.maximum(s, 1e-12), 0.0)
    return np.where(s > 0, v - (v - x) * ratio, x)


@register_corruption("jpeg_compression", params=(80, 65, 58, 50, 40), small_params=(50, 30, 20, 12, 6))
def jpeg_compression(x: np.ndarray, quality: int, rng: np.random.Generator) -> np.ndarray:
    """JPEG encode/decode at ``quality`` with Pillow (CIFAR-10-C); values are quantised to 8 bits first."""
    from PIL import Image

    u8 = np.rint(np.clip(x, 0, 1) * 255).astype(np.uint8)
    out = np.empty_like(u8)
    for i, img in enumerate(u8):
        pil = Image.fromarray(img[..., 0] if img.shape[-1] == 1 else img)
        buf = io.BytesIO()
        pil.save(buf, format="JPEG", quality=int(quality))
        dec = np.asarray(Image.open(io.BytesIO(buf.getvalue())))
        out[i] = dec.reshape(img.shape)
    return out.astype(np.float64) / 255.0


@register_corruption(
    "pixelate", params=(0.95, 0.9, 0.85, 0.75, 0.65), small_params=(0.875, 0.75, 0.625, 0.5, 0.375)
)
def pixelate(x: np.ndarray, c: float, rng: np.random.Generator) -> np.ndarray:
    """Box-downsample to ``c`` times the size and back up (CIFAR-10-C uses PIL ``BOX`` both ways)."""
    _, h, w, _ = x.shape
    hs, ws = max(1, int(h * c)), max(1, int(w * c))
    down, up = (_area_matrix(hs, h), _area_matrix(ws, w)), (_area_matrix(h, hs), _area_matrix(w, ws))
    return _resample_twice(x, down, up)


@register_corruption(
    "elastic_transform",
    params=((0.5, 3.0), (0.8, 3.0), (1.1, 2.5), (1.4, 2.5), (1.8, 2.0)),
    small_params=((0.25, 1.5), (0.4, 1.5), (0.55, 1.2), (0.7, 1.2), (0.9, 1.0)),
)
def elastic_transform(x: np.ndarray, p: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Elastic deformation (Simard et al. 2003): a random displacement field smoothed with a Gaussian of width
    ``p[1]`` pixels and scaled to an RMS displacement of ``p[0]`` pixels (CIFAR-10-C adds an affine part too)."""
    alpha, sigma = p
    n, h, w, _ = x.shape
    d = ndimage.gaussian_filter(
        rng.uniform(-1, 1, size=(2, n, h, w)), sigma=(0, 0, sigma, sigma), mode="reflect"
    )
    d *= alpha / np.maximum(np.sqrt((d**2).mean(axis=(2, 3), keepdims=True)), 1e-12)
    r, c = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return _warp(x, r + d[0], c + d[1])


@register_corruption("rotate", params=(6, 12, 18, 24, 30), small_params=(6, 12, 18, 24, 30))
def rotate(x: np.ndarray, degrees: float, rng: np.random.Generator) -> np.ndarray:
    """Rotation about the centre by a random angle of magnitude in [0.8, 1] x ``degrees`` and random sign."""
    n = len(x)
    a = np.deg2rad(degrees * rng.uniform(0.8, 1.0, size=n) * rng.choice([-1.0, 1.0], size=n))
    mats = np.stack([np.stack([np.cos(a), -np.sin(a)], -1), np.stack([np.sin(a), np.cos(a)], -1)], 1)
    return _affine_warp(x, mats, np.zeros((n, 2)))


@register_corruption(
    "affine",
    params=(
        (5, 0.05, 0.05, 0.03),
        (10, 0.1, 0.08, 0.06),
        (15, 0.15, 0.12, 0.09),
        (20, 0.2, 0.16, 0.12),
        (25, 0.25, 0.2, 0.15),
    ),
    small_params=(
        (5, 0.05, 0.05, 0.03),
        (10, 0.1, 0.08, 0.06),
        (15, 0.15, 0.12, 0.09),
        (20, 0.2, 0.16, 0.12),
        (25, 0.25, 0.2, 0.15),
    ),
)
def affine(x: np.ndarray, p: tuple[float, float, float, float], rng: np.random.Generator) -> np.ndarray:
    """Random affine map: rotation up to ``p[0]`` degrees, shear up to ``p[1]``, scale 1 +- ``p[2]``,
    translation up to ``p[3]`` of the side (each magnitude drawn in [0.5, 1] x its maximum, random sign)."""
    n, h, w, _ = x.shape

    def mag(m: float) -> np.ndarray:
        return m * rng.uniform(0.5, 1.0, size=n) * rng.choice([-1.0, 1.0], size=n)

    a, sh, sc = np.deg2rad(mag(p[0])), mag(p[1]), 1.0 + mag(p[2])
    rot = np.stack([np.stack([np.cos(a), -np.sin(a)], -1), np.stack([np.sin(a), np.cos(a)], -1)], 1)
    shear = np.zeros((n, 2, 2))
    shear[:, 0, 0] = shear[:, 1, 1] = 1.0
    shear[:, 0, 1] = sh
    mats = rot @ shear / sc[:, None, None]
    shifts = np.stack([mag(p[3]) * h, mag(p[3]) * w], 1)
    return _affine_warp(x, mats, shifts)
