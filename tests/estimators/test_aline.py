"""ALine-S / ALine-D (Baek et al. 2022, §4): a hand-computed collection, the pair system, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from helpers.errors import InputValidationError
from helpers.estimators import get_estimator
from helpers.estimators.aline import aline_accuracies

ID_PRED = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 1], [0, 1, 1, 1, 1]])
ID_Y = np.array([0, 1, 1, 0, 1])
OOD_PRED = np.array([[0, 1, 1, 0], [0, 1, 0, 0], [1, 1, 1, 0]])


def test_aline_s_by_hand():
    """ID accuracies 1 (clipped to 1 - 1/10), .8, .8; ID agreements .8, .8, .6; OOD agreements .75, .75, .5.
    The probit agreement line through (Φ⁻¹(.8), Φ⁻¹(.75)) and (Φ⁻¹(.6), 0): a = Φ⁻¹(.75) / (Φ⁻¹(.8) − Φ⁻¹(.6))."""
    a = norm.ppf(0.75) / (norm.ppf(0.8) - norm.ppf(0.6))
    b = -a * norm.ppf(0.6)
    want = norm.cdf(a * norm.ppf([0.9, 0.8, 0.8]) + b)
    np.testing.assert_allclose(aline_accuracies(ID_PRED, ID_Y, OOD_PRED, method="s"), want, rtol=1e-12)
    np.testing.assert_allclose(want, [0.8808, 0.75, 0.75], atol=1e-4)


def test_aline_d_solves_the_pair_equations_by_least_squares():
    """Four models: six pair equations ½(x_i + x_j) = Φ⁻¹(agr_OOD) + a(½(Φ⁻¹acc_i + Φ⁻¹acc_j) − Φ⁻¹agr_ID),
    solved here directly with the slope of the agreement line."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 400)
    id_pred = np.stack([np.where(rng.random(400) < q, y, rng.integers(0, 3, 400)) for q in (0.9, 0.8, 0.7, 0.6)])
    ood_pred = np.stack([np.where(rng.random(300) < q, 0, rng.integers(0, 3, 300)) for q in (0.7, 0.6, 0.5, 0.4)])
    i, j = np.triu_indices(4, 1)
    agr_id = norm.ppf((id_pred[i] == id_pred[j]).mean(axis=1))
    agr_ood = norm.ppf((ood_pred[i] == ood_pred[j]).mean(axis=1))
    a = np.polyfit(agr_id, agr_ood, 1)[0]
    acc = norm.ppf((id_pred == y).mean(axis=1))
    design = np.zeros((6, 4))
    design[np.arange(6), i] = design[np.arange(6), j] = 0.5
    x = np.linalg.lstsq(design, agr_ood + a * (0.5 * (acc[i] + acc[j]) - agr_id), rcond=None)[0]
    np.testing.assert_allclose(aline_accuracies(id_pred, y, ood_pred, method="d"), norm.cdf(x), rtol=1e-10)
    assert not np.allclose(aline_accuracies(id_pred, y, ood_pred, method="s"), norm.cdf(x))


def test_the_estimators_read_the_collection_and_refuse_too_few_models():
    rng = np.random.default_rng(0)
    z = {m: rng.normal(size=(50, 3)) for m in "abcd"}
    t = {m: rng.normal(size=(40, 3)) for m in "abcd"}
    y = rng.integers(0, 3, 50)
    est = get_estimator("aline_d").fit(logits=z["a"], labels=y, others={m: z[m] for m in "bcd"})
    out = est.estimate(logits=t["a"], others={m: t[m] for m in "bcd"}, interval=True)
    assert out.lower <= out.accuracy <= out.upper and out.n == 40 and out.details["models"] == 4
    with pytest.raises(InputValidationError, match="^others: expected a dict of at least 2"):
        get_estimator("aline_s").fit(logits=z["a"], labels=y, others={"b": z["b"]})
    with pytest.raises(InputValidationError, match="^others: expected the models given to fit"):
        est.estimate(logits=t["a"], others={"b": t["b"], "c": t["c"], "x": t["d"]})
    with pytest.raises(InputValidationError, match="^models: ALine needs at least 3"):
        aline_accuracies(ID_PRED[:2], ID_Y, OOD_PRED[:2])
    with pytest.raises(InputValidationError, match="^method: expected 's'"):
        aline_accuracies(ID_PRED, ID_Y, OOD_PRED, method="x")
