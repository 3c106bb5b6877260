"""Average Confidence (AC / Avg Conf / ConfScore): mean max softmax probability."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import AverageConfidence, average_confidence, softmax

# rows' maxima: 0.7, 0.4, 0.8  ->  mean = 1.9 / 3
P = np.array([[0.7, 0.2, 0.1], [0.4, 0.4, 0.2], [0.1, 0.1, 0.8]])


def test_hand_computed_probs_and_logits():
    assert average_confidence(P) == pytest.approx(1.9 / 3)
    est = AverageConfidence().estimate(probs=P)
    assert est.accuracy == pytest.approx(1.9 / 3)
    assert est.n == 3 and est.method == "average_confidence"
    # logits = log p give the same softmax
    assert AverageConfidence().estimate(logits=np.log(P)).accuracy == pytest.approx(1.9 / 3)
    # per-example confidences (e.g. sequence probabilities) are used as they are
    assert AverageConfidence().estimate(confidence=[0.7, 0.4, 0.8]).accuracy == pytest.approx(1.9 / 3)


def test_calibrated_model_matches_accuracy_under_shift():
    # labels drawn from the predicted distribution => E[max p] = P(correct), on any input distribution
    rng = np.random.default_rng(0)
    z = rng.normal(size=(20000, 5)) * 1.7 + rng.normal(size=5)
    p = softmax(z)
    y = (rng.random(len(p))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    acc = float((p.argmax(1) == y).mean())
    se = np.sqrt(acc * (1 - acc) / len(p))
    assert abs(average_confidence(p) - acc) < 4 * se


def test_float32_stays_cheap_and_correct():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(1000, 10)).astype(np.float32)
    a32 = AverageConfidence().estimate(logits=z).accuracy
    a64 = average_confidence(softmax(z.astype(np.float64)))
    assert a32 == pytest.approx(a64, abs=1e-6)


def test_bad_inputs():
    est = AverageConfidence()
    with pytest.raises(InputValidationError, match="logits"):
        est.estimate(logits=np.array([[0.0, np.nan]]))
    with pytest.raises(InputValidationError, match="logits"):
        est.estimate(logits=np.zeros(4))  # wrong rank
    with pytest.raises(InputValidationError, match="probs"):
        est.estimate(probs=np.array([[0.5, 0.6]]))  # does not sum to 1
    with pytest.raises(InputValidationError, match="logits"):
        est.estimate(logits=np.zeros((0, 3)))  # empty set
    with pytest.raises(InputValidationError, match="exactly one"):
        est.estimate(logits=P, probs=P)
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        AverageConfidence().fit(probs=P).estimate(probs=np.array([[0.5, 0.5]]))
    with pytest.raises(InputValidationError, match="confidence"):
        est.estimate(confidence=[0.5, np.inf])
