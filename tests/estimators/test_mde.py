"""MDE (paper 5): logsumexp_n(E_n) - mean_n(E_n) over the samples of a set, E = -T logsumexp(f / T)."""

import numpy as np
import pytest
from scipy.special import log_softmax

from helpers.errors import InputValidationError
from helpers.estimators import MDE, free_energy, get_estimator, mde


def test_hand_computed():
    # row 1: logits [0, 0]     -> E1 = -log 2
    # row 2: logits [log 3, 0] -> E2 = -log(3 + 1) = -log 4
    # logsumexp(E) = log(1/2 + 1/4) = log 0.75 ; mean(E) = -(log 2 + log 4)/2 = -1.5 log 2
    # MDE = log 0.75 + 1.5 log 2 = log(0.75 * 2**1.5) = 0.75204...
    z = np.array([[0.0, 0.0], [np.log(3.0), 0.0]])
    np.testing.assert_allclose(free_energy(z), [-np.log(2), -np.log(4)])
    expected = np.log(0.75 * 2**1.5)
    assert mde(z) == pytest.approx(expected)
    assert mde(z, normalize=True) == pytest.approx(expected - np.log(2))
    est = MDE().measure(logits=z)
    assert est.score == pytest.approx(expected) and np.isnan(est.accuracy) and est.method == "mde"
    assert get_estimator("mde_normalized").measure(logits=z).score == pytest.approx(expected - np.log(2))


def test_equals_negative_mean_log_softmax_over_samples():
    # the authors' code: -mean(log_softmax(E)) with the softmax over the N samples
    rng = np.random.default_rng(0)
    z = rng.normal(size=(300, 7)) * 3
    for T in (0.5, 1.0, 2.0):
        E = -T * np.log(np.exp(z / T).sum(axis=1))
        assert mde(z, T=T) == pytest.approx(-log_softmax(E).mean())


def test_at_least_log_n_and_zero_normalised_for_equal_energies():
    rng = np.random.default_rng(1)
    for n in (1, 2, 10, 1000):
        z = rng.normal(size=(n, 5)) * 4
        assert mde(z) >= np.log(n) - 1e-12
    # every row a permutation of the same logits -> all energies equal -> MDE = log N exactly
    base = np.array([2.0, -1.0, 0.5])
    z = np.stack([np.roll(base, k) for k in range(30)])
    assert mde(z) == pytest.approx(np.log(30), abs=1e-12)
    assert mde(z, normalize=True) == pytest.approx(0.0, abs=1e-12)


def test_paper_scale_on_50k_sets():
    # paper 5 Fig. 2 reports MDE ~ 11-16 on 50,000-image sets: log(50000) = 10.8 plus the spread term
    rng = np.random.default_rng(2)
    z = rng.normal(size=(50000, 10)).astype(np.float32) * 3
    z[np.arange(50000), rng.integers(0, 10, 50000)] += 8
    v = mde(z)
    assert np.log(50000) < v < 17


def test_small_temperature_limit_theorem_3_1():
    # E(T) -> -max_k f_k with |E + max f| <= T log K, hence |MDE(T) - MDE(max-logit energies)| <= 2 T log K
    rng = np.random.default_rng(3)
    K = 8
    z = rng.normal(size=(500, K)) * 2
    E0 = -z.max(axis=1)
    mde0 = float(np.log(np.exp(E0).sum()) - E0.mean())
    for T in (1e-1, 1e-2, 1e-3):
        assert np.abs(free_energy(z, T=T) - E0).max() <= T * np.log(K) + 1e-12
        assert abs(mde(z, T=T) - mde0) <= 2 * T * np.log(K) + 1e-9
    # Theorem 3.1's per-sample gap Delta_i = f_{y_i}/T - logsumexp(f/T) = (f_{y_i} + E_i)/T:
    # T * Delta_i -> f_{y_i} - max_k f_k, which is 0 iff the prediction is correct and < 0 otherwise,
    # so the sign of Delta at small T recovers the classification accuracy.
    y = rng.integers(0, K, 500)
    T = 1e-3
    t_delta = z[np.arange(500), y] + free_energy(z, T=T)
    np.testing.assert_allclose(t_delta, z[np.arange(500), y] - z.max(axis=1), atol=T * np.log(K))
    recovered = float((t_delta > -10 * T * np.log(K)).mean())
    assert recovered == pytest.approx(float((z.argmax(1) == y).mean()))


def test_float32_large_logits_are_stable():
    z = np.array([[1000.0, 0.0], [-1000.0, -999.0]], dtype=np.float32)
    assert np.isfinite(mde(z))


def test_bad_inputs():
    with pytest.raises(InputValidationError, match="logits"):
        MDE().measure(probs=np.array([[0.5, 0.5]]))  # energies need logits
    with pytest.raises(InputValidationError, match="T"):
        MDE(T=0).measure(logits=np.zeros((2, 2)))
    with pytest.raises(InputValidationError, match="logits"):
        mde(np.array([[np.nan, 1.0]]))
    with pytest.raises(InputValidationError, match="logits"):
        mde(np.zeros((0, 3)))
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        MDE().fit(logits=np.zeros((2, 3))).measure(logits=np.zeros((2, 4)))


def test_mde_parts_hand_computed():
    """Rows [0, 0] and [log 3, 0]: E = (-log 2, -log 4); AvgEnergy = 1.5 log 2; soft part = log((1/2 + 1/4) / 2)
    = log(3/8); their sum is MDE - log 2 = log(3/4) + 1.5 log 2 - log 2."""
    from helpers.estimators import mde_parts

    logits = np.array([[0.0, 0.0], [np.log(3.0), 0.0]])
    parts = mde_parts(logits)
    assert parts["avg_energy"] == pytest.approx(1.5 * np.log(2))
    assert parts["soft_max_energy"] == pytest.approx(np.log(3 / 8))
    assert parts["mde_normalized"] == pytest.approx(np.log(0.75) + 0.5 * np.log(2))
    assert parts["mde_normalized"] == pytest.approx(mde(logits, normalize=True))


def test_mde_parts_cancel_under_a_uniform_energy_shift():
    """Adding c to every logit lowers every energy by c: AvgEnergy rises by c, the soft part falls by c, MDE stays."""
    from helpers.estimators import mde_parts

    z = np.random.default_rng(0).normal(size=(50, 10))
    a, b = mde_parts(z), mde_parts(z + 2.5)
    assert b["avg_energy"] - a["avg_energy"] == pytest.approx(2.5)
    assert b["soft_max_energy"] - a["soft_max_energy"] == pytest.approx(-2.5)
    assert b["mde_normalized"] == pytest.approx(a["mde_normalized"])
