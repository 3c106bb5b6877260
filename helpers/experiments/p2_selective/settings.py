"""Notebook 02's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = SelectiveSettings.this_run(globals())``, and reads
``S.<name>`` after that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from helpers.run.settings import NotebookSettings

__all__ = ["SelectiveSettings"]


@dataclass(frozen=True)
class SelectiveSettings(NotebookSettings):
    """Notebook 02's parameters (see its parameters cell and ``notebooks/profiles/02_selective_answering.yaml``)."""

    NOTEBOOK: ClassVar[str] = "02_selective_answering"

    profile: str
    models: list[str]  #: the suite's members (``helpers.experiments.p2_selective.suite``)
    n_train: int | None  #: IMDb training reviews for the word-level models (None: all of our train split)
    n_train_minilm: int  #: the first n of those for the MiniLM members
    n_test: int | None  #: IMDb test reviews (ID)
    n_ood: int | None  #: Rotten Tomatoes sentences (OOD)
    recipe_overrides: dict[str, dict[str, Any]]  #: per-member changes to the suite's recipes
    torch_threads: int
    seed: int
    weights: list[float]  #: x, y, z of paper 2's Eq. 1
    tolerance: float  #: the accuracy threshold defining b for the headline DiSCA
    decimals: int  #: accuracy levels on which fluctuations are counted
    tail_coverage: float  #: the tail: coverage in (0, tail_coverage]
    max_pair_panels: int
    optimal_params: int  #: Appendix B's example deployment budget
    p_q: list[float]  #: DiDMA weights (Eq. 2)
    u_v: list[float]  #: NiDMA weights (Eq. 3)
