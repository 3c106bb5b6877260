"""Average Energy (paper 5): -mean E = mean T logsumexp(f / T)."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import AverageEnergy, average_energy


def test_hand_computed():
    # rows [0, 0] -> log 2 ; [log 3, 0] -> log 4 ; mean = 1.5 log 2
    z = np.array([[0.0, 0.0], [np.log(3.0), 0.0]])
    assert average_energy(z) == pytest.approx(1.5 * np.log(2))
    est = AverageEnergy().measure(logits=z)
    assert est.score == pytest.approx(1.5 * np.log(2)) and np.isnan(est.accuracy)
    # T = 2: 2 * log(2 e^0) = 2 log 2 ; 2 * log(3**0.5 + 1) ; mean
    assert average_energy(z, T=2.0) == pytest.approx((2 * np.log(2) + 2 * np.log(np.sqrt(3) + 1)) / 2)


def test_temperature_scaling_monotonicity_and_bounds():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 6)) * 2
    # homogeneity: AvgEnergy(c f; c T) = c AvgEnergy(f; T)
    for c in (0.5, 3.0):
        assert average_energy(c * z, T=c * 1.3) == pytest.approx(c * average_energy(z, T=1.3))
    # increasing in T (its derivative is the softmax entropy), between mean max-logit and that + T log K
    ts = [0.01, 0.1, 1.0, 10.0]
    vals = [average_energy(z, T=t) for t in ts]
    assert all(a < b for a, b in zip(vals, vals[1:]))
    for t, v in zip(ts, vals):
        assert z.max(1).mean() <= v <= z.max(1).mean() + t * np.log(6) + 1e-12
    # large T: T logsumexp(f/T) ~ T log K + mean_k f
    assert average_energy(z, T=1e4) == pytest.approx(1e4 * np.log(6) + z.mean(), rel=1e-6)


def test_regressor_maps_score_to_accuracy():
    z = np.array([[0.0, 0.0], [np.log(3.0), 0.0]])
    est = AverageEnergy(regressor=lambda s: 0.1 * s).estimate(logits=z)
    assert est.accuracy == pytest.approx(0.15 * np.log(2))


def test_bad_inputs():
    with pytest.raises(InputValidationError, match="logits"):
        AverageEnergy().measure(probs=np.array([[0.5, 0.5]]))
    with pytest.raises(InputValidationError, match="logits"):
        AverageEnergy().measure()
    with pytest.raises(InputValidationError, match="T"):
        average_energy(np.zeros((2, 2)), T=-1.0)
    with pytest.raises(InputValidationError, match="logits"):
        average_energy(np.zeros((2, 2, 2)))
