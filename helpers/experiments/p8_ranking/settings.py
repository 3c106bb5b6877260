"""Notebook 08's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = RankingSettings.this_run(globals())``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from helpers.errors import InputValidationError
from helpers.run.settings import NotebookSettings

__all__ = ["RankingSettings", "ZOOS"]

#: the model zoos notebook 08 ranks: which notebook's cache each reads
ZOOS = {"sentiment": "02_selective_answering", "cifar": "05_mde", "imdb": "05_mde"}


@dataclass(frozen=True)
class RankingSettings(NotebookSettings):
    """Notebook 08's parameters (its ``parameters`` cell, in order)."""

    NOTEBOOK: ClassVar[str] = "08_model_ranking"

    profile: str
    seed: int
    torch_threads: int
    zoos: list[str]  #: some of :data:`ZOOS`
    cifar_backbones: list[int]  #: the CIFAR ResNets of the cifar zoo (05's sets, its cache)
    methods: list[str]  #: registered estimators, plus "id_accuracy" (the models' labelled reference accuracy)
    n_boot: int  #: bootstrap replicates over each target set's examples (the intervals of τ, ρ, regret)

    def __post_init__(self) -> None:
        super().__post_init__()
        unknown = [z for z in self.zoos if z not in ZOOS]
        if unknown or not self.zoos:
            raise InputValidationError(f"zoos: expected some of {list(ZOOS)}, got {self.zoos!r}")
        if len(self.cifar_backbones) < 3 and "cifar" in self.zoos:
            raise InputValidationError(
                f"cifar_backbones: ranking needs at least 3 ResNets, got {self.cifar_backbones}"
            )
        from helpers.estimators import list_estimators

        unknown = [m for m in self.methods if m not in (*list_estimators(), "id_accuracy")]
        if unknown or not self.methods:
            raise InputValidationError(
                f"methods: expected registered estimators or 'id_accuracy', got {unknown}"
            )
        if self.n_boot < 0:
            raise InputValidationError(f"n_boot: expected an integer >= 0, got {self.n_boot!r}")
