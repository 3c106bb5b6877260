"""Dispersion score (Xie et al. 2023): between-class dispersion of the pseudo-label clusters in feature space."""

import numpy as np
import pytest

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import Dispersion, dispersion_score, get_estimator


def _logits_for(pred, k):
    z = np.zeros((len(pred), k))
    z[np.arange(len(pred)), pred] = 5.0
    return z


def test_hand_computed_case():
    # 1-d features; class 0: {0, 2} (mean 1), class 1: {4} (mean 4), class 2 never predicted; overall mean 2
    # Σ n_k (μ_k − μ)² = 2·1 + 1·4 = 6; K − 1 = 2 -> S = log 3
    x = np.array([[0.0], [2.0], [4.0]])
    z = _logits_for([0, 0, 1], 3)
    assert dispersion_score(x, z) == pytest.approx(np.log(3.0))
    # the authors' code divides by (classes predicted − 1) = 1: log 6; the paper's K − 1 is used here
    assert dispersion_score(x, z) != pytest.approx(np.log(6.0))


def test_matches_the_direct_formula_and_grows_with_separation():
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 4, 300)
    centres = rng.normal(size=(4, 8)) * 3
    x = centres[pred] + rng.normal(size=(300, 8))
    z = _logits_for(pred, 4)
    mu = x.mean(0)
    direct = sum((pred == k).sum() * np.sum((x[pred == k].mean(0) - mu) ** 2) for k in range(4))
    assert dispersion_score(x, z) == pytest.approx(np.log(direct / 3))
    tight = centres[pred] * 0.2 + rng.normal(size=(300, 8))  # clusters closer together
    assert dispersion_score(tight, z) < dispersion_score(x, z)


def test_one_predicted_class_has_no_dispersion():
    x = np.random.default_rng(1).normal(size=(10, 3))
    assert dispersion_score(x, _logits_for([2] * 10, 3)) == -np.inf


def test_estimator_line_interval_and_registry():
    rng = np.random.default_rng(2)

    def shifted_set(sep, seed):
        g = np.random.default_rng(seed)
        y = g.integers(0, 3, 400)
        x = np.eye(3)[y] * sep + g.normal(size=(400, 3))
        return {"features": x, "logits": x * 2, "labels": y}

    shifted = {f"s{s}": shifted_set(s, i) for i, s in enumerate((0.5, 1.0, 2.0, 3.0))}
    est = get_estimator("dispersion", n_boot=50).fit(shifted=shifted)
    assert isinstance(est, Dispersion)
    target = shifted_set(1.5, 9)
    res = est.estimate(features=target["features"], logits=target["logits"], interval=True)
    assert 0 <= res.accuracy <= 1 and res.lower <= res.upper
    assert np.isfinite(res.score) and res.method == "dispersion"
    with pytest.raises(NotFittedError, match="shifted="):
        Dispersion().estimate(features=target["features"], logits=target["logits"])
    raw = Dispersion().measure(features=target["features"], logits=target["logits"])
    assert raw.score == pytest.approx(dispersion_score(target["features"], target["logits"]))
    del rng


def test_bad_input_names_the_missing_features():
    z = _logits_for([0, 1, 1], 2)
    with pytest.raises(InputValidationError, match="features: Dispersion needs the penultimate features"):
        Dispersion().measure(logits=z)
    with pytest.raises(InputValidationError, match="features: expected 3 rows"):
        Dispersion().measure(logits=z, features=np.zeros((2, 4)))
    with pytest.raises(InputValidationError, match="features"):
        Dispersion().measure(logits=z, features=np.array([[0.0], [np.nan], [1.0]]))
