"""Notebook 06 builds its CIFAR / digits / IMDb tasks from notebook 05's setups, so it reads 05's cache."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.experiments import p5_mde as me
from helpers.experiments.p6_benchmark import producers


def _data_present() -> bool:
    from helpers.paths import data_dir

    return (data_dir() / "vision" / "usps").is_dir()


def test_notebook_parameters_are_notebook_05s_with_profile_and_overrides():
    smoke, default = me.notebook_parameters("smoke"), me.notebook_parameters("default")
    assert smoke.cifar_backbones == [20] and default.cifar_backbones == [20, 32]  # profiles/05_mde.yaml
    assert me.notebook_parameters("smoke", digits_epochs=1).digits_epochs == 1
    with pytest.raises(InputValidationError, match="not parameters of notebook 05_mde"):
        me.notebook_parameters("smoke", cifar_backbone=[20])  # a typo is refused, not ignored


@pytest.mark.skipif(not _data_present(), reason="real data not found: set HELPERS_DATA")
def test_benchmark_reuses_notebook_05s_cached_logits(monkeypatch, tmp_path):
    monkeypatch.setenv("HELPERS_CACHE", str(tmp_path))  # a cold cache of its own
    import helpers.experiments.p5_mde.setups as setups

    calls = []
    real = setups.features_and_logits
    monkeypatch.setattr(setups, "features_and_logits", lambda *a, **k: calls.append(1) or real(*a, **k))
    p = me.notebook_parameters("smoke", digits_epochs=1, digits_severities=[1], digits_n_compositions=1,
                               cifar_fit_names=["gaussian_noise", "fog"], cifar_heldout_names=["zoom_blur", "saturate"])  # fmt: skip
    frame, outputs, _ = me.digits_setup(p).frame(progress=False)  # what notebook 05 runs
    n_05 = len(calls)
    assert n_05 > 0 and set(frame.backbone) == {"cnn-seed0", "cnn-seed1"}
    tasks = producers.digits_tasks(p, directions=["digits->usps"], progress=False)  # what notebook 06 runs
    assert len(calls) == n_05, "notebook 06 recomputed outputs that notebook 05 had cached"
    task = tasks[0]
    heldout = set(frame[(frame.split == "heldout") & (frame.family == "corruption")].set)  # 05's held-out types
    assert task.name == "digits->usps/cnn-seed0" and set(task.targets) == {"usps-histogram", "usps-linear"} | heldout
    assert {task.family_of(s) for s in heldout} == {"digit-corruptions"} and task.family_of("usps-linear") == "digits-usps"
    np.testing.assert_array_equal(task.targets["usps-linear"].logits, outputs["cnn-seed0"]["usps-linear"]["logits"])
    assert set(task.meta) == {s for s in frame[frame.split == "fit"].set}
    producers.digits_tasks({**p.as_dict(), "digits_epochs": 2}, directions=["digits->usps"], progress=False)
    assert len(calls) > n_05  # other parameters: other models, other cache entries
