"""MaNo (Xie et al., NeurIPS 2024): hand-computed cases, both normalisations, a torch reference, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.errors import InputValidationError
from helpers.estimators import MaNo, get_estimator, mano_criterion, mano_normalize, mano_score


def test_hand_computed_taylor_case():
    """Z = [[2, 0], [0, 0]]: Φ = (1.126928 + 0.693147) / 2 < 5, so Taylor: v = [5, 1] -> [1, 0]; the second row has
    no spread -> uniform; S = ((1 + 0.5⁴ + 0.5⁴) / 4)^(1/4) = 0.28125^(1/4)."""
    z = np.array([[2.0, 0.0], [0.0, 0.0]])
    phi = ((2 + np.log1p(np.exp(-2.0)) - 1.0) + np.log(2.0)) / 2
    assert mano_criterion(z) == pytest.approx(phi, abs=1e-12)
    np.testing.assert_allclose(mano_normalize(z, use_softmax=False), [[1.0, 0.0], [0.5, 0.5]])
    score, got_phi = mano_score(z)
    assert score == pytest.approx(0.28125**0.25, abs=1e-12) and got_phi == pytest.approx(phi)


def test_hand_computed_softmax_case():
    """Z = [[12, 0], [0, 12]]: Φ = logsumexp(12, 0) − 6 ≈ 6.000006 > 5, so softmax rows (q, 1 − q)."""
    z = np.array([[12.0, 0.0], [0.0, 12.0]])
    q = 1.0 / (1.0 + np.exp(-12.0))
    assert mano_criterion(z) > 5.0
    score, _ = mano_score(z)
    assert score == pytest.approx(((2 * (q**4 + (1 - q) ** 4)) / 4) ** 0.25, abs=1e-12)


def _reference(z: np.ndarray, p: float = 4.0, eta: float = 5.0) -> float:
    """The paper's steps in torch, on rows with spread (the authors' F.cross_entropy / F.normalize calls)."""
    t = torch.from_numpy(z).double()
    k = t.shape[1]
    phi = F.cross_entropy(t, torch.full_like(t, 1.0 / k)).item()
    if phi > eta:
        s = torch.softmax(t, dim=1)
    else:
        v = 1 + t + t**2 / 2
        s = F.normalize(v - v.min(dim=1, keepdim=True).values, p=1, dim=1)
    return (torch.linalg.vector_norm(s, ord=p) / (t.numel() ** (1 / p))).item()


@pytest.mark.parametrize("scale", [0.3, 1.0, 8.0])  # Taylor, Taylor, softmax
def test_matches_a_torch_reference_in_both_branches(scale):
    rng = np.random.default_rng(3)
    z = rng.normal(scale=scale, size=(500, 7))
    score, phi = mano_score(z)
    assert (phi > 5.0) == (scale == 8.0)
    assert score == pytest.approx(_reference(z), rel=1e-10)


def test_score_spans_one_over_k_to_k_to_the_minus_one_over_p_and_rises_with_confidence():
    z = np.eye(5)[np.arange(50) % 5] * 40.0  # one-hot rows (softmax branch)
    assert mano_score(z)[0] == pytest.approx(5 ** -0.25, abs=1e-9)
    assert mano_score(np.zeros((50, 5)))[0] == pytest.approx(1 / 5, abs=1e-12)  # uniform rows
    rng = np.random.default_rng(0)
    base = rng.normal(size=(400, 10))
    assert mano_score(base * 0.2)[0] < mano_score(base * 0.6)[0]  # within the Taylor branch


def test_estimator_contract_interval_and_line():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(300, 4)).astype(np.float32)
    est = get_estimator("mano").fit(logits=z)
    m = est.measure(logits=z, interval=True)
    assert m.score == pytest.approx(mano_score(z)[0], rel=1e-6)
    assert m.details["score_lower"] <= m.score <= m.details["score_upper"]
    assert m.details["normalization"] == "taylor"
    sets = {}
    for i, s in enumerate((0.5, 1.0, 2.0, 4.0)):
        y = rng.integers(0, 4, 300)
        zz = rng.normal(size=(300, 4)) * s
        zz[np.arange(300), y] += 1.0 + s
        sets[f"s{i}"] = (zz, y)
    acc = MaNo().fit(logits=z, shifted=sets).estimate(logits=z).accuracy
    assert 0.0 <= acc <= 1.0


def test_bad_input_names_the_argument():
    z = np.zeros((10, 3))
    with pytest.raises(InputValidationError, match="needs logits="):
        MaNo().fit(probs=np.full((10, 3), 1 / 3))
    with pytest.raises(InputValidationError, match="p: expected a number >= 1"):
        MaNo(p=0.5).fit(logits=z)
    with pytest.raises(InputValidationError, match="logits"):
        MaNo().fit(logits=np.full((10, 3), np.nan))
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        MaNo().fit(logits=z).measure(logits=np.zeros((10, 4)))


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0, 10.0])
def test_the_fused_estimator_path_equals_the_step_by_step_score(scale):
    """The estimator's one-pass criterion/softmax and its Taylor power sums without forming σ give the score of the
    paper's steps (mano_score), in both branches and with rows that have no spread."""
    rng = np.random.default_rng(1)
    z = (rng.normal(size=(5000, 7)) * scale).astype(np.float32)
    z[:3] = 0.0
    assert MaNo().measure(logits=z).score == pytest.approx(mano_score(z)[0], rel=1e-6)
