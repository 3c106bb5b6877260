"""Notebook 00's computed tables (helpers.experiments.p0_example.scoring) on a hand-computed case."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.estimators import Estimate
from helpers.experiments.p0_example import estimate_sets, mae_table


class _Fixed:
    """An estimator that says ``value`` with the interval ``value ± 0.1`` whatever the logits."""

    def __init__(self, value: float):
        self.value = value

    def estimate(self, *, logits, interval):
        return Estimate(accuracy=self.value, lower=self.value - 0.1, upper=self.value + 0.1, method="fixed")


def test_every_method_on_every_set_beside_the_true_accuracy():
    labels = np.array([0, 1, 1, 0])
    right = np.eye(2)[labels]  # argmax = the label: accuracy 1.0
    half = np.eye(2)[[0, 0, 1, 1]]  # two of four right: accuracy 0.5
    sets = {("clean", 0): right, ("noise", 3): half}
    results = estimate_sets({"high": _Fixed(0.95), "low": _Fixed(0.55)}, sets, labels)
    assert results[["shift", "method", "true"]].values.tolist() == [
        ["clean", "high", 1.0], ["clean", "low", 1.0], ["noise", "high", 0.5], ["noise", "low", 0.5]]
    assert results["abs_error"].round(6).tolist() == [0.05, 0.45, 0.45, 0.05]
    assert results["covered"].tolist() == [True, False, False, True]  # 1.0 in [0.85, 1.05]; 0.5 in [0.45, 0.65]
    table = mae_table(results)
    assert table.set_index("method").loc["high", "mae"] == pytest.approx(0.25)
    assert table.set_index("method").loc["low", "interval_coverage"] == pytest.approx(0.5)
