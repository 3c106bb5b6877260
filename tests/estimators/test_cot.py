"""COT (Lu et al. 2023): W1 between target predictions and one-hot reference labels, cost 1 - p_k."""

import numpy as np
import ot
import pytest

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import COT, cot_error, label_distribution, softmax


def test_hand_computed():
    # cost 1 - p: [[0.2, 0.8], [0.6, 0.4]], masses 1/2 each, pi = [1/2, 1/2]:
    # row 1 -> class 0 (0.2), row 2 -> class 1 (0.4): error = (0.2 + 0.4) / 2 = 0.3, accuracy 0.7
    p = np.array([[0.8, 0.2], [0.4, 0.6]])
    assert cot_error(p, [0.5, 0.5]) == pytest.approx(0.3)
    est = COT().fit(labels=[0, 1]).estimate(probs=p)
    assert est.accuracy == pytest.approx(0.7)
    # pi = [1, 0]: everything goes to class 0: (0.2 + 0.6) / 2 = 0.4
    assert cot_error(p, [1.0, 0.0]) == pytest.approx(0.4)
    # label shift: all predictions one-hot class 0 but pi = [1/2, 1/2] -> half the mass moves at cost 1
    assert cot_error(np.array([[1.0, 0.0]] * 4), [0.5, 0.5]) == pytest.approx(0.5)


def test_zero_for_one_hot_predictions_with_matching_proportions():
    y = np.array([0, 0, 1, 2, 2, 2])
    p = np.eye(3)[np.random.default_rng(0).permutation(y)]
    est = COT().fit(labels=y, probs=np.eye(3)[y]).estimate(probs=p)
    assert est.accuracy == pytest.approx(1.0)


def test_cost_is_half_l1_and_matches_full_pairwise_ot():
    # 0.5 * ||p - e_k||_1 = 1 - p_k; compare with POT on the full N x N problem against sampled one-hot points
    rng = np.random.default_rng(1)
    p = softmax(rng.normal(size=(40, 4)) * 2)
    y = np.repeat(np.arange(4), 10)
    full = ot.emd2(
        np.full(40, 1 / 40), np.full(40, 1 / 40), 0.5 * ot.dist(p, np.eye(4)[y], metric="cityblock")
    )
    assert cot_error(p, label_distribution(y, 4)) == pytest.approx(full, abs=1e-10)


def test_single_class_is_one_minus_mean_probability():
    rng = np.random.default_rng(2)
    p = softmax(rng.normal(size=(100, 3)))
    assert cot_error(p, [0, 1.0, 0]) == pytest.approx(1 - p[:, 1].mean())


def test_batched_is_an_upper_bound_close_to_exact():
    rng = np.random.default_rng(3)
    p = softmax(rng.normal(size=(3000, 5)) * 2)
    pi = np.full(5, 0.2)
    exact = cot_error(p, pi, batch_size=None)
    batched = cot_error(p, pi, batch_size=1000)
    assert exact - 1e-12 <= batched <= exact + 0.01
    est = COT(batch_size=1000).fit(labels=np.arange(5)).estimate(probs=p)
    assert est.details["n_batches"] == 3 and not est.details["exact"]


def test_bad_inputs():
    with pytest.raises(NotFittedError):
        COT().estimate(probs=np.eye(2))
    with pytest.raises(InputValidationError, match="labels"):
        COT().fit(labels=[0, 3], probs=np.eye(2))
    with pytest.raises(InputValidationError, match="labels"):
        COT().fit(labels=[])
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        COT().fit(labels=[0, 1, 2]).estimate(probs=np.eye(2))
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        COT().fit(labels=[0, 1], probs=np.eye(2)).estimate(probs=np.eye(3))
    with pytest.raises(InputValidationError, match="reference_distribution"):
        cot_error(np.eye(2), [0.7, 0.7])
    with pytest.raises(InputValidationError, match="batch_size"):
        COT(batch_size=0).fit(labels=[0, 1])
