"""ShiftTasks of the benchmark grid from notebook 05's setups.

Each producer takes notebook 05's parameters (:func:`helpers.experiments.p5_mde.notebook_parameters`) and turns
the corresponding setup of :mod:`helpers.experiments.p5_mde.setups` into tasks.  The sets, models and cache keys
are therefore 05's own, not copies: after notebook 05 ran on a profile, notebook 06 on that profile reads 05's
predictions instead of recomputing them, and a run of 06 alone computes (and caches) only the sets it uses.
Models are built, trained (checkpointed under 05's names) and run lazily: only when some set's outputs are missing
from the cache.

Families
--------
A task's target sets may belong to several shift families (:attr:`~helpers.benchmark.ShiftTask.set_families`):
one model, one reference and one meta-set, several kinds of shift.  The families were fixed before any
leave-one-family-out coverage was computed (``docs/reproductions/benchmark.md``, "Pre-registered";
:data:`helpers.experiments.p6_benchmark.beyond.FAMILIES`).

``cifar10/<resnet>``  pretrained CIFAR-10 ResNets; meta-set = 05's ``fit`` split (fit corruption types at every
                      severity and their compositions); targets = 05's ``heldout`` and ``unseen`` sets, in the
                      families ``cifar-noise``, ``cifar-blur``, ``cifar-weather``, ``cifar-digital`` (CIFAR-10-C's
                      own categories of the held-out types), ``cifar-composition`` and ``cifar-stress``; partner =
                      the next ResNet (agreement); features = penultimate activations (Fréchet).
``cifar10-jpeg/...``  the same models, reference and meta-set; targets = the quality-75 JPEG pool alone and with one
                      held-out corruption of each category (family ``jpeg-compression``).
``cifar10-labels/..`` ResNet-20, same reference and meta-set; targets = long-tailed class-prior resamples of the
                      clean set (family ``label-shift``).
``digits->usps/...``  small CNNs on sklearn 8x8 digits -> USPS at 8x8 (two intensity maps), and CNNs on USPS at 8x8
``usps->digits/...``  -> sklearn digits (family ``digits-usps``), plus their held-out corruption types at every
                      severity (family ``digit-corruptions``); meta-set = corrupted source-domain images (fit types).
``imdb/...``          light IMDb sentiment models (bag of words, mean of embeddings): RT polarity, NLTK movie reviews,
                      four Amazon domains (family ``imdb-natural``) and the held-out perturbation types at every
                      severity (family ``text-perturbations``); meta-set = perturbed IMDb test reviews (fit types).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from helpers.benchmark.task import LabelledLogits, ShiftTask
from helpers.experiments.p5_mde.settings import MdeSettings, mde_settings

__all__ = [
    "CIFAR_CATEGORIES",
    "cifar_family",
    "cifar_tasks",
    "jpeg_sets",
    "jpeg_tasks",
    "label_shift_tasks",
    "digits_tasks",
    "text_tasks",
]

#: CIFAR-10-C's own four categories (Hendrycks & Dietterich 2019, Fig. 1), by corruption type
CIFAR_CATEGORIES = {
    "noise": ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"),
    "blur": ("defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "gaussian_blur"),
    "weather": ("snow", "frost", "fog", "brightness", "spatter"),
    "digital": ("contrast", "elastic_transform", "pixelate", "jpeg_compression", "saturate"),
}


def cifar_family(spec) -> str:
    """The pre-registered family of one CIFAR target set: ``cifar-composition``, ``cifar-stress`` or
    ``cifar-<category>`` of its single corruption type (:data:`CIFAR_CATEGORIES`)."""
    from helpers.errors import InputValidationError

    if spec.family in ("composition", "stress"):
        return f"cifar-{spec.family}"
    kind = spec.steps[0][0] if len(spec.steps) == 1 else None
    for category, names in CIFAR_CATEGORIES.items():
        if kind in names:
            return f"cifar-{category}"
    raise InputValidationError(f"set {spec.name!r}: no CIFAR-10-C category for steps {spec.steps}")


def _build_tasks(
    *,
    family: str,
    prefix: str,
    specs: Sequence,
    outputs: Mapping,
    ref_outputs: Mapping,
    labels: Callable[[Any], np.ndarray],
    reference_labels: np.ndarray,
    meta_splits: Sequence[str],
    target_splits: Sequence[str],
    info: Mapping[str, Any],
    use_features: bool = True,
    set_family: Callable[[Any], str] | None = None,
) -> list[ShiftTask]:
    """One ShiftTask per predictor; the partner (agreement) is the next predictor, cyclically.  ``set_family(spec)``
    names a target's family where it is not ``family``."""
    names = list(outputs)
    partners = {b: names[(i + 1) % len(names)] for i, b in enumerate(names)} if len(names) > 1 else {}
    meta_specs = [s for s in specs if s.split in meta_splits]
    target_specs = [s for s in specs if s.split in target_splits]
    all_names = ["reference"] + [s.name for s in meta_specs + target_specs]
    tasks = []
    for b in names:

        def sets(ss, b=b):
            return {s.name: LabelledLogits(outputs[b][s.name]["logits"], labels(s)) for s in ss}

        def arrays(pred: str, what: str, ref=ref_outputs) -> dict[str, np.ndarray]:
            return {n: (ref[pred] if n == "reference" else outputs[pred][n])[what] for n in all_names}

        partner = arrays(partners[b], "logits") if b in partners else {}
        has_features = use_features and "features" in ref_outputs[b]
        tasks.append(
            ShiftTask(
                name=f"{prefix}/{b}",
                family=family,
                reference=LabelledLogits(ref_outputs[b]["logits"], reference_labels),
                targets=sets(target_specs),
                meta=sets(meta_specs),
                partner=partner,
                features=arrays(b, "features") if has_features else {},
                info={**info, "model": b, "partner": partners.get(b)},
                set_families={s.name: f for s in target_specs if (f := set_family(s))} if set_family else {},
            )
        )
    return tasks


def _setup_tasks(setup, *, family: str, prefix: str, meta_splits, target_splits, info, progress,
                 set_family=None, keep_target=None) -> list[ShiftTask]:  # fmt: skip
    """One ShiftTask per model of a notebook-05 setup: its ``meta_splits`` sets form the meta-set, its
    ``target_splits`` sets are the targets (outputs from 05's cache entries)."""
    if keep_target is not None:  # outputs of dropped targets are neither read nor computed
        kept = [s for s in setup.specs if s.split in meta_splits or keep_target(s)]
        setup = dataclasses.replace(setup, specs=kept)
    specs, out, ref = setup.outputs(splits=(*meta_splits, *target_splits), progress=progress)
    return _build_tasks(family=family, prefix=prefix, specs=specs, outputs=out, ref_outputs=ref, labels=setup.labels,
                        reference_labels=setup.reference_labels, meta_splits=meta_splits, target_splits=target_splits,
                        info=info, set_family=set_family)  # fmt: skip


def cifar_tasks(p5: MdeSettings | Mapping[str, Any], *, progress: bool = True) -> list[ShiftTask]:
    """CIFAR-10 ResNets x corruption shifts: meta-set = 05's ``fit`` sets (fit corruption types at every severity
    and their compositions); targets = held-out types and compositions and the stress sets (05's ``heldout`` and
    ``unseen``), each in its family (:func:`cifar_family`); partner = the next ResNet; features = penultimate."""
    from helpers.experiments.p5_mde import cifar_setup

    p5 = mde_settings(p5)

    return _setup_tasks(cifar_setup(p5), family="cifar-corruption", prefix="cifar10", meta_splits=("fit",),
                        target_splits=("heldout", "unseen"), progress=progress, set_family=cifar_family,
                        info={"data": f"CIFAR-10 test ({p5.cifar_base})",
                              "n_per_set": p5.cifar_n_per_set})  # fmt: skip


def _derived(task: ShiftTask, *, name: str, family: str, targets: Mapping[str, LabelledLogits],
             partner: Mapping[str, np.ndarray], features: Mapping[str, np.ndarray], info: Mapping[str, Any]) -> ShiftTask:  # fmt: skip
    """A task with ``task``'s model, reference and meta-set and other targets (partner / features extended by the
    new targets' arrays where ``task`` has them)."""
    return ShiftTask(
        name=name, family=family, reference=task.reference, targets=dict(targets), meta=task.meta,
        partner={**{k: v for k, v in task.partner.items() if k not in task.targets}, **partner} if task.partner else {},
        features={**{k: v for k, v in task.features.items() if k not in task.targets}, **features}
        if task.features else {},
        info={**task.info, **info},
    )  # fmt: skip


def jpeg_sets(p5: MdeSettings | Mapping[str, Any]) -> list[str]:
    """The JPEG family's sets (rule fixed before the run): ``"clean"`` (the JPEG pool alone) and, per CIFAR-10-C
    category, the first held-out type of 05's ``cifar_heldout_names`` in it at severity 3 (else the middle held-out
    severity).  ``default``: clean, impulse_noise-3, glass_blur-3, spatter-3, saturate-3."""
    p5 = mde_settings(p5)
    severities = sorted(p5.cifar_heldout_severities)
    severity = 3 if 3 in severities else severities[len(severities) // 2]
    out = ["clean"]
    for names in CIFAR_CATEGORIES.values():
        first = next((n for n in p5.cifar_heldout_names if n in names), None)
        if first:
            out.append(f"{first}-{severity}")
    return out


def jpeg_tasks(p5: MdeSettings | Mapping[str, Any], cifar: Sequence[ShiftTask], *, progress: bool = True) -> list[ShiftTask]:
    """Family ``jpeg-compression``: each CIFAR-10 task of ``cifar`` (:func:`cifar_tasks`, reference = clean
    originals) on ``cifar_n_per_set`` images drawn from the 10,000 quality-75 JPEG test images, alone and with one
    held-out corruption of each CIFAR-10-C category (:func:`jpeg_sets`), under 05's cache keys for the ``"jpeg"``
    base (:func:`~helpers.experiments.p5_mde.setups.cifar_pool`)."""
    from helpers.experiments.p5_mde import cifar_setup

    p5 = mde_settings(p5)

    setup = cifar_setup(dataclasses.replace(p5, cifar_base="jpeg", cifar_n_reference=0))
    by_name = {s.name: s for s in setup.specs}
    specs = [dataclasses.replace(by_name[n], split="heldout") for n in jpeg_sets(p5)]
    specs, out, _ = dataclasses.replace(setup, specs=specs).outputs(splits=("heldout",), progress=progress)
    tasks = []
    for task in cifar:
        b, partner_name = task.info["model"], task.info.get("partner")
        names = {s.name: f"jpeg:{s.name}" for s in specs}
        tasks.append(_derived(
            task, name=task.name.replace("cifar10/", "cifar10-jpeg/"), family="jpeg-compression",
            targets={names[s.name]: LabelledLogits(out[b][s.name]["logits"], setup.labels(s)) for s in specs},
            partner={names[s.name]: out[partner_name][s.name]["logits"] for s in specs} if partner_name else {},
            features={names[s.name]: out[b][s.name]["features"] for s in specs if "features" in out[b][s.name]},
            info={"data": "CIFAR-10 test, quality-75 JPEG pool"},
        ))  # fmt: skip
    return tasks


def label_shift_tasks(cifar: Sequence[ShiftTask], ratios: Sequence[float], *, seed: int = 0,
                      models: Sequence[str] = ("resnet20",)) -> list[ShiftTask]:  # fmt: skip
    """Family ``label-shift``: the clean reference set of each CIFAR-10 task of ``models`` resampled to long-tailed
    class priors (:func:`~helpers.data.metaset.imbalance_subsets`, smallest / largest class size = each ratio < 1;
    paper 5 Sec. 4.5), targets ``imbalance-<ratio>``; no new predictions."""
    from helpers.data.metaset import imbalance_subsets

    tasks = []
    for task in [t for t in cifar if t.info.get("model") in models]:
        ref = task.reference
        subsets = imbalance_subsets(ref.labels, [r for r in ratios if r < 1], seed=seed)
        names = {r: f"imbalance-{r:g}" for r in subsets}
        tasks.append(_derived(
            task, name=task.name.replace("cifar10/", "cifar10-labels/"), family="label-shift",
            targets={names[r]: LabelledLogits(ref.logits[i], ref.labels[i]) for r, i in subsets.items()},
            partner={names[r]: task.partner["reference"][i] for r, i in subsets.items()} if task.partner else {},
            features={names[r]: task.features["reference"][i] for r, i in subsets.items()} if task.features else {},
            info={"data": "CIFAR-10 test originals, class-prior resamples"},
        ))  # fmt: skip
    return tasks


def digits_tasks(
    p5: MdeSettings | Mapping[str, Any], *, directions: Sequence[str] = ("digits->usps", "usps->digits"), progress: bool = True
) -> list[ShiftTask]:
    """Digits <-> USPS at 8x8 with 05's CNNs: targets are the natural shifts (family ``digits-usps``:
    ``usps-histogram`` / ``usps-linear`` for digits->usps, ``sklearn-digits`` for usps->digits) and 05's held-out
    corruption types at every severity on the source images (family ``digit-corruptions``; not the held-out
    compositions); the meta-set is 05's ``fit`` split of corrupted source images."""
    from helpers.errors import InputValidationError
    from helpers.experiments.p5_mde import digits_setup, usps_setup

    p5 = mde_settings(p5)

    bad = sorted(set(directions) - {"digits->usps", "usps->digits"})
    if bad:
        raise InputValidationError(f"directions: expected 'digits->usps' and/or 'usps->digits', got {bad}")
    tasks: list[ShiftTask] = []
    if "digits->usps" in directions:
        tasks += _setup_tasks(digits_setup(p5), family="digits-usps", prefix="digits->usps", meta_splits=("fit",),
                              target_splits=("heldout", "unseen"), info={"data": "sklearn digits -> USPS 8x8"},
                              progress=progress, **_heldout_types("digit-corruptions"))  # fmt: skip
    if "usps->digits" in directions:
        tasks += _setup_tasks(usps_setup(p5), family="digits-usps", prefix="usps->digits", meta_splits=("fit",),
                              target_splits=("heldout", "unseen"), info={"data": "USPS 8x8 -> sklearn digits"},
                              progress=progress, **_heldout_types("digit-corruptions"))  # fmt: skip
    return tasks


def _heldout_types(family: str) -> dict[str, Callable]:
    """``set_family`` / ``keep_target`` for a setup whose held-out single corruption types form ``family``: the
    held-out compositions are dropped (not pre-registered), the ``unseen`` natural shifts keep the task's family."""
    return {"set_family": lambda s: family if s.split == "heldout" else None,
            "keep_target": lambda s: s.split != "heldout" or s.family == "corruption"}  # fmt: skip


def text_tasks(p5: MdeSettings | Mapping[str, Any], *, progress: bool = True) -> list[ShiftTask]:
    """IMDb sentiment models with 05's text setup: targets = RT / NLTK movie reviews / four Amazon domains (family
    ``imdb-natural``) and 05's held-out perturbation types at every severity on IMDb test reviews (family
    ``text-perturbations``); meta-set = 05's ``fit`` sets of perturbed IMDb test reviews."""
    from helpers.experiments.p5_mde import text_setup

    p5 = mde_settings(p5)

    return _setup_tasks(text_setup(p5), family="imdb-natural", prefix="imdb", meta_splits=("fit",),
                        target_splits=("heldout", "unseen"), progress=progress, **_heldout_types("text-perturbations"),
                        info={"data": "IMDb -> RT / movie reviews / Amazon", "n_per_set": p5.text_n_per_set})  # fmt: skip
