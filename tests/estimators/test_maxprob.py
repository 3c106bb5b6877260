"""MaxProb threshold: fraction of examples with confidence >= gamma (paper 1, gamma = 0.5)."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import MaxProbThreshold, maxprob_accuracy


def test_hand_computed():
    # binary probs: every max prob is >= 0.5 -> 1.0 ; with 3 classes: maxima 0.7, 0.4, 0.5 -> 1, 0, 1 -> 2/3
    assert maxprob_accuracy(np.array([[0.7, 0.3], [0.4, 0.6]])) == 1.0
    p = np.array([[0.7, 0.2, 0.1], [0.4, 0.3, 0.3], [0.5, 0.25, 0.25]])
    assert maxprob_accuracy(p) == pytest.approx(2 / 3)
    # confidences 0.7, 0.4, 0.8, 0.5 ; >= 0.5 -> 1, 0, 1, 1 -> 0.75 (a tie at gamma counts as correct)
    conf = [0.7, 0.4, 0.8, 0.5]
    assert maxprob_accuracy(np.array(conf)) == pytest.approx(0.75)
    assert MaxProbThreshold().estimate(confidence=conf).accuracy == pytest.approx(0.75)
    assert MaxProbThreshold(gamma=0.7).estimate(confidence=conf).accuracy == pytest.approx(0.5)  # 0.7, 0.8


def test_gamma_zero_and_one():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 3))
    assert MaxProbThreshold(gamma=0.0).estimate(logits=z).accuracy == 1.0
    assert MaxProbThreshold(gamma=1.0).estimate(logits=z).accuracy == 0.0


def test_bad_inputs():
    with pytest.raises(InputValidationError, match="gamma"):
        MaxProbThreshold(gamma=1.5).estimate(confidence=[0.5])
    with pytest.raises(InputValidationError, match="confidence"):
        MaxProbThreshold().estimate(confidence=[[0.5]])
