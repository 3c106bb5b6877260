"""Deterministic meta-sets of shifted sets for meta-set regression (paper 5, Algorithm 1 and Sec. 4.1/4.5).

A *meta-set* is a list of :class:`ShiftSpec` — one per synthetic set — each naming the transformation steps and
the seed that make it, and the split it belongs to:

* ``fit``: the sets the regression line is fitted on (CIFAR-10-C-style corruptions of ``fit_names`` at every
  severity, plus random compositions of two of them, as in the Meta-set recipe of Deng & Zheng 2021);
* ``heldout``: synthetic sets the line never saw — corruption *types* held out of the meta-set, and compositions
  of those held-out types — on which R², Pearson r and Spearman ρ are reported out of sample;
* ``unseen``: stress tests — held-out sets re-transformed by new transformations that appear nowhere in the
  meta-set (paper 5 Sec. 4.5 "Strongly noisy": Cutout, Shear, Equalize, Color Temperature on top of an already
  shifted set); MAE only.

:func:`apply_image_shift` turns a spec into images (the corruptions come from :mod:`helpers.data.corruptions`, the
stress transformations from :data:`STRESS_TRANSFORMS` here); :func:`text_metaset` / :func:`apply_text_shift` do the
same for text with :mod:`helpers.data.text_perturb`.  Class-imbalance stress sets (Sec. 4.5 "Class imbalance") are
index subsets, see :func:`imbalance_subsets`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from helpers.data.corruptions import corrupt, imbalance_resample, infer_value_range, list_corruptions
from helpers.data.text_perturb import compose_text, list_text_perturbations
from helpers.errors import InputValidationError

__all__ = [
    "ShiftSpec",
    "STRESS_TRANSFORMS",
    "STRESS_LEVELS",
    "cutout",
    "shear",
    "equalize",
    "color_temperature",
    "image_metaset",
    "text_metaset",
    "apply_image_shift",
    "apply_text_shift",
    "imbalance_subsets",
    "specs_frame",
    "COLOUR_ONLY",
    "without_colour_only",
    "set_difference",
    "duplicate_sets",
    "distinct_sets",
]

SPLITS = ("fit", "heldout", "unseen")

#: corruptions that act on colour only, so they are the identity on single-channel (grayscale) images
COLOUR_ONLY = ("saturate",)

#: two sets whose inputs differ by at most this (mean |a - b| over the value range, or share of differing texts)
#: are the same set (:func:`duplicate_sets`)
NEAR_IDENTICAL = 1e-3


@dataclass(frozen=True)
class ShiftSpec:
    """One synthetic set of a meta-set.

    Attributes
    ----------
    name : str
        Unique, readable id (``"fog-3"``, ``"comp-fit-02"``, ``"stress-cutout-B@zoom_blur-3"``, ``"clean"``).
    split : {"fit", "heldout", "unseen"}
    family : str
        ``"clean"``, ``"corruption"``, ``"composition"`` or ``"stress"``.
    steps : tuple of (name, severity)
        Transformations in order; severity 1..5 for corruptions/perturbations, 1 (A) or 2 (B) for stress ones.
    seed : int
        Seed of the randomness of the steps (noise draws, typo positions, ...).
    """

    name: str
    split: str
    family: str
    steps: tuple[tuple[str, int], ...]
    seed: int

    def key(self) -> dict:
        """JSON-like cache key parts of this set (steps and seed, not the name)."""
        return {"steps": [list(s) for s in self.steps], "seed": int(self.seed)}


# ------------------------------------------------------------------------------ stress transformations (Sec. 4.5)


def cutout(x: np.ndarray, size: float, rng: np.random.Generator) -> np.ndarray:
    """Cutout (DeVries & Taylor 2017): fill one random square of side ``size * H`` per image with mid-grey."""
    n, h, w, _ = x.shape
    side = max(1, int(round(size * h)))
    out = x.copy()
    cy, cx = rng.integers(0, h, n), rng.integers(0, w, n)
    rows, cols = np.arange(h)[None, :], np.arange(w)[None, :]
    in_r = np.abs(rows - cy[:, None]) <= side // 2
    in_c = np.abs(cols - cx[:, None]) <= side // 2
    mask = in_r[:, :, None] & in_c[:, None, :]
    out[mask] = 0.5
    return out


def shear(x: np.ndarray, s: float, rng: np.random.Generator) -> np.ndarray:
    """Horizontal shear by ``±s`` (random sign per image, nearest neighbour, mid-grey outside the image)."""
    n, h, w, _ = x.shape
    sign = rng.choice([-1.0, 1.0], n)
    rows = np.arange(h)[None, :, None]
    cols = np.arange(w)[None, None, :]
    src = np.rint(cols + sign[:, None, None] * s * (rows - (h - 1) / 2)).astype(int)
    valid = (src >= 0) & (src < w)
    src = np.clip(src, 0, w - 1)
    idx = np.arange(n)[:, None, None]
    out = x[idx, np.broadcast_to(rows, src.shape), src]
    out[~valid] = 0.5
    return out


def equalize(x: np.ndarray, strength: float, rng: np.random.Generator) -> np.ndarray:
    """Histogram equalisation per image and channel, blended: ``(1 − a)·x + a·eq(x)`` with ``a = strength``."""
    n, h, w, c = x.shape
    flat = x.transpose(0, 3, 1, 2).reshape(n * c, h * w)
    ranks = np.argsort(np.argsort(flat, axis=1, kind="stable"), axis=1)
    eq = ((ranks + 0.5) / (h * w)).reshape(n, c, h, w).transpose(0, 2, 3, 1)
    return (1.0 - strength) * x + strength * eq


def color_temperature(x: np.ndarray, t: float, rng: np.random.Generator) -> np.ndarray:
    """Warm or cool cast (random per image): red ×(1 ± t), blue ×(1 ∓ t); grayscale images are scaled by (1 ± t)."""
    n, c = x.shape[0], x.shape[-1]
    sign = rng.choice([-1.0, 1.0], n)[:, None, None]
    out = x.copy()
    if c >= 3:
        out[..., 0] *= 1.0 + sign * t
        out[..., 2] *= 1.0 - sign * t
    else:
        out *= (1.0 + sign * t)[..., None]
    return out


STRESS_TRANSFORMS = {
    "cutout": cutout,
    "shear": shear,
    "equalize": equalize,
    "color_temperature": color_temperature,
}
STRESS_LEVELS = {  # level 1 = "-A" (milder), level 2 = "-B" (stronger), as the paper's CIFAR-10.1-A/B
    "cutout": (0.3, 0.5),
    "shear": (0.2, 0.4),
    "equalize": (0.5, 1.0),
    "color_temperature": (0.2, 0.4),
}


# ----------------------------------------------------------------------------------------------- meta-set specs


def _check_names(names: Sequence[str], known: Sequence[str], what: str) -> list[str]:
    names = list(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputValidationError(f"{what}: unknown name(s) {unknown}; expected names from {sorted(known)}")
    if len(set(names)) != len(names):
        raise InputValidationError(f"{what}: duplicate names in {names}")
    return names


def _check_severities(severities: Sequence[int]) -> list[int]:
    sev = [int(s) for s in severities]
    if not sev or any(s < 1 or s > 5 for s in sev):
        raise InputValidationError(
            f"severities: expected a non-empty list of integers in 1..5, got {severities}"
        )
    return sev


def _compositions(names, n, n_ops, severities, rng, prefix, split) -> list[ShiftSpec]:
    if n and len(names) < n_ops:
        raise InputValidationError(f"compositions of {n_ops} steps need at least {n_ops} types, got {names}")
    out = []
    for i in range(n):
        chosen = rng.choice(len(names), size=n_ops, replace=False)
        steps = tuple((names[j], int(rng.choice(severities))) for j in chosen)
        out.append(ShiftSpec(f"comp-{prefix}-{i:02d}", split, "composition", steps, int(rng.integers(2**31))))
    return out


def _corruption_specs(fit_names, heldout_names, severities, heldout_severities, rng) -> list[ShiftSpec]:
    specs = []
    for split, names, sevs in (
        ("fit", fit_names, severities),
        ("heldout", heldout_names, heldout_severities),
    ):
        for name in names:
            for s in sevs:
                specs.append(
                    ShiftSpec(f"{name}-{s}", split, "corruption", ((name, s),), int(rng.integers(2**31)))
                )
    return specs


def image_metaset(
    *,
    fit_names: Sequence[str],
    heldout_names: Sequence[str] = (),
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    heldout_severities: Sequence[int] | None = None,
    n_compositions: int = 0,
    n_heldout_compositions: int = 0,
    composition_ops: int = 2,
    stress_names: Sequence[str] = (),
    stress_bases: Sequence[str] = (),
    stress_levels: Sequence[int] = (2,),
    include_clean: bool = True,
    seed: int = 0,
) -> list[ShiftSpec]:
    """The list of image sets of a meta-set experiment, deterministic given ``seed``.

    Parameters
    ----------
    fit_names : list of str
        Corruption types of the meta-set (names from :func:`helpers.data.corruptions.list_corruptions`).
    heldout_names : list of str
        Corruption types kept out of the meta-set (``heldout`` split); must not overlap ``fit_names``.
    severities, heldout_severities : list of int
        Severities (1..5) of the fit and held-out corruption sets (``heldout_severities`` defaults to
        ``severities``).
    n_compositions, n_heldout_compositions : int
        Random compositions of ``composition_ops`` distinct fit (resp. held-out) types at random severities.
    stress_names : list of str
        Stress transformations from :data:`STRESS_TRANSFORMS` (``unseen`` split).
    stress_bases : list of str
        Names of already listed sets (e.g. ``"clean"``, ``"zoom_blur-3"``) each stress transformation is applied on.
    stress_levels : list of int
        1 (A, milder) and/or 2 (B, stronger).
    include_clean : bool
        Add the untransformed set (``"clean"``) to the fit split.
    seed : int

    Returns
    -------
    list of ShiftSpec
        Order: clean, fit corruptions, held-out corruptions, fit compositions, held-out compositions, stress.
    """
    known = list_corruptions()
    fit_names = _check_names(fit_names, known, "fit_names")
    heldout_names = _check_names(heldout_names, known, "heldout_names")
    overlap = sorted(set(fit_names) & set(heldout_names))
    if overlap:
        raise InputValidationError(f"heldout_names: must not overlap fit_names, both contain {overlap}")
    if not fit_names:
        raise InputValidationError("fit_names: expected at least one corruption type")
    sev = _check_severities(severities)
    hsev = sev if heldout_severities is None else _check_severities(heldout_severities)
    rng = np.random.default_rng(seed)
    specs = [ShiftSpec("clean", "fit", "clean", (), 0)] if include_clean else []
    specs += _corruption_specs(fit_names, heldout_names, sev, hsev, rng)
    specs += _compositions(fit_names, int(n_compositions), composition_ops, sev, rng, "fit", "fit")
    specs += _compositions(
        heldout_names, int(n_heldout_compositions), composition_ops, hsev, rng, "heldout", "heldout"
    )
    by_name = {s.name: s for s in specs}
    _check_names(stress_names, list(STRESS_TRANSFORMS), "stress_names")
    for base in stress_bases:
        if base not in by_name:
            raise InputValidationError(
                f"stress_bases: {base!r} is not one of the listed sets {sorted(by_name)}"
            )
    for level in stress_levels:
        if level not in (1, 2):
            raise InputValidationError(f"stress_levels: expected 1 (A) or 2 (B), got {level!r}")
    for base in stress_bases:
        for t in stress_names:
            for level in stress_levels:
                steps = by_name[base].steps + ((t, int(level)),)
                name = f"stress-{t}-{'AB'[level - 1]}@{base}"
                specs.append(ShiftSpec(name, "unseen", "stress", steps, int(rng.integers(2**31))))
    return specs


def text_metaset(
    *,
    fit_names: Sequence[str],
    heldout_names: Sequence[str] = (),
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    heldout_severities: Sequence[int] | None = None,
    n_compositions: int = 0,
    n_heldout_compositions: int = 0,
    composition_ops: int = 2,
    include_clean: bool = True,
    seed: int = 0,
) -> list[ShiftSpec]:
    """Like :func:`image_metaset` for the text perturbations of :mod:`helpers.data.text_perturb` (no stress sets)."""
    known = list_text_perturbations()
    fit_names = _check_names(fit_names, known, "fit_names")
    heldout_names = _check_names(heldout_names, known, "heldout_names")
    if set(fit_names) & set(heldout_names):
        raise InputValidationError(
            f"heldout_names: must not overlap fit_names, both contain {sorted(set(fit_names) & set(heldout_names))}"
        )
    if not fit_names:
        raise InputValidationError("fit_names: expected at least one perturbation")
    sev = _check_severities(severities)
    hsev = sev if heldout_severities is None else _check_severities(heldout_severities)
    rng = np.random.default_rng(seed)
    specs = [ShiftSpec("clean", "fit", "clean", (), 0)] if include_clean else []
    specs += _corruption_specs(fit_names, heldout_names, sev, hsev, rng)
    specs += _compositions(fit_names, int(n_compositions), composition_ops, sev, rng, "fit", "fit")
    specs += _compositions(
        heldout_names, int(n_heldout_compositions), composition_ops, hsev, rng, "heldout", "heldout"
    )
    return specs


# -------------------------------------------------------------------------------------------------- application


def apply_image_shift(
    images: np.ndarray, spec: ShiftSpec, *, value_range: tuple[float, float] | None = None
) -> np.ndarray:
    """The images of one set: ``spec.steps`` applied in order, each step with its own child seed of ``spec.seed``.

    Parameters
    ----------
    images : numpy.ndarray
        ``(n, H, W)`` / ``(n, H, W, C)`` images in any value range the corruption module accepts (uint8 CIFAR,
        digits in [0, 16], ...); the result has the same shape, dtype and range.
    spec : ShiftSpec
    value_range : (low, high), optional
        Range of the pixel values; default inferred from the dtype / values.
    """
    x = np.asarray(images)
    if x.ndim not in (3, 4) or x.shape[0] == 0:
        raise InputValidationError(f"images: expected a non-empty (n, H, W[, C]) array, got shape {x.shape}")
    lo, hi = value_range if value_range is not None else infer_value_range(x)
    children = np.random.SeedSequence(spec.seed).spawn(len(spec.steps))
    out = x
    for (name, level), child in zip(spec.steps, children):
        child_seed = int(child.generate_state(1)[0])
        if name in STRESS_TRANSFORMS:
            u = (out.astype(np.float64) - lo) / (hi - lo)
            u4 = u[..., None] if u.ndim == 3 else u
            u4 = np.clip(
                STRESS_TRANSFORMS[name](
                    u4, STRESS_LEVELS[name][level - 1], np.random.default_rng(child_seed)
                ),
                0,
                1,
            )
            back = (u4[..., 0] if u.ndim == 3 else u4) * (hi - lo) + lo
            out = (
                np.rint(back).astype(x.dtype) if np.issubdtype(x.dtype, np.integer) else back.astype(x.dtype)
            )
        else:
            out = corrupt(out, name, level, seed=child_seed, value_range=(lo, hi))
    return out


def apply_text_shift(texts: Sequence[str], spec: ShiftSpec) -> list[str]:
    """The texts of one set: :func:`helpers.data.text_perturb.compose_text` of ``spec.steps`` with ``spec.seed``."""
    return compose_text(texts, spec.steps, seed=spec.seed)


def imbalance_subsets(
    labels: np.ndarray, ratios: Sequence[float], *, seed: int = 0
) -> dict[float, np.ndarray]:
    """Long-tailed index subsets of one labelled set per imbalance ratio (paper 5 Sec. 4.5, Cao et al. 2019).

    ``ratio`` = smallest / largest class size in (0, 1]; classes are ordered by a seeded permutation so the tail
    classes are not always the same labels.  Sizes differ between ratios, so compare set-size-free measures
    (normalised MDE) on them.
    """
    y = np.asarray(labels)
    rng = np.random.default_rng(seed)
    order = rng.permutation(np.unique(y))
    return {
        float(r): imbalance_resample(y, float(r), seed=int(rng.integers(2**31)), class_order=order)
        for r in ratios
    }


def specs_frame(specs: Sequence[ShiftSpec]):
    """A pandas DataFrame of the specs (name, split, family, steps, seed) for display."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "set": s.name,
                "split": s.split,
                "family": s.family,
                "steps": " + ".join(f"{n}:{v}" for n, v in s.steps) or "-",
                "seed": s.seed,
            }
            for s in specs
        ]
    )


# ------------------------------------------------------------------------------------------------ duplicate sets


def without_colour_only(specs: Sequence[ShiftSpec]) -> list[ShiftSpec]:
    """``specs`` minus the sets with a step of :data:`COLOUR_ONLY` (the identity on grayscale images).

    Filter the generated list (rather than the names before generation) so that every other set keeps its seed.
    """
    return [s for s in specs if not any(name in COLOUR_ONLY for name, _ in s.steps)]


def set_difference(a: Any, b: Any, *, value_range: tuple[float, float] | None = None) -> float:
    """How far apart the inputs of two sets of the same examples are, in [0, 1].

    Images (arrays of one shape): ``mean |a - b| / (high - low)`` over every pixel, with the value range
    ``value_range`` or inferred from ``a``.  Texts (sequences of str): the share of positions whose texts differ.
    0 means identical inputs.
    """
    if isinstance(a, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            raise InputValidationError(f"b: expected images of shape {a.shape} (the same examples), got {b.shape}")
        lo, hi = value_range if value_range is not None else infer_value_range(a)
        return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).mean() / (hi - lo))
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise InputValidationError(f"b: expected {len(a)} texts (the same examples), got {len(b)}")
    return float(np.mean([x != y for x, y in zip(a, b)])) if a else 0.0


def duplicate_sets(
    specs: Sequence[ShiftSpec], inputs: Any, *, tol: float = NEAR_IDENTICAL, value_range=None
) -> dict[str, str]:
    """The sets whose inputs are (near-)identical to an earlier set's.

    Parameters
    ----------
    specs : list of ShiftSpec
        In order of precedence: of two near-identical sets the earlier one counts as the original (the clean
        set first, then the fit corruptions, as :func:`image_metaset` orders them).
    inputs : callable ShiftSpec -> images or texts
        The set's inputs (the same examples for every set, e.g. ``lambda s: apply_image_shift(x, s)``).
    tol : float
        Sets at :func:`set_difference` ``<= tol`` are duplicates (default :data:`NEAR_IDENTICAL`).

    Returns
    -------
    dict
        ``{duplicate set name: name of the earlier set it copies}`` (empty when every set is distinct).
    """
    kept: list[tuple[str, Any]] = []
    copies: dict[str, str] = {}
    for spec in specs:
        x = inputs(spec)
        same = next((name for name, y in kept if set_difference(y, x, value_range=value_range) <= tol), None)
        if same is None:
            kept.append((spec.name, x))
        else:
            copies[spec.name] = same
    return copies


def distinct_sets(
    specs: Sequence[ShiftSpec], inputs: Any, *, tol: float = NEAR_IDENTICAL, value_range=None
) -> list[ShiftSpec]:
    """``specs`` without the :func:`duplicate_sets` (the first of near-identical sets stays)."""
    copies = duplicate_sets(specs, inputs, tol=tol, value_range=value_range)
    return [s for s in specs if s.name not in copies]
