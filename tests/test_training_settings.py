"""TrainSettings: one validated, frozen object says how every trainer trains."""

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.training import TrainSettings, fit


def _data(n=32, seed=0):
    g = np.random.default_rng(seed)
    x = g.normal(size=(n, 4)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int64)


def _model():
    torch.manual_seed(0)
    return nn.Linear(4, 2)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": 2.5}, "batch_size"),
        ({"epochs": -1}, "epochs"),
        ({"max_steps": 0}, "max_steps"),
        ({"lr": -1e-3}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"optimizer": "adagrad"}, "optimizer"),
        ({"scheduler": "exponential"}, "scheduler"),
        ({"checkpoint_dir": 3}, "checkpoint_dir"),
        ({"keep_checkpoints": 0}, "keep_checkpoints"),
    ],
)
def test_bad_settings_fail_where_they_are_made_naming_the_setting(bad, match):
    with pytest.raises(InputValidationError, match=match):
        TrainSettings(**bad)


def test_frozen_replace_validates_and_unknown_names_raise():
    s = TrainSettings(epochs=2, seed=np.int64(3), checkpoint_dir="ck", optimizer_kwargs={"betas": (0.9, 0.99)})
    assert s.seed == 3 and type(s.seed) is int  # a numpy seed becomes a plain int
    assert s.checkpoint_dir is not None and s.checkpoint_dir.name == "ck"
    assert s.optimizer_options() == {"betas": (0.9, 0.99)}
    hash(s)  # frozen and hashable, optimiser options included
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.epochs = 3
    assert s.replace(seed=4).seed == 4 and s.seed == 3
    with pytest.raises(InputValidationError, match="unknown setting.*'epoch'"):
        s.replace(epoch=3)  # a typo is caught, not ignored
    with pytest.raises(InputValidationError, match="batch_size"):
        s.replace(batch_size=-2)
    assert TrainSettings().total_epochs == 1 and TrainSettings(max_steps=5).total_epochs is None


def test_resolve_takes_defaults_settings_and_overrides():
    assert TrainSettings.resolve() == TrainSettings()
    base = TrainSettings(epochs=2, lr=0.1)
    assert TrainSettings.resolve(base) is base
    assert TrainSettings.resolve(base, lr=0.2) == TrainSettings(epochs=2, lr=0.2)
    with pytest.raises(InputValidationError, match="settings: expected a TrainSettings, got dict"):
        TrainSettings.resolve({"epochs": 2})


def test_fit_trains_the_same_from_settings_or_from_overrides():
    x, y = _data()
    a, b = _model(), _model()
    fit(a, (x, y), TrainSettings(epochs=2, batch_size=8, lr=0.05, seed=1, progress=False))
    fit(b, (x, y), epochs=2, batch_size=8, lr=0.05, seed=1, progress=False)
    for k, v in a.state_dict().items():
        torch.testing.assert_close(v, b.state_dict()[k], rtol=0, atol=0)
    c = _model()
    fit(c, (x, y), TrainSettings(epochs=2, batch_size=8, lr=0.05, seed=2, progress=False))
    assert not torch.equal(c.weight, a.weight)  # the seed is honoured: another data order, other weights


def test_fit_rejects_a_wrong_settings_object_and_an_unknown_keyword():
    x, y = _data()
    with pytest.raises(InputValidationError, match="settings: expected a TrainSettings"):
        fit(_model(), (x, y), {"epochs": 1})
    with pytest.raises(InputValidationError, match="unknown setting.*'learning_rate'"):
        fit(_model(), (x, y), learning_rate=0.1)
