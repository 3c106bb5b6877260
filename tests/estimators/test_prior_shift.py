"""Accuracy under label shift from the reference confusion matrix and PACC prevalences."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import ConfusionMatrixShift, get_estimator, pacc_prevalences


def _reference():
    """Class 0: 9 rows [.85, .15] + 1 row [.35, .65] (mean [.8, .2], 9 of 10 right); class 1: 8 rows [.2, .8] +
    2 rows [.7, .3] (mean [.3, .7], 8 of 10 right): M = [[.8, .3], [.2, .7]], R = [[.9, .1], [.2, .8]]."""
    p = np.array([[0.85, 0.15]] * 9 + [[0.35, 0.65]] + [[0.2, 0.8]] * 8 + [[0.7, 0.3]] * 2)
    y = np.array([0] * 10 + [1] * 10)
    return p, y


def test_hand_computed_case():
    """Target mean softmax [.425, .575] = M [.25, .75]: q = (.25, .75), accuracy = .25 · .9 + .75 · .8 = .825."""
    p, y = _reference()
    est = ConfusionMatrixShift().fit(probs=p, labels=y)
    np.testing.assert_allclose(est.confusion_, [[0.9, 0.1], [0.2, 0.8]])
    np.testing.assert_allclose(est.class_means_, [[0.8, 0.3], [0.2, 0.7]])
    e = est.estimate(probs=np.array([[0.425, 0.575]] * 8))
    assert e.accuracy == pytest.approx(0.825, abs=1e-9)
    np.testing.assert_allclose(e.details["prevalences"], [0.25, 0.75], atol=1e-9)
    np.testing.assert_allclose(e.details["confusion"], [[0.225, 0.025], [0.15, 0.6]], atol=1e-9)


def test_recovers_the_accuracy_of_a_simulated_label_shift():
    """Same class-conditional outputs, other prevalences: the estimate is the target's true accuracy."""
    rng = np.random.default_rng(0)
    k, n = 4, 40_000

    margins = np.array([3.0, 1.5, 1.0, 0.5])  # per-class accuracies differ, so the prevalences matter

    def draw(prevalences):
        y = rng.choice(k, size=n, p=prevalences)
        z = rng.normal(size=(n, k))
        z[np.arange(n), y] += margins[y]
        p = np.exp(z)
        return p / p.sum(1, keepdims=True), y

    p_ref, y_ref = draw([0.25] * 4)
    p_tgt, y_tgt = draw([0.55, 0.25, 0.15, 0.05])
    est = get_estimator("confusion_matrix_shift").fit(probs=p_ref, labels=y_ref)
    e = est.estimate(probs=p_tgt, interval=True)
    truth = float(np.mean(p_tgt.argmax(1) == y_tgt))
    assert abs(float(np.mean(p_ref.argmax(1) == y_ref)) - truth) > 0.1  # the reference accuracy is far off
    assert e.accuracy == pytest.approx(truth, abs=0.01) and e.lower < e.accuracy < e.upper
    np.testing.assert_allclose(e.details["prevalences"], [0.55, 0.25, 0.15, 0.05], atol=0.02)


def test_pacc_stays_on_the_simplex():
    q = pacc_prevalences(np.array([1.2, -0.1]), np.array([[0.8, 0.3], [0.2, 0.7]]))  # outside M's range
    assert (q >= 0).all() and q.sum() == pytest.approx(1.0)


def test_bad_input_names_the_argument():
    p, y = _reference()
    with pytest.raises(InputValidationError, match="labels= is required"):
        ConfusionMatrixShift().fit(probs=p)
    with pytest.raises(InputValidationError, match=r"classes \[2\] do not occur"):
        ConfusionMatrixShift().fit(probs=np.hstack([p, np.zeros((20, 1))]), labels=y)
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        ConfusionMatrixShift().fit(probs=p, labels=y).estimate(probs=np.full((3, 3), 1 / 3))
