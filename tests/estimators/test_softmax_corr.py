"""SoftmaxCorr: hand-computed cases, the range's ends, the reference prior, bootstrap protocols agree, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import SoftmaxCorr, get_estimator, softmax_correlation


def test_hand_computed_cases():
    assert softmax_correlation(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(1.0)  # balanced one-hot
    assert softmax_correlation(np.array([[1.0, 0.0], [1.0, 0.0]])) == pytest.approx(2**-0.5)  # one class only
    assert softmax_correlation(np.array([[0.5, 0.5]])) == pytest.approx(2**-0.5)  # uniform rows
    # G = [[.365, .185], [.185, .265]]: 0.5 (.365 + .265) / (√.5 · √(.365² + 2 · .185² + .265²)) = 0.854321
    assert softmax_correlation(np.array([[0.8, 0.2], [0.3, 0.7]])) == pytest.approx(0.854321, abs=1e-6)


def test_the_reference_prior_rewards_matching_class_proportions():
    p = np.eye(3)[[0, 0, 0, 0, 1, 2]]  # proportions 4/6, 1/6, 1/6
    labels = np.array([0, 0, 0, 0, 1, 2])
    est = SoftmaxCorr(prior="reference").fit(probs=p, labels=labels)
    assert est.measure(probs=p).score == pytest.approx(1.0)
    assert SoftmaxCorr().fit(probs=p).measure(probs=p).score < 1.0  # the uniform prior does not match


def test_both_bootstrap_protocols_give_the_same_replicates_law():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 4))
    est = get_estimator("softmax_corr", n_boot=300).fit(logits=z)
    by_means = est.measure(logits=z, interval=True).details
    prep = est._prepare_target(logits=z)
    from helpers.estimators.bootstrap import bootstrap_replicates

    class Weighted(SoftmaxCorr):  # the same estimator without the column-means protocol
        def _columns(self, prep):
            return None

    reps = bootstrap_replicates(Weighted(n_boot=300).fit(logits=z), prep, n_boot=300, random_state=0)
    assert np.quantile(reps, 0.025) == pytest.approx(by_means["score_lower"], abs=0.01)
    assert np.quantile(reps, 0.975) == pytest.approx(by_means["score_upper"], abs=0.01)


def test_bad_input_names_the_argument():
    with pytest.raises(InputValidationError, match="prior: expected one of"):
        SoftmaxCorr(prior="balanced").fit(logits=np.zeros((4, 2)))
    with pytest.raises(InputValidationError, match="needs labels="):
        SoftmaxCorr(prior="reference").fit(logits=np.zeros((4, 2)))
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        SoftmaxCorr().fit(logits=np.zeros((4, 2))).measure(logits=np.zeros((4, 3)))
