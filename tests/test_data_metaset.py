"""Meta-set specs and stress transforms (paper 5 Algorithm 1 and Sec. 4.5): determinism, splits, invariants."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.data.corruptions import corrupt
from helpers.data.metaset import (
    STRESS_TRANSFORMS,
    ShiftSpec,
    apply_image_shift,
    apply_text_shift,
    color_temperature,
    cutout,
    equalize,
    image_metaset,
    imbalance_subsets,
    shear,
    specs_frame,
    text_metaset,
)
from helpers.errors import InputValidationError

RNG = np.random.default_rng(0)
CIFAR = RNG.integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
DIGITS = RNG.integers(0, 17, (5, 8, 8)).astype(np.float64)


def _specs(**kw):
    base = dict(fit_names=["fog", "contrast", "pixelate"], heldout_names=["zoom_blur", "saturate"], seed=3)
    return image_metaset(**{**base, **kw})


def test_image_metaset_counts_and_splits():
    specs = _specs(
        severities=[1, 3],
        heldout_severities=[2],
        n_compositions=4,
        n_heldout_compositions=2,
        stress_names=["cutout", "shear"],
        stress_bases=["clean", "zoom_blur-2"],
        stress_levels=[1, 2],
    )
    frame = specs_frame(specs)
    counts = frame.groupby(["split", "family"]).size().to_dict()
    assert counts == {
        ("fit", "clean"): 1,
        ("fit", "corruption"): 6,
        ("fit", "composition"): 4,
        ("heldout", "corruption"): 2,
        ("heldout", "composition"): 2,
        ("unseen", "stress"): 8,
    }
    assert len({s.name for s in specs}) == len(specs)
    fit_types = {n for s in specs if s.split == "fit" for n, _ in s.steps}
    held_types = {n for s in specs if s.split == "heldout" for n, _ in s.steps}
    assert fit_types <= {"fog", "contrast", "pixelate"} and held_types <= {"zoom_blur", "saturate"}
    stress = [s for s in specs if s.family == "stress"]
    assert any(
        s.name == "stress-shear-A@zoom_blur-2" and s.steps == (("zoom_blur", 2), ("shear", 1)) for s in stress
    )


def test_image_metaset_is_deterministic_and_seeded():
    a, b = _specs(n_compositions=3), _specs(n_compositions=3)
    assert a == b
    assert a != _specs(n_compositions=3, seed=4)


def test_apply_image_shift_matches_corruption_module_and_keeps_dtype():
    spec = ShiftSpec("fog-3", "fit", "corruption", (("fog", 3),), 11)
    out = apply_image_shift(CIFAR, spec)
    assert out.dtype == np.uint8 and out.shape == CIFAR.shape
    child = int(np.random.SeedSequence(11).spawn(1)[0].generate_state(1)[0])
    np.testing.assert_array_equal(out, corrupt(CIFAR, "fog", 3, seed=child))
    np.testing.assert_array_equal(out, apply_image_shift(CIFAR, spec))
    clean = ShiftSpec("clean", "fit", "clean", (), 0)
    np.testing.assert_array_equal(apply_image_shift(CIFAR, clean), CIFAR)


def test_apply_image_shift_stress_on_digits_range():
    spec = ShiftSpec("s", "unseen", "stress", (("contrast", 2), ("cutout", 2)), 5)
    out = apply_image_shift(DIGITS, spec, value_range=(0, 16))
    assert out.shape == DIGITS.shape and out.min() >= 0 and out.max() <= 16
    assert not np.array_equal(out, DIGITS)


def test_cutout_hand_computed():
    x = np.zeros((1, 8, 8, 1))
    out = cutout(x, 0.375, np.random.default_rng(0))  # side 3 -> a 3x3 square (half-width 1) at most
    assert set(np.unique(out)) <= {0.0, 0.5}
    assert 1 <= (out == 0.5).sum() <= 9


def test_shear_zero_is_identity_and_equalize_zero_is_identity():
    x = np.random.default_rng(1).random((3, 8, 8, 3))
    np.testing.assert_array_equal(shear(x, 0.0, np.random.default_rng(0)), x)
    np.testing.assert_allclose(equalize(x, 0.0, np.random.default_rng(0)), x)


def test_equalize_gives_uniform_ranks():
    x = np.random.default_rng(2).random((2, 4, 4, 1)) ** 3
    eq = equalize(x, 1.0, np.random.default_rng(0))
    np.testing.assert_allclose(np.sort(eq[0].ravel()), (np.arange(16) + 0.5) / 16)


def test_color_temperature_scales_red_and_blue_oppositely():
    x = np.full((4, 2, 2, 3), 0.5)
    out = color_temperature(x, 0.2, np.random.default_rng(0))
    np.testing.assert_allclose(out[..., 1], 0.5)
    np.testing.assert_allclose(out[..., 0] + out[..., 2], 1.0)
    assert set(np.round(out[:, 0, 0, 0], 6)) <= {0.6, 0.4}


def test_text_metaset_and_apply():
    specs = text_metaset(
        fit_names=["word_dropout", "char_typos"],
        heldout_names=["truncate"],
        severities=[2],
        n_compositions=2,
        n_heldout_compositions=0,
        seed=1,
    )
    assert [s.split for s in specs] == ["fit", "fit", "fit", "heldout", "fit", "fit"]
    texts = ["a fine film with a good cast", "dull"]
    for s in specs:
        assert apply_text_shift(texts, s) == apply_text_shift(texts, s)


def test_imbalance_subsets_ratios():
    y = np.repeat(np.arange(10), 50)
    subs = imbalance_subsets(y, [0.1, 1.0], seed=0)
    counts = np.bincount(y[subs[0.1]], minlength=10)
    assert counts.max() == 50 and counts.min() == 5
    assert (np.bincount(y[subs[1.0]]) == 50).all()
    assert np.array_equal(imbalance_subsets(y, [0.1], seed=0)[0.1], subs[0.1])


def test_bad_input():
    with pytest.raises(InputValidationError):
        image_metaset(fit_names=["fog"], heldout_names=["fog"])
    with pytest.raises(InputValidationError):
        image_metaset(fit_names=["not_a_corruption"])
    with pytest.raises(InputValidationError):
        image_metaset(fit_names=["fog"], severities=[0])
    with pytest.raises(InputValidationError):
        image_metaset(fit_names=["fog"], stress_names=["cutout"], stress_bases=["missing-1"])
    with pytest.raises(InputValidationError):
        image_metaset(fit_names=["fog"], n_compositions=1)  # 2-step compositions need 2 types
    with pytest.raises(InputValidationError):
        image_metaset(fit_names=["fog"], stress_names=["cutout"], stress_bases=["clean"], stress_levels=[3])
    with pytest.raises(InputValidationError):
        text_metaset(fit_names=[])
    with pytest.raises(InputValidationError):
        apply_image_shift(np.zeros((0, 8, 8)), ShiftSpec("c", "fit", "clean", (), 0))
    assert set(STRESS_TRANSFORMS) == {"cutout", "shear", "equalize", "color_temperature"}
