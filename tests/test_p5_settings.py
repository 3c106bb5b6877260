"""Notebook 05's typed settings: the fields are the notebook's parameters, and bad values fail where they are made."""

from __future__ import annotations

import dataclasses

import pytest

from helpers.errors import InputValidationError
from helpers.experiments.p5_mde.settings import MdeSettings, mde_settings
from helpers.experiments.p5_mde.setups import notebook_parameters
from helpers.run.notebook_params import declared_parameters
from helpers.run.profiles import notebooks_dir


def test_the_fields_are_the_parameters_of_notebook_05():
    declared = list(declared_parameters(notebooks_dir() / "05_mde.ipynb"))
    assert [f.name for f in dataclasses.fields(MdeSettings)] == declared


@pytest.mark.parametrize("profile", ["smoke", "default", "full"])
def test_every_profile_gives_valid_settings(profile):
    s = notebook_parameters(profile)
    assert isinstance(s, MdeSettings) and s.profile == "default"  # the parameters cell's value; the runner injects it
    assert mde_settings(s) is s and mde_settings(s.as_dict()) == s


def test_a_renamed_missing_or_mistyped_parameter_fails_when_the_settings_are_made():
    good = notebook_parameters("smoke").as_dict()
    renamed = {**{k: v for k, v in good.items() if k != "cifar_backbones"}, "cifar_backbone": [20]}
    with pytest.raises(InputValidationError, match=r"missing \['cifar_backbones'\], unknown \['cifar_backbone'\]"):
        MdeSettings.from_mapping(renamed)
    with pytest.raises(InputValidationError, match="cifar_n_per_set: expected int"):
        MdeSettings.from_mapping({**good, "cifar_n_per_set": "100"})
    with pytest.raises(InputValidationError, match=r"cifar_backbones\[\]: expected int"):
        MdeSettings.from_mapping({**good, "cifar_backbones": [20, True]})
    with pytest.raises(dataclasses.FrozenInstanceError):
        notebook_parameters("smoke").seed = 1
