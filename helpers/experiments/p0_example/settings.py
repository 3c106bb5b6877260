"""Notebook 00's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`): the
shortest example of the notebook recipe (``docs/architecture.md``).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = ExampleSettings.this_run(globals())``, and reads
``S.<name>`` after that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from helpers.run.settings import NotebookSettings

__all__ = ["ExampleSettings"]


@dataclass(frozen=True)
class ExampleSettings(NotebookSettings):
    """Notebook 00's parameters (see its parameters cell and ``notebooks/profiles/00_example.yaml``)."""

    NOTEBOOK: ClassVar[str] = "00_example"

    profile: str
    n_train: int  #: training images out of 1,797; the rest is split into labelled reference and unlabelled target
    epochs: int
    seed: int
    corruptions: list[str]
    severities: list[int]
    estimators: list[str]
