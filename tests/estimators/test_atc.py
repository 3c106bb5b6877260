"""ATC (Garg et al. 2022): threshold fitted so #reference below it = #reference errors; estimate = frac >= t."""

import numpy as np
import pytest

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import ATC, atc_accuracy, atc_scores, atc_threshold, get_estimator, softmax

# 10 reference scores with 3 errors (at 0.1, 0.3, 0.4)
S = np.arange(1, 11) / 10
OK = np.array([0, 1, 0, 0, 1, 1, 1, 1, 1, 1])


def test_sweep_hand_computed():
    # t = 0.4: incorrect with s >= t: {0.4} -> FP = 1 ; correct with s < t: {0.2} -> FN = 1 ; |FP - FN| = 0,
    # and #(s < 0.4) = 3 = #errors.  Target: 0.45 and 0.95 are >= 0.4 -> 2 / 4.
    t = atc_threshold(S, OK, rule="sweep")
    assert t == pytest.approx(0.4)
    assert atc_accuracy([0.35, 0.45, 0.95, 0.05], t) == pytest.approx(0.5)


def test_quantile_hand_computed():
    # accuracy 0.7 -> 0.3-quantile; numpy linear: position 0.3 * 9 = 2.7 -> 0.3 + 0.7 * 0.1 = 0.37
    t = atc_threshold(S, OK, rule="quantile")
    assert t == pytest.approx(0.37)
    est = ATC(rule="quantile").fit(confidence=S, correct=OK).estimate(confidence=[0.35, 0.45, 0.95, 0.05])
    assert est.accuracy == pytest.approx(0.5)
    assert est.details["rule"] == "quantile"


def test_sweep_never_splits_ties():
    # one error, three tied scores: candidates t=0.5 (0 below, |1-0|=1), t=0.9 (3 below, 2), inf (4 below, 3)
    assert atc_threshold([0.5, 0.5, 0.5, 0.9], [0, 1, 1, 1]) == 0.5
    # all wrong -> threshold above every score, all right -> the smallest score
    assert atc_threshold([0.2, 0.3], [0, 0]) == np.inf
    assert atc_threshold([0.2, 0.3], [1, 1]) == 0.2


def test_reproduces_reference_accuracy_on_reference():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5000, 10)) * 2
    y = rng.integers(0, 10, 5000)
    for score in ("mc", "ne"):
        for rule in ("sweep", "quantile"):
            est = ATC(score=score, rule=rule).fit(logits=z, labels=y)
            acc = est.estimate(logits=z).accuracy
            assert acc == pytest.approx(est.reference_accuracy_, abs=2 / 5000)


def test_calibrated_model_within_sampling_error():
    # labels drawn from the predicted distribution: a perfectly calibrated model; reference and target i.i.d.
    rng = np.random.default_rng(1)

    def draw(n):
        z = rng.normal(size=(n, 6)) * 1.5
        p = softmax(z)
        y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
        return z, np.minimum(y, 5)

    zr, yr = draw(20000)
    zt, yt = draw(20000)
    true = float((zt.argmax(1) == yt).mean())
    se = np.sqrt(true * (1 - true) * (1 / 20000 + 1 / 20000))
    for name in ("atc_mc", "atc_ne"):
        est = get_estimator(name).fit(logits=zr, labels=yr).estimate(logits=zt)
        assert abs(est.accuracy - true) < 4 * se, name
        assert est.method == name and est.details["rule"] == "sweep"


def test_ne_score_has_epsilon_and_matches_formula():
    p = np.array([[1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_allclose(atc_scores(p, score="ne"), [0.0, -np.log(2)])
    np.testing.assert_allclose(atc_scores(p, score="mc"), [1.0, 0.5])


def test_bad_inputs():
    with pytest.raises(NotFittedError):
        ATC().estimate(logits=np.zeros((2, 2)))
    with pytest.raises(InputValidationError, match="rule"):
        ATC(rule="median").fit(confidence=S, correct=OK)
    with pytest.raises(InputValidationError, match="score"):
        ATC(score="energy").fit(confidence=S, correct=OK)
    with pytest.raises(InputValidationError, match="correct"):
        atc_threshold(S, OK[:5])
    with pytest.raises(InputValidationError, match="correct"):
        atc_threshold(S, np.full(10, 2))
    with pytest.raises(InputValidationError, match="labels"):
        ATC().fit(logits=np.zeros((3, 2)), labels=[0, 1, -1])
    fitted = ATC().fit(logits=np.eye(3), labels=[0, 1, 2])
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        fitted.estimate(logits=np.zeros((2, 4)))
    with pytest.raises(InputValidationError, match="same kind of input"):
        fitted.estimate(confidence=[0.3])
    with pytest.raises(InputValidationError, match="logits"):
        fitted.estimate(logits=np.array([[np.inf, 0, 0]]))
    with pytest.raises(InputValidationError, match="scores"):
        atc_threshold([], [])
