"""Image corruptions: determinism, dtype/range/shape, severity ordering, errors, composition, imbalance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from helpers.data import load
from helpers.data.corruptions import (
    CIFAR10C_NAMES,
    compose,
    corrupt,
    imbalance_resample,
    infer_value_range,
    list_corruptions,
    random_composition,
    register_corruption,
)
from helpers.errors import InputValidationError, UnknownNameError

NAMES = list_corruptions()
NOT_ORDERED = {"saturate"}  # CIFAR-10-C's saturate desaturates at 1-2 and oversaturates at 3-5
# make_cifar_c.py's own tables are not ordered by pixel distance for these (e.g. frost blends (1, .2), (1, .3),
# (.9, .4), (.85, .4), (.75, .45); glass blur's sigmas .05, .25, .4, .25, .4; elastic's affine part shrinks with
# severity; motion blur (6, 2) vs (8, 2) differ in negligible kernel tails; spatter switches liquid -> mud at 4)
RECIPE_NOT_ORDERED = NOT_ORDERED | {"elastic_transform", "frost", "glass_blur", "motion_blur", "spatter"}


@pytest.fixture(scope="module")
def digits():
    return load("digits").x[:60]


@pytest.fixture(scope="module")
def cifar_like():
    """Smooth random colour images (natural-image-like spectrum), uint8 32x32x3."""
    rng = np.random.default_rng(0)
    x = ndimage.gaussian_filter(rng.random((24, 32, 32, 3)), sigma=(0, 2, 2, 0))
    x = (x - x.min()) / (x.max() - x.min())
    return np.rint(x * 255).astype(np.uint8)


def test_registry_has_cifar10c_and_more():
    assert set(CIFAR10C_NAMES) <= set(NAMES)
    assert {"rotate", "affine"} <= set(NAMES)
    assert len(NAMES) >= 19


@pytest.mark.parametrize("name", NAMES)
def test_digits_dtype_range_determinism(name, digits):
    a = corrupt(digits, name, 3, seed=7)
    b = corrupt(digits, name, 3, seed=7)
    assert a.dtype == digits.dtype and a.shape == digits.shape
    assert a.min() >= 0 and a.max() <= 16
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_cifar_dtype_range_determinism(name, cifar_like):
    a = corrupt(cifar_like, name, 5, 3)
    assert a.dtype == np.uint8 and a.shape == cifar_like.shape
    np.testing.assert_array_equal(a, corrupt(cifar_like, name, 5, 3))


@pytest.mark.parametrize("name", NAMES)
def test_usps_range_grayscale_nhw(name):
    x = np.random.default_rng(1).uniform(-1, 1, (5, 16, 16)).astype(np.float32)
    y = corrupt(x, name, 2, seed=0)
    assert y.dtype == np.float32 and y.shape == x.shape and y.min() >= -1 and y.max() <= 1


@pytest.mark.parametrize(
    "name", ["gaussian_noise", "shot_noise", "impulse_noise", "rotate", "fog", "glass_blur"]
)
def test_seed_changes_random_corruptions(name, cifar_like):
    assert not np.array_equal(corrupt(cifar_like, name, 3, seed=0), corrupt(cifar_like, name, 3, seed=1))


def _dist(x, y, scale):
    return float(np.abs(x.astype(np.float64) - y.astype(np.float64)).mean() / scale)


@pytest.mark.parametrize("name", sorted(set(NAMES) - NOT_ORDERED))
def test_severity_increases_distance(name, digits, cifar_like):
    cases = [(digits, 16.0)] + ([(cifar_like, 255.0)] if name not in RECIPE_NOT_ORDERED else [])
    for imgs, scale in cases:
        d = [_dist(corrupt(imgs, name, s, seed=0), imgs, scale) for s in range(1, 6)]
        assert all(b > a for a, b in zip(d, d[1:])), (name, np.round(d, 4))
        assert d[0] > 0


def test_saturate_is_identity_on_grayscale(digits):
    np.testing.assert_array_equal(corrupt(digits, "saturate", 5), digits)


def test_errors(digits):
    with pytest.raises(UnknownNameError, match="gaussian_noise"):
        corrupt(digits, "fisheye", 1)
    for bad in (0, 6, 2.5, True, "3"):
        with pytest.raises(InputValidationError, match="severity"):
            corrupt(digits, "contrast", bad)
    with pytest.raises(InputValidationError):
        corrupt(digits[0], "contrast", 1)  # a single 2-D image is not a batch
    with pytest.raises(InputValidationError):
        corrupt(np.full((2, 8, 8), 300.0), "contrast", 1)  # range cannot be inferred
    with pytest.raises(InputValidationError):
        corrupt(np.full((2, 8, 8), np.nan), "contrast", 1)


def test_aliases_and_value_range(digits):
    np.testing.assert_array_equal(corrupt(digits, "jpeg", 2), corrupt(digits, "jpeg_compression", 2))
    assert infer_value_range(digits) == (0.0, 16.0)
    x = np.full((2, 8, 8), 0.5)
    y = corrupt(x, "brightness", 5, value_range=(0, 16))
    np.testing.assert_allclose(y, 0.5 + 0.3 * 16)


def test_brightness_keeps_hue():
    x = np.array([[[[200, 100, 50]]]], dtype=np.uint8)
    y = corrupt(x, "brightness", 1).astype(float)[0, 0, 0]
    assert y[0] > 200 and abs(y[1] / y[0] - 0.5) < 0.02 and abs(y[2] / y[0] - 0.25) < 0.02


def test_compose_and_random_composition(cifar_like):
    steps = [("fog", 2), ("gaussian_noise", 3)]
    a = compose(cifar_like, steps, seed=5)
    np.testing.assert_array_equal(a, compose(cifar_like, steps, seed=5))
    assert a.dtype == np.uint8
    y, applied = random_composition(cifar_like, n_ops=3, seed=2)
    y2, applied2 = random_composition(cifar_like, n_ops=3, seed=2)
    assert applied == applied2 and len({n for n, _ in applied}) == 3
    np.testing.assert_array_equal(y, y2)
    with pytest.raises(InputValidationError):
        random_composition(cifar_like, n_ops=0)


def test_register_new_corruption(digits):
    @register_corruption("test_invert_mix", params=(0.1, 0.2, 0.3, 0.4, 0.5))
    def _invert(x, p, rng):
        return (1 - p) * x + p * (1 - x)

    assert "test_invert_mix" in list_corruptions()
    y = corrupt(digits, "test_invert_mix", 5)
    np.testing.assert_allclose(y, 0.5 * digits + 0.5 * (16 - digits))


def test_imbalance_resample():
    y = np.repeat(np.arange(10), 100)
    idx = imbalance_resample(y, 0.1, seed=0)
    counts = np.bincount(y[idx], minlength=10)
    assert counts[0] == 100 and counts[-1] == 10
    assert all(a >= b for a, b in zip(counts, counts[1:]))
    np.testing.assert_array_equal(idx, imbalance_resample(y, 0.1, seed=0))
    assert not np.array_equal(idx, imbalance_resample(y, 0.1, seed=1))
    assert np.all(np.diff(idx) > 0)
    bal = np.bincount(y[imbalance_resample(y[:950], 1.0, seed=0)])
    assert set(bal) == {50}
    order = imbalance_resample(y, 0.2, seed=0, class_order=list(range(9, -1, -1)))
    assert np.bincount(y[order])[9] == 100 and np.bincount(y[order])[0] == 20
    for bad in (0.0, 1.5, -1):
        with pytest.raises(InputValidationError):
            imbalance_resample(y, bad)
    with pytest.raises(InputValidationError):
        imbalance_resample(y.astype(float), 0.5)
