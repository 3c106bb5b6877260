"""Nuclear norm (Deng et al. 2023): ||P||_* / sqrt(min(N, K) N)."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import NuclearNorm, nuclear_norm_score, softmax


def test_hand_computed():
    # identity: singular values 1, 1 -> 2 / sqrt(2 * 2) = 1
    assert nuclear_norm_score(np.eye(2)) == pytest.approx(1.0)
    # both rows one-hot on class 0: P^T P = [[2, 0], [0, 0]] -> sqrt 2 / sqrt(2 * 2) = 0.7071
    assert nuclear_norm_score(np.array([[1.0, 0.0], [1.0, 0.0]])) == pytest.approx(np.sqrt(2) / 2)
    # uniform rows: rank 1, sigma = sqrt(N K) / K -> score 1/K (N >= K)
    assert nuclear_norm_score(np.full((8, 4), 0.25)) == pytest.approx(0.25)


def test_matches_numpy_nuclear_norm():
    rng = np.random.default_rng(0)
    for n, k in ((50, 5), (3, 7), (200, 100)):
        p = softmax(rng.normal(size=(n, k)) * 2)
        ref = np.linalg.norm(p, "nuc") / np.sqrt(min(n, k) * n)
        assert nuclear_norm_score(p) == pytest.approx(ref, rel=1e-9)
        # float32 input with many classes takes float32 chunk products summed in float64
        assert nuclear_norm_score(p.astype(np.float32)) == pytest.approx(ref, rel=1e-5)


def test_range_and_exact_maximum():
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = softmax(rng.normal(size=(30, 6)) * rng.uniform(0.1, 10))
        assert 0.0 < nuclear_norm_score(p) <= 1.0 + 1e-12
    # max 1 is reached by one-hot rows with perfectly balanced classes (N >= K) ...
    balanced = np.eye(3)[np.repeat(np.arange(3), 4)]
    assert nuclear_norm_score(balanced) == pytest.approx(1.0)
    # ... and by N < K one-hot rows on distinct classes; unbalanced one-hot rows stay below 1
    assert nuclear_norm_score(np.eye(5)[:3]) == pytest.approx(1.0)
    unbalanced = np.eye(3)[[0, 0, 0, 0, 1, 2]]
    assert nuclear_norm_score(unbalanced) < 1.0


def test_estimator_is_a_score():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(100, 4))
    est = NuclearNorm().measure(logits=z)
    assert np.isnan(est.accuracy)
    assert est.score == pytest.approx(nuclear_norm_score(softmax(z)))


def test_bad_inputs():
    with pytest.raises(InputValidationError, match="probs"):
        nuclear_norm_score(np.array([[0.3, 0.3]]))
    with pytest.raises(InputValidationError, match="probs"):
        nuclear_norm_score(np.array([[1.5, -0.5]]))
    with pytest.raises(InputValidationError, match="logits"):
        NuclearNorm().measure(logits=np.ones(3))
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        NuclearNorm().fit(probs=np.eye(3)).measure(probs=np.eye(2))
