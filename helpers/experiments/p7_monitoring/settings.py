"""Notebook 07's parameters as one typed, frozen object (:class:`~helpers.run.settings.NotebookSettings`).

The fields are the names of the notebook's ``parameters`` cell, in its order (``tests/test_notebook_settings.py``
keeps the two equal); the notebook makes them once, ``S = MonitoringSettings.this_run(globals())``, and reads
``S.<name>`` after that; code elsewhere takes ``MonitoringSettings.for_profile(profile, **overrides)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from helpers.errors import InputValidationError
from helpers.run.settings import NotebookSettings

__all__ = ["MonitoringSettings"]


@dataclass(frozen=True)
class MonitoringSettings(NotebookSettings):
    """Notebook 07's parameters as one typed, frozen object: the fields are its ``parameters`` cell, in order
    (``tests/test_notebook_settings.py`` keeps them equal); the notebook makes them once,
    ``S = MonitoringSettings.this_run(globals())``, and code elsewhere takes ``MonitoringSettings.for_profile(...)``
    (the values of the parameters cell and the profile file, the only defaults there are)."""

    NOTEBOOK: ClassVar[str] = "07_monitoring"
    #: the share of the clean set that is the reference (the rest is served clean)
    REFERENCE_SHARE: ClassVar[float] = 0.5

    profile: str
    seed: int
    torch_threads: int
    backbone: str  #: the CIFAR-10 ResNet of notebook 05 that is served
    chunk_size: int  #: rows per chunk (the reference half gives the band's chunks)
    ramp_type: str  #: the held-out corruption whose severity grows
    ramp_severities: list[int]
    label_ratios: list[float]  #: the label-shift period's imbalance ratios (smallest / largest class size)
    methods: list[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.chunk_size < 2:
            raise InputValidationError(f"chunk_size: expected an integer >= 2, got {self.chunk_size!r}")
        bad = [r for r in self.label_ratios if not 0 < float(r) < 1]
        if bad:
            raise InputValidationError(f"label_ratios: expected ratios in (0, 1), got {bad}")
        unknown = [m for m in self.methods if m not in _known_methods()]
        if unknown:
            raise InputValidationError(f"methods: unknown {unknown}; expected some of {sorted(_known_methods())}")


def _known_methods() -> set[str]:
    from helpers.estimators import list_estimators

    return set(list_estimators()) - {"agreement", "dispersion", "frechet", "stacked", "stacked_sota"}
