"""COTT (Lu et al. 2023, Sec. 4.2): per-sample transport costs thresholded on the reference."""

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import COTT, cot_error, get_estimator, softmax, transport_row_costs
from helpers.estimators.cot import _SMALL

REF_P = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]])
REF_Y = np.array([0, 0, 1, 0])  # the last prediction is wrong; pi = (3/4, 1/4)
TGT_P = np.array([[0.95, 0.05], [0.5, 0.5], [0.35, 0.65], [0.2, 0.8]])


def test_hand_computed_case():
    # reference: atom 1 (mass 1/4) takes the row with the lowest c_i1 - c_i0 (row 3: -.4), the others go to atom 0:
    # costs (.1, .2, .3, .6); one error -> the sweep threshold leaves one score below it: t = -.3
    np.testing.assert_allclose(transport_row_costs(REF_P, [0.75, 0.25]), [0.1, 0.2, 0.3, 0.6], atol=1e-12)
    est = COTT().fit(probs=REF_P, labels=REF_Y)
    assert est.threshold_ == pytest.approx(-0.3) and est.reference_accuracy_ == 0.75
    # target: row 4 (c_i1 - c_i0 = -.6) goes to atom 1 at .2; the others to atom 0 at .05, .5, .65
    np.testing.assert_allclose(transport_row_costs(TGT_P, [0.75, 0.25]), [0.05, 0.5, 0.65, 0.2], atol=1e-12)
    res = est.estimate(probs=TGT_P)
    assert res.accuracy == pytest.approx(0.5)  # rows 1 and 4 score >= -.3
    assert res.details["mean_cost"] == pytest.approx(cot_error(TGT_P, [0.75, 0.25]))  # COT's error: .35
    assert res.method == "cott"


def test_row_costs_equal_the_authors_n_by_n_assignment():
    """With masses that are multiples of 1/N the N x K plan has no split rows, so each sample's cost is the one of
    the N x N assignment between samples and their one-hot labels (the authors' formulation)."""
    rng = np.random.default_rng(3)
    p = softmax(rng.normal(size=(60, 4)) * 2)
    y = rng.integers(0, 4, 60)
    cost_nn = 1.0 - p[:, y]  # sample i -> label j at 1 - p_i,y_j
    rows, cols = linear_sum_assignment(cost_nn)
    expected = cost_nn[rows, cols]
    pi = np.bincount(y, minlength=4) / 60
    np.testing.assert_allclose(transport_row_costs(p, pi), expected, atol=1e-9)


@pytest.mark.parametrize("n", [300, _SMALL + 5_000])
def test_row_costs_average_to_the_cot_error_on_both_solver_routes(n):
    rng = np.random.default_rng(n)
    p = softmax(rng.normal(size=(n, 6)) * 3)
    pi = rng.dirichlet(np.ones(6))
    r = transport_row_costs(p, pi)
    assert r.shape == (n,) and r.min() >= 0 and r.max() <= 1
    assert r.mean() == pytest.approx(cot_error(p, pi), abs=1e-9)


def test_on_its_own_reference_it_returns_the_reference_accuracy():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(500, 5)) * 2
    y = np.where(rng.random(500) < 0.7, z.argmax(1), rng.integers(0, 5, 500))
    est = COTT().fit(logits=z, labels=y)
    assert est.estimate(logits=z).accuracy == pytest.approx(est.reference_accuracy_, abs=1 / 500)


def test_interval_and_registry():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(400, 3)) * 2
    y = z.argmax(1)
    y[:80] = rng.integers(0, 3, 80)
    est = get_estimator("cott", n_boot=50).fit(logits=z, labels=y)
    res = est.estimate(logits=z[::-1] * 0.7, interval=True)
    assert res.lower <= res.accuracy <= res.upper


def test_bad_input():
    with pytest.raises(InputValidationError, match="logits= or probs="):
        COTT().fit(labels=REF_Y)
    with pytest.raises(NotFittedError):
        COTT().estimate(probs=TGT_P)
    with pytest.raises(InputValidationError, match="rule"):
        COTT(rule="median").fit(probs=REF_P, labels=REF_Y)
    est = COTT().fit(probs=REF_P, labels=REF_Y)
    with pytest.raises(InputValidationError, match="class"):
        est.estimate(probs=np.full((3, 3), 1 / 3))
    with pytest.raises(InputValidationError, match="labels"):
        COTT().fit(probs=REF_P, labels=[0, 1, 2, 0])
