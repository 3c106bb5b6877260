"""One contract for every registered estimator: the common fit/estimate keywords, scikit-learn's parameter API
(``clone``), and a user's own estimator in the benchmark's head-to-head."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from helpers.benchmark import ShiftTask, run_benchmark
from helpers.errors import InputValidationError
from helpers.estimators import (
    ESTIMATORS,
    Estimate,
    get_estimator,
    learns_from_shifted_sets,
    list_estimators,
    register_estimator,
)
from helpers.estimators.base import (
    ESTIMATE_ARGUMENTS,
    FIT_ARGUMENTS,
    BaseEstimator,
    UnusedArgumentWarning,
    declared_arguments,
)

RNG = np.random.default_rng(0)
Z = RNG.normal(size=(120, 4))
Y = RNG.integers(0, 4, 120)
Z[np.arange(120), Y] += 2.0
FEATURES = RNG.normal(size=(120, 5))
PROJ = RNG.normal(size=(4, 5))  # features of a shifted set: its logits projected to 5 dimensions
NEEDS_FEATURES = {"dispersion", "gdscore"}  # estimators that need penultimate features beside the logits
COLLECTION = {"aline_s", "aline_d"}  # estimators that read a collection of models (three more, on the same rows)
OTHERS = {f"m{i}": Z * (1 - 0.2 * i) + RNG.normal(size=Z.shape) for i in range(1, 4)}


def _shifted(name: str) -> dict:
    """Labelled shifted sets for an estimator that learns from them (the stacked estimator, and the scores' line)."""
    est = get_estimator(name)
    if name in COLLECTION:  # not shifted sets: the collection's other models on the reference
        return {"others": OTHERS}
    if not (learns_from_shifted_sets(est) or getattr(est, "output", "accuracy") == "score"):
        return {}
    sets = {}
    for i in range(6):
        z = RNG.normal(size=(80, 4))
        y = RNG.integers(0, 4, 80)
        z[np.arange(80), y] += 2.0 - 0.3 * i
        sets[f"s{i}"] = (z, y) if name not in NEEDS_FEATURES else {"logits": z, "labels": y, "features": z @ PROJ}
    return {"shifted": sets}


def _extra(name: str) -> dict:
    if name in COLLECTION:
        return {"others": OTHERS}
    return {"other_logits": Z + RNG.normal(size=Z.shape)} if name == "agreement" else {}


@pytest.mark.parametrize("name", list_estimators())
def test_every_registered_estimator_takes_the_common_keywords(name):
    est = get_estimator(name)
    fit_sig, est_sig = inspect.signature(est.fit).parameters, inspect.signature(est.estimate).parameters
    assert set(FIT_ARGUMENTS) <= set(fit_sig) and set(ESTIMATE_ARGUMENTS) <= set(est_sig)
    # the README's call, with every common keyword given: what a method does not need is ignored, and named in
    # a warning when it carried a value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = est.fit(logits=Z, probs=None, labels=Y, features=None, **_shifted(name))
    declared = inspect.signature(inspect.unwrap(type(est).fit)).parameters
    unused = [str(w.message) for w in caught if issubclass(w.category, UnusedArgumentWarning)]
    assert unused == ([] if "labels" in declared else [f"{type(est).__name__}.fit does not use labels=; ignored"])
    assert out is est
    features = Z @ PROJ + FEATURES if name in NEEDS_FEATURES else None
    if name in NEEDS_FEATURES:  # without what it needs: a clear error that names the missing input
        with pytest.raises(InputValidationError, match="^features: "):
            est.estimate(logits=Z, probs=None, features=None, **_extra(name))
    res = est.estimate(logits=Z, probs=None, features=features, interval=True, **_extra(name))
    assert isinstance(res, Estimate) and res.n == 120
    assert 0.0 <= res.accuracy <= 1.0  # an accuracy from every registered estimator, never NaN


@pytest.mark.parametrize("name", list_estimators())
def test_every_registered_estimator_clones(name):
    est = get_estimator(name, n_boot=37)
    twin = clone(est)
    assert type(twin) is type(est) and twin is not est
    assert twin.get_params(deep=False) == est.get_params(deep=False)
    assert twin.set_params(n_boot=11) is twin and twin.n_boot == 11 and est.n_boot == 37
    with pytest.raises(InputValidationError, match="not a parameter"):
        twin.set_params(no_such_thing=1)


def test_fitted_clone_gives_the_same_estimate():
    est = get_estimator("atc_mc").fit(logits=Z[:60], labels=Y[:60])
    twin = clone(est).fit(logits=Z[:60], labels=Y[:60])
    assert twin.estimate(logits=Z[60:]).accuracy == est.estimate(logits=Z[60:]).accuracy


def test_a_method_that_needs_an_argument_still_says_so():
    with pytest.raises(InputValidationError, match="logits"), pytest.warns(UnusedArgumentWarning, match="features="):
        get_estimator("mde").fit(features=FEATURES)


def test_a_common_argument_given_as_none_is_dropped_silently_and_declared_arguments_filters():
    est = get_estimator("average_energy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(logits=Z, labels=None, features=None)
        kept = declared_arguments(est.fit, logits=Z, labels=Y, features=FEATURES)
    assert sorted(kept) == ["logits"] and sorted(declared_arguments(est.measure, logits=Z, interval=True)) == [
        "interval", "logits"]  # fmt: skip


class MeanTopLogitGap(BaseEstimator):
    """A user's estimator: accuracy = reference accuracy shifted by the change in mean top-2 logit gap (toy)."""

    name = "gap"

    def __init__(self, *, scale: float = 0.05):
        self.scale = scale

    @staticmethod
    def _gap(z):
        s = np.sort(z, axis=1)
        return float((s[:, -1] - s[:, -2]).mean())

    def fit(self, *, logits, labels):
        self.ref_acc_ = float((logits.argmax(1) == labels).mean())
        self.ref_gap_ = self._gap(logits)
        return self

    def estimate(self, *, logits, interval=False):
        acc = float(np.clip(self.ref_acc_ + self.scale * (self._gap(logits) - self.ref_gap_), 0, 1))
        return Estimate(method=self.name, accuracy=acc, n=len(logits))


def test_register_estimator_enters_run_benchmark():
    def make(n, shift, seed):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 3, n)
        z = rng.normal(size=(n, 3))
        z[np.arange(n), y] += 2.5 - shift
        return z, y

    task = ShiftTask("toy", "fam", make(200, 0, 1), {"a": make(200, 0.5, 2), "b": make(200, 1.5, 3)})
    register_estimator("my_gap", MeanTopLogitGap)
    try:
        res = run_benchmark([task], methods=["my_gap", "doc"], n_boot=20, progress=False).to_df()
    finally:
        ESTIMATORS.unregister("my_gap")
    mine = res[res.method == "my_gap"].set_index("set")
    by_hand = MeanTopLogitGap().fit(logits=task.reference.logits, labels=task.reference.labels)
    for s in ("a", "b"):
        assert mine.loc[s, "estimate"] == pytest.approx(
            by_hand.estimate(logits=task.targets[s].logits).accuracy
        )
    assert set(res.method) == {"my_gap", "doc"}


def test_results_plot_their_standard_views():
    import matplotlib

    matplotlib.use("Agg")
    from helpers.errors import UnknownNameError

    est = get_estimator("doc").fit(logits=Z[:60], labels=Y[:60]).estimate(logits=Z[60:], interval=True)
    fig = est.plot(true_accuracy=0.7)  # a figure, as the README says, with a labelled x axis
    (ax,) = fig.axes
    assert ax.get_xlabel() == "estimated accuracy (%)" and len(ax.lines) >= 1

    def make(seed):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 3, 150)
        z = rng.normal(size=(150, 3))
        z[np.arange(150), y] += 2.0
        return z, y

    res = run_benchmark([ShiftTask("t", "f", make(0), {"a": make(1), "b": make(2)})], methods=["doc", "atc_mc"],
                        n_boot=20, progress=False)  # fmt: skip
    for kind in ("estimates", "mae", "coverage", "seconds"):
        assert res.plot(kind).figure is not None
    assert len(res.plot("estimates").collections) >= 2  # one scatter per method
    with pytest.raises(UnknownNameError):
        res.plot("pie")
