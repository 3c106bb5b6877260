"""Defects found by independent reference implementations (issue: one estimator contract), each pinned by a test."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import ATC, MDE, FrechetDistance, average_confidence, free_energy, mde, softmax
from helpers.estimators.atc import atc_accuracy
from helpers.estimators.bootstrap import percentile_interval, resampled_means


def _confident(n: int, acc: float, lead: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 logits whose top class leads by ``lead`` on every row; ``acc`` of the predictions are right."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 10)).astype(np.float32)
    pred = rng.integers(0, 10, n)
    z[np.arange(n), pred] += np.float32(lead) + rng.uniform(0, 10, n).astype(np.float32)
    labels = np.where(rng.random(n) < acc, pred, (pred + 1) % 10)
    return z, labels


def test_atc_on_confident_float32_logits_matches_float64():
    # a float32 softmax rounds max-prob to 1.0 once the top logit leads by ~17: fit and estimate must agree
    z, y = _confident(4000, 0.95, 20.0, 0)
    est32 = ATC().fit(logits=z[:2000], labels=y[:2000]).estimate(logits=z[2000:]).accuracy
    est64 = (
        ATC()
        .fit(logits=z[:2000].astype(np.float64), labels=y[:2000])
        .estimate(logits=z[2000:].astype(np.float64))
        .accuracy
    )
    assert est32 == pytest.approx(est64, abs=1e-12)
    assert est32 == pytest.approx(0.95, abs=0.03)


def test_mde_bootstrap_survives_one_huge_energy():
    # one example's energy ~800 above the rest: resamples that miss it must not underflow to -inf and vanish
    z = np.random.default_rng(0).normal(size=(500, 3))
    z[0] = -800.0
    est = MDE().fit(logits=z).measure(logits=z, interval=True)
    e = free_energy(z)
    rng = np.random.default_rng(0)
    reps = []
    for _ in range(400):  # plain resampling, each with its own log-sum-exp
        x = e[rng.integers(0, 500, 500)]
        reps.append(np.logaddexp.reduce(x) - x.mean())
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert est.details["score_lower"] == pytest.approx(lo, rel=0.05)
    assert est.details["score_upper"] == pytest.approx(hi, rel=0.01)


def test_mde_bootstrap_unchanged_on_ordinary_energies():
    z = np.random.default_rng(1).normal(size=(300, 4))
    est = MDE().fit(logits=z).measure(logits=z, interval=True)
    assert est.details["score_lower"] < est.score < est.details["score_upper"]


@pytest.mark.parametrize("T", [0.5, 0.1])
def test_energy_and_softmax_finite_near_float_max(T):
    big = np.finfo(np.float64).max / 2
    z = np.array([[big, 0.0, -big], [1.0, 2.0, 3.0]])
    e = free_energy(z, T=T)
    assert np.isfinite(e).all() and e[0] == pytest.approx(-big)
    assert np.isfinite(mde(z, T=T))
    p = softmax(z, T=T)
    assert np.allclose(p[0], [1.0, 0.0, 0.0]) and np.allclose(p.sum(1), 1.0)


def test_frechet_refuses_a_different_input_kind():
    x = np.random.default_rng(0).normal(size=(50, 3))
    f = FrechetDistance().fit(features=x)
    with pytest.raises(InputValidationError, match="features="):
        f.estimate(logits=x)


@pytest.mark.parametrize("bad", [np.ones((4, 3), dtype=complex), np.ones((4, 3), dtype=bool)])
def test_complex_and_bool_logits_are_refused(bad):
    with pytest.raises(InputValidationError, match="logits"):
        MDE().fit(logits=bad)


def test_average_confidence_refuses_values_above_one():
    with pytest.raises(InputValidationError, match=r"\[0, 1\]"):
        average_confidence(np.array([0.5, 2.0, 0.9]))


def test_atc_labels_and_correct_must_agree():
    z = np.array([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    with pytest.raises(InputValidationError, match="disagree on 1"):
        ATC().fit(logits=z, labels=[0, 1, 1], correct=[1, 1, 1])
    ATC().fit(logits=z, labels=[0, 1, 1], correct=[1, 1, 0])  # agreeing: accepted


def test_atc_accuracy_refuses_nan_threshold():
    with pytest.raises(InputValidationError, match="threshold"):
        atc_accuracy(np.array([0.2, 0.9]), float("nan"))


def test_resampled_means_refuses_zero_resamples():
    with pytest.raises(InputValidationError, match="n_boot"):
        resampled_means(np.ones(5), n_boot=0)


def test_interval_must_be_a_bool():
    z = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(InputValidationError, match="interval"):
        MDE().fit(logits=z).estimate(logits=z, interval="no")


def test_percentile_interval_level_in_unit_interval():
    with pytest.raises(InputValidationError, match=r"must be in \(0, 1\)"):
        percentile_interval(np.arange(10.0), level=95)
