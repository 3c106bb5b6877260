"""Notebook 05's parameters as one typed, frozen object, validated once where it is made.

The fields are the names of the notebook's ``parameters`` cell (``tests/test_p5_settings.py`` keeps the two equal),
so a parameter renamed in the notebook fails when notebook 05 or 06 builds its settings, not halfway through a run.
Values are kept as given (lists stay lists): the setups' cache keys are made from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from helpers.run.settings import NotebookSettings

__all__ = ["MdeSettings", "mde_settings"]


@dataclass(frozen=True)
class MdeSettings(NotebookSettings):
    """Notebook 05's parameters (see the notebook's parameters cell and ``notebooks/profiles/05_mde.yaml``)."""

    NOTEBOOK: ClassVar[str] = "05_mde"

    profile: str
    seed: int
    torch_threads: int
    T: float  #: temperature of the energy measures (paper 5, Eq. 3)
    temperatures: list[float]  #: the temperature sweep (paper 5, Table 9)
    imbalance_ratios: list[float]  #: label-shift stress test (paper 5, Fig. 3)
    cifar_backbones: list[int]  #: CIFAR ResNet depths
    cifar_base: str  #: "original" (lossless test images) or "jpeg"
    cifar_n_per_set: int
    cifar_n_reference: int
    batch_size: int
    cifar_threads: int
    cifar_fit_names: list[str]
    cifar_heldout_names: list[str]
    cifar_severities: list[int]
    cifar_heldout_severities: list[int]
    cifar_n_compositions: int
    cifar_n_heldout_compositions: int
    stress_names: list[str]
    stress_bases: list[str]
    stress_levels: list[int]
    digits_n_train: int
    digits_n_reference: int
    digits_epochs: int
    digits_severities: list[int]
    digits_n_compositions: int
    usps_n_train: int
    usps_n_reference: int
    text_models: list[str]
    text_n_train: int
    text_epochs: int
    text_minilm_n_train: int
    text_minilm_max_tokens: int
    text_n_per_set: int
    text_n_reference: int
    text_fit_names: list[str]
    text_heldout_names: list[str]
    text_severities: list[int]
    text_heldout_severities: list[int]
    text_n_compositions: int
    text_n_heldout_compositions: int


def mde_settings(p: MdeSettings | Mapping[str, Any]) -> MdeSettings:
    """``p`` itself, or the settings of a mapping of notebook 05's parameters (validated)."""
    return p if isinstance(p, MdeSettings) else MdeSettings.from_mapping(p)
