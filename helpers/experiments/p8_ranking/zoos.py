"""The model zoos notebook 08 ranks, read from the caches their own notebooks fill (no model trained twice).

* ``sentiment`` -- notebook 02's suite (ten IMDb sentiment models in ``default``): reference = IMDb test reviews
  (labelled, shared by every model), target = Rotten Tomatoes sentences (family ``imdb->rt``);
* ``cifar`` -- the pretrained CIFAR-10 ResNets on notebook 05's CIFAR-10 sets: reference = the clean set, targets =
  05's held-out and unseen sets (held-out corruption types, compositions, stress sets), each in notebook 06's family
  (:func:`~helpers.experiments.p6_benchmark.producers.cifar_family`); penultimate features included;
* ``imdb`` -- notebook 05's text models (MiniLM-L6 frozen + head, embedding mean, bag of words in ``default``):
  reference = IMDb test reviews, targets = RT / movie reviews / four Amazon domains (``imdb-natural``) and 05's
  held-out perturbation types (``text-perturbations``).

Each target set is one :class:`Collection`: every model's outputs on the same labelled rows and on one shared
labelled reference, what :func:`helpers.estimators.rank_models` takes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Collection", "zoo_collections"]


@dataclass
class Collection:
    """One target set of one zoo: ``outputs`` / ``reference`` map model -> inputs of ``rank_models``."""

    zoo: str
    family: str
    target: str
    outputs: dict[str, dict[str, np.ndarray]]
    labels: np.ndarray
    reference: dict[str, dict[str, np.ndarray]]

    @property
    def models(self) -> list[str]:
        return list(self.outputs)


def sentiment_zoo(profile: str, *, progress: bool = False) -> list[Collection]:
    """Notebook 02's suite under ``profile``, with 02's own data and cache keys."""
    from helpers.experiments.p2_selective.settings import SelectiveSettings
    from helpers.experiments.p2_selective.suite import (
        SuiteConfig,
        load_suite_data,
        suite_predictions_by_model,
    )

    s = SelectiveSettings.for_profile(profile)
    load = dict(n_train=s.n_train, n_test=s.n_test, n_ood=s.n_ood, seed=s.seed)
    data = load_suite_data(**load)
    config = SuiteConfig(n_train_minilm=s.n_train_minilm, overrides=s.recipe_overrides, seed=s.seed)
    preds = suite_predictions_by_model(load, models=s.models, config=config, progress=progress)
    outputs = {m: {"logits": np.asarray(p["ood_logits"])} for m, p in preds.items()}
    reference = {
        m: {"logits": np.asarray(p["id_logits"]), "labels": data.test_label} for m, p in preds.items()
    }
    return [Collection("sentiment", "imdb->rt", "rt_polarity", outputs, data.ood_label, reference)]


def _setup_zoo(zoo: str, setup: Any, family: Callable[[Any], str | None], keep: Callable[[Any], bool],
               progress: bool) -> list[Collection]:  # fmt: skip
    """A notebook-05 setup's held-out and unseen sets as collections (outputs from 05's cache entries)."""
    setup = dataclasses.replace(
        setup, specs=[s for s in setup.specs if s.split in ("heldout", "unseen") and keep(s)]
    )
    specs, out, ref = setup.outputs(splits=("heldout", "unseen"), progress=progress)
    reference = {
        m: {**{k: np.asarray(v) for k, v in r.items()}, "labels": setup.reference_labels}
        for m, r in ref.items()
    }
    return [Collection(zoo, family(s), s.name, {m: {k: np.asarray(v) for k, v in out[m][s.name].items()} for m in out},
                       np.asarray(setup.labels(s)), reference) for s in specs]  # fmt: skip


def cifar_zoo(profile: str, backbones: list[int], *, progress: bool = False) -> list[Collection]:
    """The ResNets ``backbones`` on notebook 05's CIFAR-10 held-out and unseen sets under ``profile``."""
    from helpers.experiments.p5_mde import cifar_setup, notebook_parameters
    from helpers.experiments.p6_benchmark.producers import cifar_family

    p5 = notebook_parameters(profile, cifar_backbones=list(backbones))
    return _setup_zoo("cifar", cifar_setup(p5), cifar_family, lambda s: True, progress)


def imdb_zoo(profile: str, *, progress: bool = False) -> list[Collection]:
    """Notebook 05's text models on its natural shifts and held-out perturbation types under ``profile`` (the
    held-out compositions are left out, as in notebook 06)."""
    from helpers.experiments.p5_mde import notebook_parameters, text_setup

    return _setup_zoo("imdb", text_setup(notebook_parameters(profile)),
                      lambda s: "text-perturbations" if s.split == "heldout" else "imdb-natural",
                      lambda s: s.split != "heldout" or s.family == "corruption", progress)  # fmt: skip


def zoo_collections(zoos: list[str], profile: str, *, cifar_backbones: list[int], progress: bool = False
                    ) -> list[Collection]:  # fmt: skip
    """Every target set of every zoo in ``zoos``, in that order."""
    makers = {"sentiment": lambda: sentiment_zoo(profile, progress=progress),
              "cifar": lambda: cifar_zoo(profile, cifar_backbones, progress=progress),
              "imdb": lambda: imdb_zoo(profile, progress=progress)}  # fmt: skip
    return [c for z in zoos for c in makers[z]()]
