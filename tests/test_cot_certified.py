"""COT's exact N x K transport with a duality-gap certificate equals POT's network simplex (issue: COT speed)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.estimators import COT, softmax
from helpers.estimators.cot import _certified_transport


@pytest.mark.parametrize("n,k,seed", [(2000, 10, 0), (3000, 5, 1), (1500, 20, 2), (600, 3, 3), (4000, 2, 4)])
def test_certified_transport_equals_pot(n, k, seed):
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(seed)
    z = 2.0 * rng.normal(size=(n, k))
    z[np.arange(n), rng.integers(0, k, n)] += 3.0
    cost = 1.0 - softmax(z)
    a = rng.integers(1, 4, n).astype(np.float64)  # uneven row masses, as the bootstrap's counts give
    a /= a.sum()
    b = rng.dirichlet(3.0 * np.ones(k))
    ref = ot.emd2(a, b, cost, numItermax=10**9)
    val, info = _certified_transport(cost, a, b)
    assert val == pytest.approx(ref, abs=1e-6)
    assert abs(info["duality_gap"]) <= 1e-9


def test_certified_transport_with_ties_falls_back_exactly():
    ot = pytest.importorskip("ot")
    cost = np.tile([0.0, 1.0, 1.0], (300, 1))  # every row prefers atom 0, which can hold only a third
    a = np.full(300, 1 / 300)
    b = np.array([1 / 3, 1 / 3, 1 / 3])
    val, _ = _certified_transport(cost, a, b)
    assert val == pytest.approx(ot.emd2(a, b, cost), abs=1e-9) and val == pytest.approx(2 / 3)


def test_large_target_uses_the_certified_route_and_matches_batch_free_pot():
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(5)
    n, k = 30_000, 10
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) * 2.0
    z[np.arange(n), y] += 3.0
    est = COT().fit(labels=y, logits=z)
    e = est.estimate(logits=z)
    ref = 1.0 - ot.emd2(
        np.full(n, 1 / n), np.bincount(y, minlength=k) / n, 1.0 - softmax(z), numItermax=10**9
    )
    assert e.accuracy == pytest.approx(ref, abs=1e-6)


def test_nested_sub_problem_is_certified_and_equals_pot(monkeypatch):
    """With a small ``_SUB_SMALL`` the ambiguous rows are solved by a second certified level, not the simplex."""
    ot = pytest.importorskip("ot")
    from helpers.estimators import cot as cot_module

    monkeypatch.setattr(cot_module, "_SUB_SMALL", 100)
    rng = np.random.default_rng(7)
    n, k = 6000, 6
    z = 2.0 * rng.normal(size=(n, k))
    z[np.arange(n), rng.integers(0, k, n)] += 3.0
    cost = 1.0 - softmax(z)
    a = np.full(n, 1 / n)
    b = rng.dirichlet(3.0 * np.ones(k))
    val, info = _certified_transport(cost, a, b)
    assert info["simplex_rows"] < info["ambiguous_rows"]
    assert val == pytest.approx(ot.emd2(a, b, cost, numItermax=10**9), abs=1e-9)
    assert abs(info["duality_gap"]) <= 1e-9
