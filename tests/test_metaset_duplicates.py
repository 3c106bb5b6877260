"""Meta-sets without duplicate sets (issue: 6 of 39 held-out digits sets copied fit sets): the colour-only filter,
the set distance on a hand-computed case, and no two (near-)identical sets in any meta-set of notebook 05."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.data.corruptions import CIFAR10C_NAMES, list_corruptions
from helpers.data.metaset import (
    COLOUR_ONLY,
    ShiftSpec,
    apply_image_shift,
    apply_text_shift,
    distinct_sets,
    duplicate_sets,
    image_metaset,
    set_difference,
    without_colour_only,
)
from helpers.errors import InputValidationError


def test_set_difference_hand_computed():
    a = np.zeros((2, 2, 2), dtype=np.uint8)
    b = a.copy()
    b[0, 0, 0] = 255  # one of 8 pixels moves by the whole range: 1/8
    assert set_difference(a, b) == pytest.approx(1 / 8)
    assert set_difference(a, a) == 0.0
    assert set_difference(["a b", "c", "d", "e"], ["a b", "x", "d", "e"]) == pytest.approx(0.25)
    with pytest.raises(InputValidationError, match="b: expected images of shape"):
        set_difference(a, b[:1])
    with pytest.raises(InputValidationError, match="b: expected 2 texts"):
        set_difference(["a", "b"], ["a"])


def test_colour_only_corruptions_are_the_identity_on_grayscale_and_no_other_is():
    rng = np.random.default_rng(0)
    gray = rng.uniform(0, 16, (4, 8, 8))
    clean = ShiftSpec("clean", "fit", "clean", (), 0)
    for name in list_corruptions():
        spec = ShiftSpec(f"{name}-3", "fit", "corruption", ((name, 3),), 1)
        same = set_difference(apply_image_shift(gray, clean, value_range=(0, 16)),
                              apply_image_shift(gray, spec, value_range=(0, 16)), value_range=(0, 16)) == 0.0  # fmt: skip
        assert same == (name in COLOUR_ONLY), name
    specs = [clean, ShiftSpec("saturate-2", "fit", "corruption", (("saturate", 2),), 3),
             ShiftSpec("comp", "fit", "composition", (("fog", 1), ("saturate", 4)), 4)]  # fmt: skip
    assert [s.name for s in without_colour_only(specs)] == ["clean"]


def test_duplicate_sets_keeps_the_earlier_set():
    x = np.arange(32, dtype=np.float64).reshape(2, 4, 4) / 2
    specs = [ShiftSpec(n, "fit", "corruption", (), i) for i, n in enumerate(["a", "b", "c"])]
    shifted = {"a": x, "b": x + 1e-4, "c": x + 3.0}  # b is a near-copy of a (1e-4 / 16 of the range)
    assert duplicate_sets(specs, lambda s: shifted[s.name], value_range=(0, 16)) == {"b": "a"}
    kept = distinct_sets(specs, lambda s: shifted[s.name], value_range=(0, 16))
    assert [s.name for s in kept] == ["a", "c"]


def test_the_old_digits_metaset_had_copies_and_notebook_05s_has_none(monkeypatch):
    from conftest import shared_data_dir

    from helpers.data import load
    from helpers.experiments.p5_mde.setups import _digit_specs, notebook_parameters

    if shared_data_dir() is None:
        pytest.skip("USPS data not available")
    monkeypatch.setenv("HELPERS_DATA", str(shared_data_dir()))
    p = notebook_parameters("default", digits_severities=[1, 4], digits_n_compositions=2)
    old = image_metaset(fit_names=p.cifar_fit_names, heldout_names=p.cifar_heldout_names,
                        severities=p.digits_severities, n_compositions=2, n_heldout_compositions=1, seed=0)  # fmt: skip
    digits = load("digits").x[:200]

    def on(x):
        return lambda s: apply_image_shift(x, s, value_range=(0, 16))

    copies = duplicate_sets(old, on(digits), value_range=(0, 16))
    assert copies == {"gaussian_blur-1": "defocus_blur-1", "saturate-1": "clean", "saturate-4": "clean"}
    new = _digit_specs(p)
    assert {s.name for s in old} - {s.name for s in new} == set(copies)
    assert {s.seed for s in new} <= {s.seed for s in old}  # the kept sets keep their seeds
    from helpers.data import usps_to_digits

    usps = usps_to_digits(load("usps", part="test").x[:200], method="histogram")
    for x in (digits, usps):  # both directions of notebook 05 read this meta-set
        assert duplicate_sets(new, on(x), value_range=(0, 16)) == {}


def test_cifar_and_text_metasets_have_no_copies():
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (12, 32, 32, 3), dtype=np.uint8)
    specs = image_metaset(fit_names=CIFAR10C_NAMES[:10], heldout_names=CIFAR10C_NAMES[10:], severities=[1, 5],
                          seed=0)  # fmt: skip
    assert duplicate_sets(specs, lambda s: apply_image_shift(images, s)) == {}
    from helpers.data.metaset import text_metaset
    from helpers.experiments.p5_mde.setups import notebook_parameters

    p = notebook_parameters("default")
    texts = [f"the film number {i} was not good at all , but the actors tried hard and it ends well" for i in range(30)]
    specs = text_metaset(fit_names=p.text_fit_names, heldout_names=p.text_heldout_names,
                         severities=p.text_severities, seed=0)  # fmt: skip
    assert duplicate_sets(specs, lambda s: apply_text_shift(texts, s)) == {}
