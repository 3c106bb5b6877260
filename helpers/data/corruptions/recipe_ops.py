"""Batch versions of the image operations CIFAR-10-C's ``make_cifar_c.py`` borrows from OpenCV, ImageMagick,
scikit-image and scipy (Hendrycks & Dietterich 2019), written with numpy/scipy for ``(n, H, W[, C])`` arrays.

Each function states which library call it stands for and where it is not bit-exact.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from helpers.data.corruptions.ops import _warp

# --------------------------------------------------------------------------------------------- filters


def sk_gaussian(x: np.ndarray, sigma: float, *, mode: str = "nearest", truncate: float = 4.0) -> np.ndarray:
    """``skimage.filters.gaussian`` over the two spatial axes of ``(n, H, W[, C])`` (its defaults: ``nearest``
    borders, truncated at 4 sigma); ``sigma = 0`` is the identity."""
    if sigma <= 0:
        return x.astype(np.float64, copy=True)
    sig = (0, sigma, sigma) + (0,) * (x.ndim - 3)
    return ndimage.gaussian_filter(x.astype(np.float64), sigma=sig, mode=mode, truncate=truncate)


def cv_box3(x: np.ndarray) -> np.ndarray:
    """``cv2.blur(x, (3, 3))`` on ``(n, H, W)``: 3x3 mean with OpenCV's default border (reflect-101, scipy
    ``mirror``); uint8 input gives uint8 output rounded to nearest, as OpenCV does."""
    out = ndimage.uniform_filter(x.astype(np.float64), size=(1, 3, 3), mode="mirror")
    return np.clip(np.rint(out), 0, 255).astype(np.uint8) if x.dtype == np.uint8 else out


def cv_filter2d_u8(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``cv2.filter2D(x, cv2.CV_8U, kernel)`` on uint8 ``(n, H, W)``: correlation (not convolution) with the
    kernel centred, reflect-101 borders, result rounded and saturated to 0..255."""
    out = ndimage.correlate(x.astype(np.float64), kernel[None].astype(np.float64), mode="mirror")
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def cv_equalize_hist(x: np.ndarray) -> np.ndarray:
    """``cv2.equalizeHist`` per image of uint8 ``(n, H, W)``: lut[v] = round(255 (cdf(v) - h0) / (N - h0)) with
    h0 the count of the lowest occurring value (an image of one value stays as it is)."""
    n = len(x)
    flat = x.reshape(n, -1)
    hist = np.zeros((n, 256), np.int64)
    np.add.at(hist, (np.repeat(np.arange(n), flat.shape[1]), flat.ravel()), 1)
    cdf = hist.cumsum(axis=1)
    first = np.argmax(hist > 0, axis=1)
    h0 = hist[np.arange(n), first][:, None]
    total = flat.shape[1]
    denom = np.maximum(total - h0, 1)
    lut = np.clip(np.rint((cdf - h0) * (255.0 / denom)), 0, 255).astype(np.uint8)
    lut[np.arange(256)[None, :] < first[:, None]] = 0
    flat_img = (h0[:, 0] == total)[:, None]  # one grey value: OpenCV fills the image with that value
    out = np.where(flat_img, flat, np.take_along_axis(lut, flat.astype(np.int64), axis=1))
    return out.reshape(x.shape).astype(np.uint8)


def cv_canny(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """Edges of uint8 ``(n, H, W)`` as ``cv2.Canny(x, low, high)`` finds them (3x3 Sobel with replicated borders,
    L1 gradient magnitude, non-maximum suppression in four directions with OpenCV's tie rules, hysteresis with
    8-connected weak edges kept when they touch a strong one). Returns a bool array."""
    f = x.astype(np.float64)
    sobel = np.array([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
    gx = ndimage.correlate(f, sobel[None], mode="nearest")
    gy = ndimage.correlate(f, sobel.T[None], mode="nearest")
    mag = np.abs(gx) + np.abs(gy)
    pad = np.pad(mag, ((0, 0), (1, 1), (1, 1)))  # OpenCV's magnitude buffer is zero outside the image
    h, w = mag.shape[1:]

    def nb(dr: int, dc: int) -> np.ndarray:
        return pad[:, 1 + dr : 1 + dr + h, 1 + dc : 1 + dc + w]

    ax, ay = np.abs(gx), np.abs(gy)
    tg22, tg67 = ax * np.tan(np.deg2rad(22.5)), ax * np.tan(np.deg2rad(67.5))
    horiz = ay < tg22
    vert = ~horiz & (ay > tg67)
    diag = ~horiz & ~vert
    s = np.where(gx * gy < 0, -1, 1)
    keep = np.zeros_like(mag, dtype=bool)
    keep |= horiz & (mag > nb(0, -1)) & (mag >= nb(0, 1))
    keep |= vert & (mag > nb(-1, 0)) & (mag >= nb(1, 0))
    diag_max = np.where(s < 0, (mag > nb(-1, 1)) & (mag > nb(1, -1)), (mag > nb(-1, -1)) & (mag > nb(1, 1)))
    keep |= diag & diag_max
    cand = keep & (mag > low)
    strong = cand & (mag > high)
    labels, _ = ndimage.label(cand, structure=np.array([[[0] * 3] * 3, [[1] * 3] * 3, [[0] * 3] * 3]))
    good = np.unique(labels[strong])
    return np.isin(labels, good[good > 0])


def distance_to_zero(x: np.ndarray) -> np.ndarray:
    """Euclidean distance of every pixel of ``(n, H, W)`` to the nearest zero pixel of its image (stands for
    ``cv2.distanceTransform(x, cv2.DIST_L2, 5)``, whose 5x5 chamfer mask approximates it to ~2 %); an image
    without a zero pixel gets ``inf``."""
    out = np.full(x.shape, np.inf)
    for i, img in enumerate(x):
        if (img == 0).any():
            out[i] = ndimage.distance_transform_edt(img != 0)
    return out


# ------------------------------------------------------------------------------------------ geometry


def _zoom_axis(x: np.ndarray, n_out: int, axis: int) -> np.ndarray:
    """``scipy.ndimage.zoom(order=1)`` along one axis: output j samples input ``j (n_in - 1) / (n_out - 1)``."""
    n_in = x.shape[axis]
    pos = np.arange(n_out) * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(1)
    i0 = np.minimum(np.floor(pos).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    shape = [1] * x.ndim
    shape[axis] = n_out
    f = (pos - i0).reshape(shape)
    return np.take(x, i0, axis=axis) * (1 - f) + np.take(x, i1, axis=axis) * f


def clipped_zoom(x: np.ndarray, z: float) -> np.ndarray:
    """``make_cifar_c.py``'s ``clipped_zoom`` on ``(n, H, W[, C])``: crop the central ``ceil(H / z)`` square,
    zoom it by ``z`` as ``scipy.ndimage.zoom(order=1)`` does (output side ``round(ceil(H / z) * z)``, corners
    mapped to corners; done axis by axis here) and trim the result back to H x W from its centre offset."""
    h, w = x.shape[1:3]
    ch, cw = int(np.ceil(h / z)), int(np.ceil(w / z))
    top, left = (h - ch) // 2, (w - cw) // 2
    crop = x[:, top : top + ch, left : left + cw].astype(np.float64)
    out = _zoom_axis(_zoom_axis(crop, int(round(ch * z)), 1), int(round(cw * z)), 2)
    tt, tl = (out.shape[1] - h) // 2, (out.shape[2] - w) // 2
    return out[:, tt : tt + h, tl : tl + w]


def magick_motion_blur(x: np.ndarray, radius: float, sigma: float, angles_deg: np.ndarray) -> np.ndarray:
    """ImageMagick's ``MotionBlurImage(radius, sigma, angle)`` on ``(n, H, W[, C])``, one angle per image.

    One-sided kernel of width ``2 ceil(radius) + 1`` with weights ``exp(-i^2 / (2 sigma^2))`` (i = 0..width-1,
    normalised); tap i reads the pixel at offset ``(ceil(i cos a - 0.5), ceil(i sin a - 0.5))`` (columns, rows)
    with edge pixels repeated outside the image (ImageMagick's default virtual-pixel method).
    """
    width = int(2 * np.ceil(radius) + 1) if radius > 1e-12 else 3
    sig = max(abs(sigma), 1e-12)
    i = np.arange(width)
    k = np.exp(-(i**2) / (2 * sig**2))
    k /= k.sum()
    a = np.deg2rad(np.asarray(angles_deg, dtype=np.float64))
    dc = np.ceil(i[None, :] * np.cos(a)[:, None] - 0.5).astype(np.int64)  # (n, width)
    dr = np.ceil(i[None, :] * np.sin(a)[:, None] - 0.5).astype(np.int64)
    n, h, w = x.shape[:3]
    rows, cols = np.arange(h)[None, :, None], np.arange(w)[None, None, :]
    idx = np.arange(n)[:, None, None]
    out = np.zeros(x.shape, dtype=np.float64)
    for t in range(width):
        r = np.clip(rows + dr[:, t, None, None], 0, h - 1)
        c = np.clip(cols + dc[:, t, None, None], 0, w - 1)
        out += k[t] * x[idx, r, c]
    return out


def cv_warp_affine(x: np.ndarray, mats: np.ndarray) -> np.ndarray:
    """``cv2.warpAffine(img, M, (W, H), borderMode=cv2.BORDER_REFLECT_101)`` per image of ``(n, H, W, C)``:
    ``dst(col, row) = src(M^-1 (col, row))`` with bilinear interpolation (OpenCV quantises the sampling
    position to 1/32 pixel; this does not). ``mats`` is ``(n, 2, 3)`` in OpenCV's (x = column, y = row) order."""
    n, h, w, _ = x.shape
    full = np.concatenate([mats, np.broadcast_to([0.0, 0.0, 1.0], (n, 1, 3))], axis=1)
    inv = np.linalg.inv(full)
    rr, cc = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    src_c = inv[:, 0, 0, None, None] * cc + inv[:, 0, 1, None, None] * rr + inv[:, 0, 2, None, None]
    src_r = inv[:, 1, 0, None, None] * cc + inv[:, 1, 1, None, None] * rr + inv[:, 1, 2, None, None]
    return _warp(x, src_r, src_c, border="reflect101")


# ------------------------------------------------------------------------------------------ textures


def plasma_fractal(rng: np.random.Generator, n: int, mapsize: int, wibbledecay: float) -> np.ndarray:
    """``n`` diamond-square height maps of side ``mapsize`` (a power of two) in [0, 1], as ``make_cifar_c.py``'s
    ``plasma_fractal``: corners 0, each new point = mean of its 4 neighbours (wrapping) + ``wibble * U(-wibble,
    wibble)``, wibble starting at 100 and divided by ``wibbledecay`` per level; then min-max scaled per map."""
    if mapsize < 2 or mapsize & (mapsize - 1):
        raise ValueError(f"mapsize must be a power of two >= 2, got {mapsize}")
    a = np.zeros((n, mapsize, mapsize))
    step, wibble = mapsize, 100.0
    while step >= 2:
        half = step // 2
        corners = a[:, 0::step, 0::step]
        sq = corners + np.roll(corners, -1, axis=1)
        sq = sq + np.roll(sq, -1, axis=2)
        a[:, half::step, half::step] = sq / 4 + wibble * rng.uniform(-wibble, wibble, sq.shape)
        centre, corners = a[:, half::step, half::step], a[:, 0::step, 0::step]
        top = centre + np.roll(centre, 1, axis=1) + corners + np.roll(corners, -1, axis=2)
        a[:, 0::step, half::step] = top / 4 + wibble * rng.uniform(-wibble, wibble, top.shape)
        left = centre + np.roll(centre, 1, axis=2) + corners + np.roll(corners, -1, axis=1)
        a[:, half::step, 0::step] = left / 4 + wibble * rng.uniform(-wibble, wibble, left.shape)
        step //= 2
        wibble /= wibbledecay
    a -= a.min(axis=(1, 2), keepdims=True)
    return a / np.maximum(a.max(axis=(1, 2), keepdims=True), 1e-300)


def luma(x: np.ndarray) -> np.ndarray:
    """``cv2.cvtColor(x, cv2.COLOR_RGB2GRAY)`` keeping a channel axis (0.299 R + 0.587 G + 0.114 B)."""
    return x if x.shape[-1] == 1 else (x @ np.array([0.299, 0.587, 0.114]))[..., None]
