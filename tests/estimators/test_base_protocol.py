"""The estimator skeleton: abstract hooks, one declared bootstrap protocol, and a stateless ``measure``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from helpers.errors import NotFittedError
from helpers.estimators import get_estimator
from helpers.estimators.estimator import LabelFreeEstimator, Prepared

RNG = np.random.default_rng(0)
Z = RNG.normal(size=(200, 4)).astype(np.float32)


def test_a_subclass_without_the_abstract_hooks_cannot_be_instantiated():
    class NoPoint(LabelFreeEstimator):
        def _prepare_target(self, **target):
            return Prepared(n=1)

        def _weighted(self, prep, counts):
            return 0.0

    with pytest.raises(TypeError, match="_point"):
        NoPoint()


def test_a_concrete_subclass_must_declare_one_whole_bootstrap_protocol():
    with pytest.raises(TypeError, match="bootstrap protocol.*got \\['_resample_values'\\]"):

        class HalfProtocol(LabelFreeEstimator):
            def _prepare_target(self, **target):
                return Prepared(n=1)

            def _point(self, prep):
                return 0.0

            def _resample_values(self, prep):  # without _resampled: no statistic of the resampled rows
                return np.zeros(1)

    class Weighted(LabelFreeEstimator):
        def _prepare_target(self, **target):
            return Prepared(n=1)

        def _point(self, prep):
            return 0.0

        def _weighted(self, prep, counts):
            return 0.0

    assert Weighted()._point(Prepared(n=1)) == 0.0


def test_measure_changes_no_state_and_leaves_other_estimators_alone():
    """An estimator measured while another one's estimate runs keeps raising for the one without a line."""
    mde = get_estimator("mde").fit(logits=Z)
    before = dict(vars(mde))
    assert np.isfinite(mde.measure(logits=Z).score)
    assert vars(mde).keys() == before.keys()
    with pytest.raises(NotFittedError, match="shifted="):
        mde.estimate(logits=Z)  # after measure, estimate still wants its score -> accuracy line


def test_an_estimator_used_inside_anothers_measure_keeps_its_own_behaviour(monkeypatch):
    mde = get_estimator("mde").fit(logits=Z)
    other = get_estimator("average_energy").fit(logits=Z)
    seen = []
    point = type(mde)._point

    def spying_point(self, prep):  # runs inside mde.measure(): other.estimate must still want its line
        with pytest.raises(NotFittedError, match="shifted="):
            other.estimate(logits=Z)
        seen.append(True)
        return point(self, prep)

    monkeypatch.setattr(type(mde), "_point", spying_point)
    assert np.isfinite(mde.measure(logits=Z).score) and seen


def test_measure_is_safe_from_several_threads():
    mde = get_estimator("mde").fit(logits=Z)
    expected = mde.measure(logits=Z).score

    def work(i: int):
        if i % 2:
            return mde.measure(logits=Z).score
        try:
            mde.estimate(logits=Z)
        except NotFittedError:
            return "raised"
        return "no error"

    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(work, range(40)))
    assert all(v == expected for v in out[1::2]) and set(out[::2]) == {"raised"}


def test_estimate_is_defined_once_and_a_subclass_declares_its_target_keywords():
    """A subclass that writes its own ``estimate`` is refused; ``target_inputs`` names the keywords the one
    ``estimate`` takes and passes on; a one-column mean needs no ``_from_means``."""
    import inspect

    with pytest.raises(TypeError, match="estimate is defined once"):

        class OwnEstimate(LabelFreeEstimator):
            def _prepare_target(self, **target):
                return Prepared(n=1)

            def _point(self, prep):
                return 0.0

            def _weighted(self, prep, counts):
                return 0.0

            def estimate(self, *, logits=None, interval=False):
                return None

    class Share(LabelFreeEstimator):
        requires_fit = False
        target_inputs = ("scores",)

        def __init__(self, n_boot=50, level=0.95, random_state=0):
            self.n_boot, self.level, self.random_state = n_boot, level, random_state

        def _prepare_target(self, *, scores=None):
            return Prepared(n=len(scores), arrays={"hit": (np.asarray(scores) > 0.5).astype(float)})

        def _point(self, prep):
            return float(prep.arrays["hit"].mean())

        def _columns(self, prep):
            return prep.arrays["hit"][:, None]

    assert list(inspect.signature(Share.estimate).parameters)[:3] == ["self", "scores", "interval"]
    out = Share().estimate(scores=[0.9, 0.2, 0.7, 0.6], interval=True)
    assert out.accuracy == 0.75 and out.lower <= 0.75 <= out.upper
    with pytest.raises(TypeError, match="unexpected keyword argument 'score'"):
        Share().estimate(score=[0.9])
