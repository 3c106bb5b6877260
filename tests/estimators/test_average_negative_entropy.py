"""Average negative entropy: mean of sum_k p_k log p_k (a score, nats)."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import AverageNegativeEntropy, average_negative_entropy


def test_hand_computed():
    # [0.5, 0.5] -> -log 2 ; [1, 0] -> 0 (the epsilon makes 0 * log 0 = 0) ; mean = -log(2) / 2
    p = np.array([[0.5, 0.5], [1.0, 0.0]])
    assert average_negative_entropy(p) == pytest.approx(-np.log(2) / 2)
    est = AverageNegativeEntropy().measure(probs=p)
    assert est.score == pytest.approx(-np.log(2) / 2)
    assert np.isnan(est.accuracy)


def test_range_and_regressor():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(500, 4))
    est = AverageNegativeEntropy(regressor=lambda s: 1.0 + s / np.log(4)).estimate(logits=z)
    assert -np.log(4) <= est.score <= 0
    assert est.accuracy == pytest.approx(1 + est.score / np.log(4))
    uniform = np.full((3, 4), 0.25)
    assert average_negative_entropy(uniform) == pytest.approx(-np.log(4))


def test_bad_inputs():
    with pytest.raises(InputValidationError, match="confidence"):
        AverageNegativeEntropy().measure(confidence=[0.5, 0.6])
    with pytest.raises(InputValidationError, match="probs"):
        average_negative_entropy(np.array([[0.2, 0.2]]))
    with pytest.raises(InputValidationError, match="eps"):
        AverageNegativeEntropy(eps=-1).measure(probs=np.array([[0.5, 0.5]]))
    with pytest.raises(InputValidationError, match="regressor"):
        AverageNegativeEntropy(regressor=3).estimate(probs=np.array([[0.5, 0.5]]))
