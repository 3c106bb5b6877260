"""Agreement score (Jiang et al. 2022): fraction of target examples where two models agree."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import AgreementScore, agreement_score


def test_hand_computed():
    # [0, 1, 2, 1] vs [0, 2, 2, 1]: agree on 3 of 4
    assert agreement_score([0, 1, 2, 1], [0, 2, 2, 1]) == pytest.approx(0.75)
    za = np.eye(3)[[0, 1, 2, 1]] * 5
    zb = np.eye(3)[[0, 2, 2, 1]] * 2
    assert agreement_score(za, zb) == pytest.approx(0.75)
    assert AgreementScore().estimate(logits=za, other_logits=zb).accuracy == pytest.approx(0.75)
    pb = np.eye(3)[[0, 2, 2, 1]]
    assert AgreementScore().estimate(logits=za, other_probs=pb).accuracy == pytest.approx(0.75)


def test_identical_predictions_give_one():
    z = np.random.default_rng(0).normal(size=(500, 10))
    assert AgreementScore().estimate(logits=z, other_logits=z * 3).accuracy == 1.0


def test_bad_inputs():
    z = np.zeros((4, 3))
    with pytest.raises(InputValidationError, match="other_logits"):
        AgreementScore().estimate(logits=z)
    with pytest.raises(InputValidationError, match="same number of rows"):
        AgreementScore().estimate(logits=z, other_logits=np.zeros((3, 3)))
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        AgreementScore().estimate(logits=z, other_logits=np.zeros((4, 2)))
    with pytest.raises(InputValidationError, match="predictions_b"):
        agreement_score([0, 1], [0, -1])
    with pytest.raises(InputValidationError, match="other_probs"):
        AgreementScore().estimate(logits=z, other_probs=np.full((4, 3), 0.5))
