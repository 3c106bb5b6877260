"""Trust Score on a hand-made 2-D example, threshold detectors, Ens Avg Conf, Proxy Risk, success conditions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from helpers.errors import InputValidationError, NotFittedError
from helpers.models.dann import DANN
from helpers.selftraining import (
    EnsembleAverageConfidence,
    ProxyRisk,
    SelfTrainingResult,
    ThresholdErrorDetector,
    TrustScore,
    density_filter,
    ensemble_average_confidence,
    pairwise_disagreement,
    round_conditions,
    success_conditions,
)
from helpers.selftraining.algorithm import RoundRecord
from helpers.training import TrainSettings

pytestmark = pytest.mark.usefixtures("one_torch_thread")


X2 = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 1.0]])
Y2 = np.array([0, 0, 1, 1])


def test_trust_score_hand_computed():
    ts = TrustScore().fit(features=X2, labels=Y2)
    q = np.array([[1.0, 0.0], [1.0, 0.0], [3.0, 4.0]])
    # (1,0): class 0 at distance 1, class 1 at distance 2
    # (3,4): class 1 nearest (3,1) at 3, class 0 nearest (0,1) at sqrt(9+9)
    s = ts.score(features=q, predictions=np.array([0, 1, 1]))
    np.testing.assert_allclose(s, [2.0, 0.5, np.sqrt(18) / 3], rtol=1e-9)
    np.testing.assert_allclose(ts.class_distances(q[:1]), [[1.0, 2.0]])


def test_trust_score_density_filter_drops_outlier():
    x = np.vstack([X2, [[10.0, 10.0]]])
    y = np.array([0, 0, 1, 1, 0])
    np.testing.assert_array_equal(density_filter(x[y == 0], alpha=0.34, k=1), [True, True, False])
    q = np.array([[9.0, 10.0]])
    plain = TrustScore().fit(features=x, labels=y).score(features=q, predictions=np.array([0]))
    filt = TrustScore(alpha=0.34, k=1).fit(features=x, labels=y).score(features=q, predictions=np.array([0]))
    # without filtering the outlier (10,10) is class 0's nearest point (distance 1); after it, (0,1) is
    assert plain[0] == pytest.approx(np.hypot(6, 9) / 1.0)
    assert filt[0] == pytest.approx(np.hypot(6, 9) / np.hypot(9, 9))


def test_trust_score_bad_input():
    with pytest.raises(NotFittedError):
        TrustScore().score(features=X2, predictions=Y2)
    with pytest.raises(InputValidationError):
        TrustScore().fit(features=X2, labels=np.zeros(4, int))  # one class
    with pytest.raises(InputValidationError):
        TrustScore().fit(features=X2[:, 0], labels=Y2)
    ts = TrustScore().fit(features=X2, labels=Y2)
    with pytest.raises(InputValidationError):
        ts.score(features=X2, predictions=np.array([0, 1, 2, 0]))
    with pytest.raises(InputValidationError):
        density_filter(X2, alpha=1.0, k=2)


def test_threshold_detector_cut_at_int_one_minus_acc_times_n():
    scores = np.arange(1, 11) / 10.0
    correct = np.array([1] * 8 + [0] * 2)  # source accuracy 0.8 -> index int(0.2 * 10) = 2 -> 0.3
    det = ThresholdErrorDetector("msp").fit(scores=scores[::-1], correct=correct)
    assert det.threshold_ == pytest.approx(0.3)
    np.testing.assert_array_equal(det.detect(scores=np.array([0.25, 0.3, 0.9])), [True, False, False])
    assert det.estimate(scores=np.array([0.1, 0.5])).accuracy == pytest.approx(0.5)
    with pytest.raises(InputValidationError):
        ThresholdErrorDetector().fit(scores=scores, correct=correct[:3])
    with pytest.raises(NotFittedError):
        ThresholdErrorDetector().detect(scores=scores)


def test_ensemble_average_confidence_hand_computed():
    p = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.4, 0.6]]])  # mean: [.7,.3], [.3,.7]
    assert ensemble_average_confidence(p) == pytest.approx(0.7)
    assert EnsembleAverageConfidence().fit().estimate(member_probs=p).accuracy == pytest.approx(0.7)
    with pytest.raises(InputValidationError):
        ensemble_average_confidence(p[0])
    with pytest.raises(InputValidationError):
        ensemble_average_confidence(p * 2)


def test_success_conditions_hand_computed():
    y = np.array([0, 1, 1, 2, 2])
    f = np.array([0, 1, 0, 0, 1])  # correct on 0, 1; wrong on 2, 3, 4
    m1 = np.array([[0, 1, 0, 2, 0], [0, 0, 0, 1, 0]])  # vote: 0, 0, 0, 1, 0
    m2 = np.array([[0, 1, 1, 0, 0], [1, 1, 1, 0, 1]])  # vote: 0, 1, 1, 0, 0
    r1 = RoundRecord(m1, np.array([0, 0, 0, 1, 0]), np.zeros(5, bool), np.array([0, 1, 0, 1, 1], bool))
    r2 = RoundRecord(
        m2, np.array([0, 1, 1, 0, 0]), np.array([0, 1, 0, 1, 1], bool), np.array([0, 0, 1, 0, 1], bool)
    )
    res = SelfTrainingResult(r2.errors, 0.6, [r1, r2])
    per = round_conditions(res, predictions=f, labels=y, num_classes=3)
    # round 1: nu over x0, x1 and 2 members: errors at (m1[1], x1) -> 1/4; gamma undefined (R empty)
    # B = wrong & vote wrong = x2 (vote 0≠1), x3 (1≠2), x4 (0≠2); sigma² = [0, .5, 0] -> mean 1/6
    assert per.nu[0] == pytest.approx(0.25) and np.isnan(per.gamma[0])
    assert per.sigma2[0] == pytest.approx(1 / 6)
    # round 2: nu: m2 on x0 -> 0, 1 ; on x1 -> 1, 1 -> 1/4; gamma on R={x1,x3,x4}: h==f at (x1: 1,1), (x3: 1,1),
    # (x4: 0,1) -> 5/6; B = wrong & not in R & vote wrong = x2 (vote 1 == y) -> empty -> nan
    assert per.nu[1] == pytest.approx(0.25) and per.gamma[1] == pytest.approx(5 / 6)
    assert np.isnan(per.sigma2[1])
    summary = success_conditions(res, predictions=f, labels=y, num_classes=3)
    assert summary["nu_tilde"] == pytest.approx(0.25) and summary["gamma_tilde"] == pytest.approx(5 / 6)
    assert summary["sigma2_L"] == pytest.approx(1 / 6) and summary["actual_accuracy"] == pytest.approx(0.4)
    np.testing.assert_allclose(
        pairwise_disagreement(np.array([[0, 1], [0, 0], [1, 2]]), num_classes=3),
        [1 - (4 / 9 + 1 / 9), 1 - 3 / 9],
    )
    with pytest.raises(InputValidationError):
        round_conditions(res, predictions=f[:3], labels=y[:3])


def test_proxy_risk_runs_and_flags_disagreements():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ys = np.arange(60) % 2
    xs = (rng.normal(size=(60, 2)) * 0.5 + np.where(ys[:, None] == 1, 1.0, -1.0)).astype(np.float32)
    xt = (rng.normal(size=(40, 2)) * 0.5 + 0.8).astype(np.float32)
    probs = np.tile([[0.9, 0.1]], (40, 1)).astype(np.float32)  # an f that always says class 0

    def factory():
        return DANN(
            nn.Sequential(nn.Linear(2, 8), nn.ReLU()), nn.Linear(8, 2), nn.Linear(8, 2), alpha_max=0.1
        )

    pr = ProxyRisk(model_factory=factory, pretrain_epochs=3, epochs=3, settings=TrainSettings(batch_size=32)).fit(x=xs, y=ys)
    est = pr.estimate(x=xt, probs=probs)
    assert 0.0 <= est.accuracy <= 1.0 and pr.errors_.shape == (40,)
    assert est.accuracy == pytest.approx(1 - pr.errors_.mean())
    assert len(pr.history_) == 3 and est.details["epsilon"] == pytest.approx(1.1 * est.details["epsilon0"])
    with pytest.raises(InputValidationError):
        pr.estimate(x=xt, probs=probs[:5])
