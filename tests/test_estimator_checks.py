"""check_estimator: the contract every registered estimator keeps, and what it finds in estimators that do not."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import (
    Estimate,
    check_estimator,
    get_estimator,
    list_estimators,
)
from helpers.estimators.base import BaseEstimator
from helpers.estimators.examples import MeanMaxProb


@pytest.mark.parametrize("name", list_estimators())
def test_every_registered_estimator_passes_the_whole_contract(name):
    table = check_estimator(get_estimator(name))
    assert table["passed"].all() and {"fit", "estimate", "deterministic", "interval", "pickle", "out of core"} <= set(
        table["check"])


class NaiveConfidence(BaseEstimator):
    """A plausible user estimator that checks nothing: mean max-softmax from raw arrays."""

    name = "naive"

    def fit(self, *, logits=None):
        return self

    def estimate(self, *, logits=None, interval=False):
        p = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
        return Estimate(method="naive", accuracy=float(np.max(p, axis=-1).mean()), n=len(p))


def test_an_estimator_that_checks_nothing_fails_by_name():
    table = check_estimator(NaiveConfidence(), raise_on_failure=False).set_index("check")
    assert not table.loc["bad target: nan", "passed"] and "silently returned" in table.loc["bad target: nan", "detail"]
    assert not table.loc["bad target: probabilities as logits", "passed"]
    assert not table.loc["interval", "passed"]  # interval=True gives no interval and says nothing
    assert table.loc["estimate", "passed"] and table.loc["deterministic", "passed"]
    with pytest.raises(AssertionError, match="NaiveConfidence fails .* bad target: nan"):
        check_estimator(NaiveConfidence())


class MeanConfidence(MeanMaxProb):
    """The public base's pattern (helpers.estimators.examples), with its bootstrap size for these tests."""

    def __init__(self, *, n_boot=100, level=0.95, random_state=0):
        super().__init__(n_boot=n_boot, level=level, random_state=random_state)


def test_a_subclass_of_the_public_base_passes_and_equals_the_registered_twin():
    table = check_estimator(MeanConfidence())
    assert "out of core" in set(table["check"]) and table["passed"].all()
    z = np.random.default_rng(1).normal(size=(50, 3))
    ours = MeanConfidence().fit(logits=z).estimate(logits=z, interval=True)
    twin = get_estimator("average_confidence", n_boot=100).estimate(logits=z)
    assert ours.accuracy == pytest.approx(twin.accuracy) and ours.lower <= ours.accuracy <= ours.upper
    with pytest.raises(InputValidationError, match="class-count mismatch"):
        MeanConfidence().fit(logits=z).estimate(logits=z[:, :2])


def test_check_estimator_refuses_what_is_not_an_estimator():
    with pytest.raises(InputValidationError, match="estimator: expected an estimator instance"):
        check_estimator("atc_mc")
    with pytest.raises(InputValidationError, match="estimator: expected an estimator instance"):
        check_estimator(MeanConfidence)
