"""Notebook 06's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = BenchmarkSettings.this_run(globals())``, and reads
``S.<name>`` after that.  Notebook 05's and 01's settings, which 06 reuses, are their own objects
(:class:`~helpers.experiments.p5_mde.settings.MdeSettings`, 01's config), made from ``mde_overrides`` and
``seq2seq_overrides``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from helpers.run.settings import NotebookSettings

__all__ = ["BenchmarkSettings"]


@dataclass(frozen=True)
class BenchmarkSettings(NotebookSettings):
    """Notebook 06's parameters (see its parameters cell and ``notebooks/profiles/*.yaml``)."""

    NOTEBOOK: ClassVar[str] = "06_benchmark"

    profile: str
    seed: int
    torch_threads: int
    byod_path: str  #: your own model outputs (helpers.byod.load_task); "": the grid only
    byod_kind: str
    families: list[str] | None  #: None: every grid block
    methods: list[str] | None  #: None: every method of helpers.benchmark.DEFAULT_METHODS
    n_boot: int  #: bootstrap resamples per interval
    level: float  #: nominal coverage of the intervals
    stacked: bool  #: add the stacked estimator
    conformal_levels: list[float]
    mde_overrides: dict[str, Any]  #: notebook 05 parameters to change
    digits_directions: list[str]
    amazon_pairs_list: list[str]
    amazon_max_target: int | None
    st_digits_pairs: list[str]
    self_training_pairs: list[str]
    st_amazon_epochs: int
    st_digits_epochs: int
    st_num_models: int  #: N members (paper 3)
    st_rounds: int  #: T rounds (paper 3)
    st_meta_sets: bool
    seq2seq_only_if_cached: bool
    seq2seq_overrides: dict[str, Any]  #: notebook 01 parameters to change
