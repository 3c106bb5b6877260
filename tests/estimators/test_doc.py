"""DoC: reference accuracy + mean target confidence - mean reference confidence."""

import numpy as np
import pytest

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import DoC, doc_accuracy

# reference: predictions [0, 0, 1, 1] vs labels [0, 1, 1, 1] -> accuracy 0.75;
# confidences 0.9, 0.6, 0.8, 0.7 -> mean 0.75
REF = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.3, 0.7]])
LAB = np.array([0, 1, 1, 1])
# target confidences 0.55, 0.65 -> mean 0.6  =>  DoC = 0.75 + 0.6 - 0.75 = 0.6
TGT = np.array([[0.55, 0.45], [0.35, 0.65]])


def test_hand_computed():
    est = DoC().fit(probs=REF, labels=LAB).estimate(probs=TGT)
    assert est.accuracy == pytest.approx(0.6)
    assert est.details["reference_accuracy"] == pytest.approx(0.75)
    assert doc_accuracy(reference_probs=REF, reference_labels=LAB, target_probs=TGT) == pytest.approx(0.6)


def test_confidence_inputs_with_correct():
    est = DoC().fit(confidence=[0.9, 0.6, 0.8, 0.7], correct=[1, 0, 1, 1]).estimate(confidence=[0.55, 0.65])
    assert est.accuracy == pytest.approx(0.6)


def test_target_equal_to_reference_gives_reference_accuracy():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(3000, 7)) * 2
    y = rng.integers(0, 7, 3000)
    est = DoC().fit(logits=z, labels=y).estimate(logits=z)
    assert est.accuracy == pytest.approx(float((z.argmax(1) == y).mean()), abs=1e-12)


def test_clipped_to_unit_interval():
    # reference conf 0.9 accuracy 1.0, target conf 1.0 -> raw 1.1, clipped
    est = DoC().fit(confidence=[0.9], correct=[1]).estimate(confidence=[1.0])
    assert est.accuracy == 1.0 and est.details["raw"] == pytest.approx(1.1)


def test_bad_inputs():
    with pytest.raises(NotFittedError):
        DoC().estimate(probs=TGT)
    with pytest.raises(InputValidationError, match="labels"):
        DoC().fit(probs=REF, labels=[0, 1, 2, 1])  # out of range
    with pytest.raises(InputValidationError, match="labels"):
        DoC().fit(probs=REF, labels=[0, 1])  # wrong length
    with pytest.raises(InputValidationError, match="labels"):
        DoC().fit(probs=REF)
    with pytest.raises(InputValidationError, match="correct"):
        DoC().fit(confidence=[0.9, 0.5], labels=[1, 0])
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        DoC().fit(probs=REF, labels=LAB).estimate(probs=np.full((2, 3), 1 / 3))
    with pytest.raises(InputValidationError, match="reference_labels"):
        doc_accuracy(reference_probs=REF, reference_labels=[0, 5, 1, 1], target_probs=TGT)
