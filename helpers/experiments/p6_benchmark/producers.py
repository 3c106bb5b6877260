"""ShiftTasks of the benchmark grid from notebook 05's setups.

Each producer takes notebook 05's parameters (:func:`helpers.experiments.p5_mde.notebook_parameters`) and turns
the corresponding setup of :mod:`helpers.experiments.p5_mde.setups` into tasks.  The sets, models and cache keys
are therefore 05's own, not copies: after notebook 05 ran on a profile, notebook 06 on that profile reads 05's
predictions instead of recomputing them, and a run of 06 alone computes (and caches) only the sets it uses.
Models are built, trained (checkpointed under 05's names) and run lazily: only when some set's outputs are missing
from the cache.

Families
--------
``cifar-corruption``  pretrained CIFAR-10 ResNets; meta-set = the fit corruption types at every severity and their
                      compositions (05's ``fit`` split); targets = held-out corruption types and compositions and
                      the strong-noise stress sets (05's ``heldout`` and ``unseen`` splits); partner = the next
                      ResNet (agreement); features = penultimate activations (Fréchet).
``digits-usps``       small CNNs on sklearn 8x8 digits -> USPS at 8x8 (two intensity maps) and CNNs on USPS at 8x8
                      -> sklearn digits; meta-set = corrupted source-domain images; partner = the other seed.
``imdb``              light IMDb sentiment models (bag of words, mean of embeddings); meta-set = perturbed IMDb
                      test reviews; targets = RT polarity, NLTK movie reviews, four Amazon domains.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from helpers.benchmark.task import LabelledLogits, ShiftTask

__all__ = ["cifar_tasks", "digits_tasks", "text_tasks"]


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
) -> list[ShiftTask]:
    """One ShiftTask per predictor; the partner (agreement) is the next predictor, cyclically."""
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
            )
        )
    return tasks


def _setup_tasks(setup, *, family: str, prefix: str, meta_splits, target_splits, info, progress) -> list[ShiftTask]:
    """One ShiftTask per model of a notebook-05 setup: its ``meta_splits`` sets form the meta-set, its
    ``target_splits`` sets are the targets (outputs from 05's cache entries)."""
    specs, out, ref = setup.outputs(splits=(*meta_splits, *target_splits), progress=progress)
    return _build_tasks(family=family, prefix=prefix, specs=specs, outputs=out, ref_outputs=ref, labels=setup.labels,
                        reference_labels=setup.reference_labels, meta_splits=meta_splits, target_splits=target_splits,
                        info=info)  # fmt: skip


def cifar_tasks(p5: Mapping[str, Any], *, progress: bool = True) -> list[ShiftTask]:
    """CIFAR-10 ResNets x corruption shifts (family ``cifar-corruption``): meta-set = 05's ``fit`` sets (fit
    corruption types at every severity and their compositions); targets = held-out types and compositions and the
    strong-noise stress sets (05's ``heldout`` and ``unseen``); partner = the next ResNet; features = penultimate."""
    from helpers.experiments.p5_mde import cifar_setup

    return _setup_tasks(cifar_setup(p5), family="cifar-corruption", prefix="cifar10", meta_splits=("fit",),
                        target_splits=("heldout", "unseen"), progress=progress,
                        info={"data": f"CIFAR-10 test ({p5.get('cifar_base', 'original')})",
                              "n_per_set": p5["cifar_n_per_set"]})  # fmt: skip


def digits_tasks(
    p5: Mapping[str, Any], *, directions: Sequence[str] = ("digits->usps", "usps->digits"), progress: bool = True
) -> list[ShiftTask]:
    """Digits <-> USPS at 8x8 (family ``digits-usps``) with 05's CNNs: targets are the natural shifts only
    (``usps-histogram`` / ``usps-linear`` for digits->usps, ``sklearn-digits`` for usps->digits); the meta-set is
    05's ``fit`` split of corrupted source images."""
    from helpers.errors import InputValidationError
    from helpers.experiments.p5_mde import digits_setup, usps_setup

    bad = sorted(set(directions) - {"digits->usps", "usps->digits"})
    if bad:
        raise InputValidationError(f"directions: expected 'digits->usps' and/or 'usps->digits', got {bad}")
    tasks: list[ShiftTask] = []
    if "digits->usps" in directions:
        tasks += _setup_tasks(digits_setup(p5), family="digits-usps", prefix="digits->usps", meta_splits=("fit",),
                              target_splits=("unseen",), info={"data": "sklearn digits -> USPS 8x8"},
                              progress=progress)  # fmt: skip
    if "usps->digits" in directions:
        tasks += _setup_tasks(usps_setup(p5), family="digits-usps", prefix="usps->digits", meta_splits=("fit",),
                              target_splits=("unseen",), info={"data": "USPS 8x8 -> sklearn digits"},
                              progress=progress)  # fmt: skip
    return tasks


def text_tasks(p5: Mapping[str, Any], *, progress: bool = True) -> list[ShiftTask]:
    """IMDb sentiment models -> RT / NLTK movie reviews / four Amazon domains (family ``imdb``) with 05's text
    setup: meta-set = 05's ``fit`` sets of perturbed IMDb test reviews; targets = the natural shifts."""
    from helpers.experiments.p5_mde import text_setup

    return _setup_tasks(text_setup(p5), family="imdb", prefix="imdb", meta_splits=("fit",), target_splits=("unseen",),
                        info={"data": "IMDb -> RT / movie reviews / Amazon", "n_per_set": p5["text_n_per_set"]},
                        progress=progress)  # fmt: skip
