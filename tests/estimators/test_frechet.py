"""Fréchet distance between Gaussian fits of reference and target features (Deng & Zheng 2021)."""

import numpy as np
import pytest
from scipy.linalg import sqrtm

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import FrechetDistance, frechet_distance, frechet_distance_from_stats


def test_hand_computed_one_dimensional():
    # a = [0, 2]: mean 1, unbiased var 2 ; b = [3, 5, 7]: mean 5, var 4
    # FD = (1 - 5)^2 + 2 + 4 - 2 sqrt(2 * 4) = 16 + (sqrt 2 - 2)^2 = 16.3431...
    a = np.array([[0.0], [2.0]])
    b = np.array([[3.0], [5.0], [7.0]])
    assert frechet_distance(a, b) == pytest.approx(16 + (np.sqrt(2) - 2) ** 2)
    est = FrechetDistance().fit(features=a).measure(features=b)
    assert est.score == pytest.approx(16 + (np.sqrt(2) - 2) ** 2) and np.isnan(est.accuracy)


def test_identical_is_zero_and_symmetric():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(500, 8))
    b = rng.normal(size=(400, 8)) @ rng.normal(size=(8, 8)) + 1
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-9)
    assert frechet_distance(a, b) == pytest.approx(frechet_distance(b, a), rel=1e-9)


def test_matches_scipy_sqrtm_reference():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(300, 5))
    b = rng.normal(size=(300, 5)) @ rng.normal(size=(5, 5))
    mu1, mu2 = a.mean(0), b.mean(0)
    c1, c2 = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    ref = ((mu1 - mu2) ** 2).sum() + np.trace(c1 + c2 - 2 * sqrtm(c1 @ c2).real)
    assert frechet_distance(a, b) == pytest.approx(ref, rel=1e-8)
    assert frechet_distance_from_stats(mu1, c1, mu2, c2) == pytest.approx(ref, rel=1e-8)


def test_stable_for_singular_high_dimensional_covariances():
    # d = 300 features from only 50 rows: rank-deficient covariances, no NaN, non-negative
    rng = np.random.default_rng(2)
    a = rng.normal(size=(50, 300)).astype(np.float32)
    b = (rng.normal(size=(60, 300)) + 0.1).astype(np.float32)
    v = frechet_distance(a, b)
    assert np.isfinite(v) and v >= 0
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-3)


def test_logits_or_probs_as_features():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(200, 4))
    est = FrechetDistance().fit(logits=z)
    assert est.measure(logits=z).score == pytest.approx(0.0, abs=1e-9)
    assert est.measure(logits=z + 1.0).score == pytest.approx(4.0, rel=1e-9)  # mean shift of 1 in 4 dims


def test_bad_inputs():
    with pytest.raises(NotFittedError):
        FrechetDistance().measure(features=np.zeros((3, 2)))
    fitted = FrechetDistance().fit(features=np.random.default_rng(0).normal(size=(10, 3)))
    with pytest.raises(InputValidationError, match="feature-dimension mismatch"):
        fitted.measure(features=np.zeros((5, 4)))
    with pytest.raises(InputValidationError, match="features"):
        fitted.measure(features=np.array([[np.nan, 0, 0], [0, 0, 0]]))
    with pytest.raises(InputValidationError, match="features"):
        fitted.measure(features=np.zeros((1, 3)))  # one row: no covariance
    with pytest.raises(InputValidationError, match="exactly one"):
        fitted.measure(logits=np.zeros((5, 3)), probs=np.full((5, 3), 1 / 3))
    # the model outputs beside the features (as the common keywords pass them) are not used: the features decide
    x = np.random.default_rng(1).normal(size=(6, 3))
    assert fitted.measure(features=x, logits=np.zeros((6, 3))).score == fitted.measure(features=x).score
    with pytest.raises(InputValidationError, match="features_b"):
        frechet_distance(np.zeros((4, 2)), np.zeros((4, 3)))
