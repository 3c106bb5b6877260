"""Notebook 04's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = AttributionSettings.this_run(globals())``, and reads
``S.<name>`` after that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from helpers.run.settings import NotebookSettings

__all__ = ["AttributionSettings"]


@dataclass(frozen=True)
class AttributionSettings(NotebookSettings):
    """Notebook 04's parameters (see its parameters cell and ``notebooks/profiles/*.yaml``)."""

    NOTEBOOK: ClassVar[str] = "04_attribution_ranking"

    profile: str
    seed: int
    torch_threads: int
    n_boot: int  #: bootstrap samples (paper 4, Appendix B)
    probe_size: int  #: examples per few-shot probe (paper 4, Sec. 4.3)
    methods: list[str]  #: attribution methods for MSGS (paper 4, Table 1)
    pair_methods: list[str]  #: attribution methods for HANS / PAWS
    n_steps: int  #: integrated-gradients steps
    n_samples: int  #: SHAP / LIME perturbations per example
    msgs_features: list[str]
    msgs_mixes: list[str]
    n_train: int  #: training examples per MSGS model
    epochs: int
    n_ood: int  #: OOD test examples (true OOD accuracy)
    n_population: int  #: fixed population for the bootstrap
    n_train_pairs: int  #: training pairs per HANS / PAWS model
    pair_arch: str
    hans_inoculation: list[float]
    paws_inoculation: list[float]
    arch_suite: list[str]  #: architectures of the Sec. 6.3 architecture-change suite
    arch_inoculation: dict[str, float]
    arch_best_guess: str
    arch_n_population: int | None  #: None: n_population
    n_heatmap: int
    informative_z: float  #: rank only pairs whose OOD accuracies differ by more than z standard errors
    direction_seed_offset: int  #: the independent suite (seed + offset) on which factor readings are chosen
