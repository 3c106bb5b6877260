"""CIFAR-10-C recipe (make_cifar_c.py): one property per corruption type that the recipe fixes, plus the
library calls it borrows (OpenCV / ImageMagick / PIL / scipy stand-ins) on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from helpers.data.corruptions import CORRUPTIONS, corrupt
from helpers.data.corruptions.cifar10c import cv_disk, frost_layers
from helpers.data.corruptions.recipe_ops import (
    clipped_zoom,
    cv_canny,
    cv_equalize_hist,
    magick_motion_blur,
    plasma_fractal,
)

UNIT = (0.0, 1.0)


def _const(v: float, n: int = 4, c: int = 3) -> np.ndarray:
    return np.full((n, 32, 32, c), v)


def test_recipe_parameters_are_make_cifar_c_tables():
    spec = CORRUPTIONS.get("saturate")
    assert spec.params[2] == (1.5, 0.0) and spec.params[4] == (2.5, 0.2)
    assert CORRUPTIONS.get("motion_blur").params == ((6, 1.0), (6, 1.5), (6, 2.0), (8, 2.0), (9, 2.5))
    # np.arange(1, 1.06, 0.01) has 7 values (1.06 included by rounding), as the recipe ran
    assert [len(z) for z in CORRUPTIONS.get("zoom_blur").params] == [7, 12, 16, 21, 26]
    assert CORRUPTIONS.get("elastic_transform").params[1] == pytest.approx((1.6, 6.4, 2.24))
    small = CORRUPTIONS.get("fog")
    assert small.small_fn is not None and small.small_fn is not small.fn  # 8x8 digits keep the scaled variant


def test_plasma_fractal_range_and_spectrum():
    rng = np.random.default_rng(0)
    maps = plasma_fractal(rng, 64, 32, 3.0)
    assert maps.shape == (64, 32, 32)
    np.testing.assert_allclose(maps.min(axis=(1, 2)), 0.0)
    np.testing.assert_allclose(maps.max(axis=(1, 2)), 1.0)
    power = (np.abs(np.fft.fft2(maps - maps.mean(axis=(1, 2), keepdims=True))) ** 2).mean(0)
    f = np.sqrt(np.fft.fftfreq(32)[:, None] ** 2 + np.fft.fftfreq(32)[None, :] ** 2)
    low, high = power[(f > 0) & (f < 0.1)].mean(), power[f > 0.35].mean()
    assert low > 100 * high  # a fractal: energy at low frequencies
    rough = plasma_fractal(np.random.default_rng(0), 64, 32, 1.75)
    hf = [(np.abs(np.diff(m, axis=2))).mean() for m in (maps, rough)]
    assert hf[1] > hf[0]  # slower wibble decay (severity 5) = rougher fog
    with pytest.raises(ValueError, match="power of two"):
        plasma_fractal(rng, 1, 24, 3.0)


def test_fog_adds_a_plasma_map_and_rescales():
    c, (a, _) = 0.5, CORRUPTIONS.get("fog").params[2]
    out = corrupt(_const(c), "fog", 3, seed=1, value_range=UNIT)
    plasma = (out * (c + a) / c - c) / a  # invert (c + a * P) * c / (c + a)
    np.testing.assert_allclose(plasma.min(axis=(1, 2, 3)), 0.0, atol=1e-9)
    np.testing.assert_allclose(plasma.max(axis=(1, 2, 3)), 1.0, atol=1e-9)
    np.testing.assert_allclose(plasma[..., 0], plasma[..., 2])  # one grey map for all channels


def test_frost_blends_a_crop_of_photographs_one_to_five():
    layers = frost_layers()
    assert len(layers) == 5 and layers[0].shape == (120, 180, 3)  # frost1 600x900 shrunk 5x
    out = corrupt(np.zeros((6, 32, 32, 3)), "frost", 5, seed=3, value_range=UNIT)
    crops = out / CORRUPTIONS.get("frost").params[4][1]
    for crop in crops:
        hits = []
        for lay in layers:
            win = np.lib.stride_tricks.sliding_window_view(lay, (32, 32, 3))[..., 0, :, :, :]
            hits.append(np.isclose(win, crop, atol=1e-9).all(axis=(-3, -2, -1)).any())
        assert any(hits)
    x = np.full((2, 32, 32, 3), 0.5)
    y = corrupt(x, "frost", 1, seed=0, value_range=UNIT)
    assert (y >= 0.5 - 1e-12).all()  # severity 1: the image at full weight plus 0.2 of the frost


def test_snow_layer_is_added_twice_rotated():
    out = corrupt(np.zeros((5, 32, 32, 3)), "snow", 4, seed=2, value_range=UNIT)
    whitened = 0.15 * 0.5  # (1 - keep) * max(0, 1.5 * 0 + .5) on a black image
    layer = out - whitened
    np.testing.assert_allclose(layer, layer[:, ::-1, ::-1], atol=1e-12)  # x + S + rot180(S)
    assert (out >= whitened - 1e-12).all() and (layer > 0.05).mean() > 0.02


def test_spatter_liquid_is_turquoise_and_mud_is_brown():
    x = np.full((8, 32, 32, 3), 0.2)
    liquid = corrupt(x, "spatter", 3, seed=0, value_range=UNIT) - x
    assert (liquid >= -1e-12).all() and liquid.max() > 0.05
    hit = liquid[..., 1] > 1e-6
    np.testing.assert_allclose(liquid[..., 1][hit], liquid[..., 2][hit])
    np.testing.assert_allclose(liquid[..., 0][hit] / liquid[..., 1][hit], 175 / 238)
    white = np.ones((8, 32, 32, 3))
    mud = corrupt(white, "spatter", 5, seed=0, value_range=UNIT)
    m = (1 - mud[..., 0]) / (1 - 63 / 255)  # x (1 - m) + brown m with x = 1
    assert ((m < 1e-9) | ((m > 0.8 - 1e-9) & (m < 1 + 1e-9))).all() and (m > 0.5).any()


def test_glass_blur_copies_up_left_neighbours():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (3, 32, 32, 1)).astype(np.uint8)
    y = corrupt(x, "glass_blur", 1, seed=0).astype(int)[..., 0]  # sigma .05: the blurs do nothing
    src = x.astype(int)[..., 0]
    cands = [np.roll(np.roll(src, dr, 1), dc, 2) for dr in (0, 1) for dc in (0, 1)]  # (h-1|h, w-1|w)
    ok = np.zeros_like(y, dtype=bool)
    for cand in cands:
        ok |= np.abs(cand - y) <= 1
    assert ok[:, 2:, 2:].all()
    assert (y != src).mean() > 0.3


def test_motion_blur_kernel_is_imagemagicks():
    x = np.zeros((1, 32, 32, 1))
    x[0, 16, 20, 0] = 1.0
    out = magick_motion_blur(x, 6, 2.0, np.array([0.0]))[0, :, :, 0]
    k = np.exp(-(np.arange(13) ** 2) / 8.0)
    k /= k.sum()
    row = out[16, 20 - 12 : 21][::-1]  # tap i reads the pixel i columns to the right
    np.testing.assert_allclose(row, k)
    assert out.sum() == pytest.approx(1.0) and np.count_nonzero(out) == 13


def test_zoom_blur_clipped_zoom_rounding():
    x = np.random.default_rng(0).random((2, 32, 32, 3))
    np.testing.assert_allclose(clipped_zoom(x, 1.01), x)  # round(32 * 1.01) = 32: no zoom at all
    z = clipped_zoom(x, 1.25)
    assert z.shape == x.shape
    np.testing.assert_allclose(z[:, 0, 0], x[:, 3, 3])  # crop ceil(32/1.25) = 26 from 3, corner kept
    expected = (2 * x + sum(clipped_zoom(x, 1 + i / 100) for i in range(1, 7))) / 8  # zooms 1.00 .. 1.06
    np.testing.assert_allclose(corrupt(x, "zoom_blur", 1, value_range=UNIT), np.clip(expected, 0, 1))


def test_elastic_severity_one_is_a_pure_affine_warp():
    ramp = np.broadcast_to(np.linspace(0.2, 0.8, 32)[None, None, :, None], (3, 32, 32, 1)).copy()
    y = corrupt(ramp, "elastic_transform", 1, seed=4, value_range=UNIT)[:, 4:-4, 4:-4, 0]
    # an affine image of an affine ramp is affine: second differences vanish away from the mirrored borders
    assert np.abs(np.diff(y, 2, axis=1)).max() < 1e-9 and np.abs(np.diff(y, 2, axis=2)).max() < 1e-9
    assert np.abs(y - ramp[:, 4:-4, 4:-4, 0]).max() > 1e-3


def test_defocus_disk_small_radius_is_a_3x3_gaussian():
    k = cv_disk(0.3, 0.4)
    g = np.exp(-np.array([1.0, 0.0, 1.0]) / (2 * 0.4**2))
    g /= g.sum()
    np.testing.assert_allclose(k, np.outer(g, g))
    big = cv_disk(1.5, 0.1)  # |x|, |y| <= 1 lie in the disk (2 <= 2.25); sigma .1 leaves it nearly box-shaped
    assert big.sum() == pytest.approx(1.0)
    c = big.shape[0] // 2
    np.testing.assert_allclose(big[c - 1 : c + 2, c - 1 : c + 2], 1 / 9, rtol=1e-9)


def test_pixelate_matches_pil_box():
    rng = np.random.default_rng(0)
    img = rng.random((32, 32)).astype(np.float32)
    pil = Image.fromarray(img, mode="F").resize((27, 27), Image.BOX).resize((32, 32), Image.BOX)
    ours = corrupt(img[None, ..., None].astype(np.float64), "pixelate", 3, value_range=UNIT)[0, ..., 0]
    np.testing.assert_allclose(ours, np.asarray(pil), atol=1e-5)


def test_equalize_hist_and_canny_hand_cases():
    img = np.array([[[10, 10, 20, 30]]], dtype=np.uint8)  # counts 2, 1, 1 -> cdf 2, 3, 4; h0 = 2, N = 4
    np.testing.assert_array_equal(cv_equalize_hist(img), [[[0, 0, 128, 255]]])
    np.testing.assert_array_equal(cv_equalize_hist(np.full((1, 2, 2), 7, np.uint8)), np.full((1, 2, 2), 7))
    step = np.zeros((1, 16, 16), dtype=np.uint8)
    step[:, :, 8:] = 200
    edges = cv_canny(step, 50, 150)
    cols = np.flatnonzero(edges[0].any(axis=0))
    assert set(cols) <= {7, 8} and edges[0, :, cols[0]].all()
    assert not cv_canny(np.full((1, 16, 16), 90, np.uint8), 50, 150).any()


@pytest.mark.parametrize("name", sorted(CORRUPTIONS.names()))
def test_usps_sized_grayscale_uses_the_recipe(name):
    x = np.random.default_rng(1).uniform(0, 1, (3, 16, 16))
    y = corrupt(x, name, 3, seed=0, value_range=UNIT)
    assert y.shape == x.shape and np.isfinite(y).all()
