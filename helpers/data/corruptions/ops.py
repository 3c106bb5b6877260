"""Array operations shared by the corruptions: greyscale, filtering, warps, resampling, noise fields, kernels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import ndimage

# ------------------------------------------------------------------------------------------------ helpers


def _gray(x: np.ndarray) -> np.ndarray:
    """Luma (ITU-R 601) keeping a channel axis."""
    if x.shape[-1] == 1:
        return x
    return (x @ np.array([0.299, 0.587, 0.114]))[..., None]


def _filter_spatial(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Convolve every image and channel with a 2-D kernel (reflect padding)."""
    return ndimage.convolve(x, kernel[None, :, :, None], mode="reflect")


def _reflect(i: np.ndarray, n: int, border: str = "reflect") -> np.ndarray:
    """Mirror integer indices into 0..n-1: ``"reflect"`` is scipy's (d c b a | a b c d | d c b a),
    ``"reflect101"`` OpenCV's default (d c b | a b c d | c b a)."""
    if border == "reflect101":
        if n == 1:
            return np.zeros_like(i)
        i = np.mod(i, 2 * n - 2)
        return np.where(i >= n, 2 * n - 2 - i, i)
    i = np.mod(i, 2 * n)
    return np.where(i >= n, 2 * n - 1 - i, i)


def _warp(
    x: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, order: int = 1, border: str = "reflect"
) -> np.ndarray:
    """Sample each image at per-image source coordinates ``rows``/``cols`` of shape (n, H, W).

    Bilinear (``order=1``) or nearest (``order=0``) interpolation with mirrored borders (``border``, see
    :func:`_reflect`), gathering all channels of all images at once.
    """
    n, h, w, c = x.shape
    flat = x.reshape(n * h * w, c)
    base = (np.arange(n) * (h * w))[:, None, None]
    if order == 0:
        ri = _reflect(np.floor(rows + 0.5).astype(np.int64), h)
        ci = _reflect(np.floor(cols + 0.5).astype(np.int64), w)
        return flat[base + ri * w + ci]
    r0, c0 = np.floor(rows).astype(np.int64), np.floor(cols).astype(np.int64)
    fr, fc = (rows - r0)[..., None], (cols - c0)[..., None]
    ra, rb = base + _reflect(r0, h, border) * w, base + _reflect(r0 + 1, h, border) * w
    ca, cb = _reflect(c0, w, border), _reflect(c0 + 1, w, border)
    top = flat[ra + ca] * (1 - fc) + flat[ra + cb] * fc
    bottom = flat[rb + ca] * (1 - fc) + flat[rb + cb] * fc
    return top * (1 - fr) + bottom * fr


def _resample_axis(x: np.ndarray, src: np.ndarray, axis: int) -> np.ndarray:
    """Linear interpolation of ``x`` along ``axis`` at positions ``src`` (mirrored borders), all images at once."""
    n_in = x.shape[axis]
    i0 = np.floor(src).astype(np.int64)
    shape = [1] * x.ndim
    shape[axis] = len(src)
    f = (src - i0).reshape(shape)
    a = np.take(x, _reflect(i0, n_in), axis=axis)
    b = np.take(x, _reflect(i0 + 1, n_in), axis=axis)
    return a * (1 - f) + b * f


def _affine_warp(x: np.ndarray, mats: np.ndarray, shifts: np.ndarray, *, order: int = 1) -> np.ndarray:
    """Per-image affine map about the image centre: source = mats @ (target - centre) + centre + shifts."""
    n, h, w, _ = x.shape
    r, c = np.meshgrid(np.arange(h) - (h - 1) / 2, np.arange(w) - (w - 1) / 2, indexing="ij")
    rows = (
        mats[:, 0, 0, None, None] * r + mats[:, 0, 1, None, None] * c + (h - 1) / 2 + shifts[:, 0, None, None]
    )
    cols = (
        mats[:, 1, 0, None, None] * r + mats[:, 1, 1, None, None] * c + (w - 1) / 2 + shifts[:, 1, None, None]
    )
    return _warp(x, rows, cols, order=order)


def _lowfreq_noise(rng: np.random.Generator, n: int, h: int, w: int, exponent: float) -> np.ndarray:
    """Per-image 1/f^exponent noise (spectral synthesis), rescaled to [0, 1]: a plasma-fractal stand-in."""
    fy = np.fft.fftfreq(h)[:, None]
    fx = np.fft.rfftfreq(w)[None, :]
    f = np.sqrt(fy**2 + fx**2)
    f[0, 0] = 1.0
    amp = f**-exponent
    amp[0, 0] = 0.0
    spec = (rng.normal(size=(n, h, fx.shape[1])) + 1j * rng.normal(size=(n, h, fx.shape[1]))) * amp
    field = np.fft.irfft2(spec, s=(h, w))
    lo = field.min(axis=(1, 2), keepdims=True)
    hi = field.max(axis=(1, 2), keepdims=True)
    return (field - lo) / np.maximum(hi - lo, 1e-12)


def _disk_kernel(radius: float, alias_blur: float) -> np.ndarray:
    half = max(1, int(np.ceil(radius)) + 1)
    yy, xx = np.mgrid[-half : half + 1, -half : half + 1]
    k = ((xx**2 + yy**2) <= radius**2).astype(np.float64)
    k /= k.sum()
    k = ndimage.gaussian_filter(k, alias_blur, mode="constant")
    return k / k.sum()


def _motion_kernel(length: float, sigma: float, angle_deg: float) -> np.ndarray:
    """One-sided motion kernel: Gaussian weights along a ray of ``length`` pixels at ``angle_deg``."""
    half = int(np.ceil(length)) + 1
    k = np.zeros((2 * half + 1, 2 * half + 1))
    t = np.linspace(0.0, length, int(4 * length) + 1)
    wts = np.exp(-(t**2) / (2 * sigma**2))
    a = np.deg2rad(angle_deg)
    ys, xs = half - t * np.sin(a), half + t * np.cos(a)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    fy, fx = ys - y0, xs - x0
    for dy, dx, wgt in (
        (0, 0, (1 - fy) * (1 - fx)),
        (1, 0, fy * (1 - fx)),
        (0, 1, (1 - fy) * fx),
        (1, 1, fy * fx),
    ):
        np.add.at(k, (np.clip(y0 + dy, 0, 2 * half), np.clip(x0 + dx, 0, 2 * half)), wts * wgt)
    return k / k.sum()


def _area_matrix(n_out: int, n_in: int) -> np.ndarray:
    """Resampling matrix averaging the input cells each output cell overlaps (PIL ``BOX``-like)."""
    scale = n_in / n_out
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        a, b = i * scale, (i + 1) * scale
        for j in range(int(np.floor(a)), min(n_in, int(np.ceil(b)))):
            m[i, j] = max(0.0, min(b, j + 1) - max(a, j))
    return m / m.sum(axis=1, keepdims=True)


def _resample_twice(
    x: np.ndarray, down: tuple[np.ndarray, np.ndarray], up: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """Separable resampling of ``(n, H, W, C)`` by (rows, columns) matrices ``down``, then by ``up`` (pixelate)."""
    small = np.einsum("ih,nhwc,jw->nijc", down[0], x, down[1], optimize=True)
    return np.einsum("ih,nhwc,jw->nijc", up[0], small, up[1], optimize=True)


def _group_apply(x: np.ndarray, keys: np.ndarray, fn: Callable[[np.ndarray, Any], np.ndarray]) -> np.ndarray:
    """Apply ``fn(batch, key)`` to the images sharing each key (vectorised per group)."""
    out = np.empty_like(x)
    for key in np.unique(keys):
        idx = np.flatnonzero(keys == key)
        out[idx] = fn(x[idx], key)
    return out
