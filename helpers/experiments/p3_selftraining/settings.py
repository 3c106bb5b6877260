"""Notebook 03's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = SelfTrainingSettings.this_run(globals())``, and reads
``S.<name>`` after that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from helpers.run.settings import NotebookSettings

__all__ = ["SelfTrainingSettings"]


@dataclass(frozen=True)
class SelfTrainingSettings(NotebookSettings):
    """Notebook 03's parameters (see its parameters cell and ``notebooks/profiles/03_self_training.yaml``)."""

    NOTEBOOK: ClassVar[str] = "03_self_training"

    profile: str
    seed: int
    torch_threads: int
    workers: int  #: 1: every training job in the kernel; 0: units on the executor's workers
    amazon_pairs_list: list[str] | str  #: source->target names, or "all" (the 12 pairs)
    amazon_max_target: int | None  #: target reviews per pair (None: all)
    dann_f_pairs: list[str]  #: pairs also run with f = DANN-arch
    amazon_f_epochs: int
    amazon_dann_epochs: int
    amazon_batch_size: int
    amazon_num_models: int  #: N
    digits_targets: list[str]
    digits_f_epochs: int
    digits_dann_epochs: int
    digits_batch_size: int
    digits_num_models: int  #: N
    ens_size: int  #: Ens Avg Conf members
    rounds: int  #: T
    gamma: float
    proxy_epochs: int
    ablation_pairs: list[str]
    ablation_N: list[int]
    ablation_T: list[int]
    ablation_gamma: list[float]
    conditions_pairs: list[str]
