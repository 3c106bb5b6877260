"""Percentile bootstrap intervals over target examples, for every estimator."""

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import (
    ATC,
    COT,
    MDE,
    AverageConfidence,
    FrechetDistance,
    NuclearNorm,
    bootstrap_interval,
    get_estimator,
    list_estimators,
    percentile_interval,
    resampled_means,
    softmax,
)


def _data(n, k=5, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    y = (rng.random(n)[:, None] > np.cumsum(softmax(z), axis=1)).sum(axis=1)
    return z, np.minimum(y, k - 1)


def _fitted(name, z, y):
    est = get_estimator(name, n_boot=40)
    if name in ("atc_mc", "atc_ne", "doc", "confusion_matrix_shift", "cott"):
        est.fit(logits=z, labels=y)
    elif name == "cot":
        est.fit(labels=y, logits=z)
    elif name == "frechet":
        est.fit(logits=z)
    elif name == "cbpe":
        est.fit(logits=z, labels=y)
    elif name in ("aline_s", "aline_d"):  # a collection: three more models on the reference
        est.fit(logits=z, labels=y, others=_others(z))
    elif name in ("stacked", "stacked_sota"):  # learn from labelled shifted sets
        shifted = {i: _data(300, seed=10 + i) for i in range(4)}
        shifted = {i: (z_ * (1 - 0.2 * i), y_) for i, (z_, y_) in shifted.items()}
        est.fit(logits=z, labels=y, shifted=shifted)
    return est


def _others(z):
    rng = np.random.default_rng(7)
    return {f"m{i}": z * (1 - 0.2 * i) + rng.normal(size=z.shape) for i in range(1, 4)}


def _target(name, z):
    kw = {"logits": z}
    if name in ("aline_s", "aline_d"):
        kw["others"] = _others(z)
    if name == "agreement":
        kw["other_logits"] = z + np.random.default_rng(9).normal(size=z.shape)
    if name in ("dispersion", "gdscore"):  # penultimate features beside the logits
        kw["features"] = np.hstack([z, np.random.default_rng(8).normal(size=(len(z), 3))])
    return kw


@pytest.mark.parametrize("name", list_estimators())
def test_every_estimator_gets_an_interval(name):
    zr, yr = _data(600, seed=1)
    zt, _ = _data(500, seed=2)
    est = _fitted(name, zr, yr)
    res = est.measure(**_target(name, zt), interval=True)
    if est.output == "accuracy":
        assert 0.0 <= res.lower <= res.accuracy <= res.upper <= 1.0
    else:
        lo, hi = res.details["score_lower"], res.details["score_upper"]
        assert lo < hi and res.lower is None and res.upper is None
        if name != "frechet":  # a distance's bootstrap is biased upward (see FrechetDistance docstring)
            assert lo <= res.score <= hi
    assert res.details["level"] == 0.95 and res.details["n_boot"] == 40
    assert est.measure(**_target(name, zt)).lower is None  # interval=False: no interval


def test_interval_narrows_with_n_and_is_seeded():
    widths = []
    for n in (400, 10000):
        z, _ = _data(n, seed=3)
        r = AverageConfidence(n_boot=200).estimate(logits=z, interval=True)
        widths.append(r.upper - r.lower)
    assert widths[1] < widths[0] / 3  # ~ 1/sqrt(n): sqrt(25) = 5
    z, _ = _data(1000)
    a = MDE(random_state=7).measure(logits=z, interval=True)
    b = MDE(random_state=7).measure(logits=z, interval=True)
    assert (a.details["score_lower"], a.details["score_upper"]) == (
        b.details["score_lower"],
        b.details["score_upper"],
    )


def test_width_matches_normal_theory_for_a_mean():
    rng = np.random.default_rng(4)
    x = rng.random(20000)
    means = resampled_means(x, n_boot=400, random_state=0)[:, 0]
    assert means.mean() == pytest.approx(x.mean(), abs=3 * x.std() / np.sqrt(20000))
    assert means.std() == pytest.approx(x.std() / np.sqrt(20000), rel=0.15)


def test_binary_route_matches_resampling_route():
    # ATC replicates are exact Binomial(n, p_hat)/n; compare with explicit resampling of the indicator
    rng = np.random.default_rng(5)
    hits = rng.random(5000) < 0.8
    explicit = resampled_means(hits.astype(float), n_boot=2000, random_state=1)[:, 0]
    est = ATC().fit(confidence=np.linspace(0, 1, 100), correct=np.r_[np.zeros(20), np.ones(80)])
    res = bootstrap_interval(est, n_boot=2000, confidence=np.where(hits, 0.9, 0.1))
    assert res.point == pytest.approx(hits.mean())
    assert res.replicates.std() == pytest.approx(explicit.std(), rel=0.1)


def test_weighted_routes_match_explicit_resamples():
    # nuclear norm / Fréchet / COT recompute with integer weights; check one replicate against an explicit resample
    z, y = _data(300, k=4, seed=6)
    idx = np.random.default_rng(0).integers(0, 300, 300)
    counts = np.bincount(idx, minlength=300).astype(float)
    p = softmax(z)
    nn = NuclearNorm()
    assert nn._weighted(nn._prepare_target(probs=p), counts) == pytest.approx(
        nn._point(nn._prepare_target(probs=p[idx]))
    )
    fd = FrechetDistance().fit(logits=z[:150])
    assert fd._weighted(fd._prepare_target(logits=z), counts) == pytest.approx(
        fd._point(fd._prepare_target(logits=z[idx]))
    )
    # the vectorised (column-means) routes agree with the weighted recomputation for the same counts
    for est, prep in ((nn, nn._prepare_target(probs=p)), (fd, fd._prepare_target(logits=z))):
        cols = est._columns(prep)
        vec = est._from_means((counts @ cols / 300)[None, :], prep)[0]
        assert vec == pytest.approx(est._weighted(prep, counts), rel=1e-9)
    cot = COT().fit(labels=y)
    assert cot._weighted(cot._prepare_target(probs=p), counts) == pytest.approx(
        cot._point(cot._prepare_target(probs=p[idx])), abs=1e-10
    )


def test_percentile_interval_and_bad_params():
    assert percentile_interval(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0))
    z, _ = _data(50)
    with pytest.raises(InputValidationError, match="n_boot"):
        AverageConfidence(n_boot=1).estimate(logits=z, interval=True)
    with pytest.raises(InputValidationError, match="level"):
        AverageConfidence(level=95).estimate(logits=z, interval=True)
    with pytest.raises(InputValidationError, match="n_boot"):
        bootstrap_interval(AverageConfidence(), n_boot=0.5, logits=z)
