"""Tests of helpers.estimators.metaset (paper 5 meta-set regression protocol)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import HuberRegressor, LinearRegression

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators.base import Estimate
from helpers.estimators.metaset import MetaSetRegression, compare_measures, metaset_predict, metaset_report


def _noisy_meta_set(seed: int, n: int = 40, slope: float = 0.08, intercept: float = 0.2, noise: float = 0.02):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.0, 8.0, size=n)
    a = np.clip(intercept + slope * s + rng.normal(scale=noise, size=n), 0.0, 1.0)
    return s, a


# ------------------------------------------------------------------------------------------- exact and reference


@pytest.mark.parametrize("model", ["linear", "huber"])
def test_exactly_linear_data_is_recovered(model):
    # acc = 0.05 * score + 0.3 on scores 1..8 -> acc 0.35 .. 0.70
    s = np.arange(1.0, 9.0)
    a = 0.05 * s + 0.3
    reg = MetaSetRegression(model=model).fit(scores=s, accuracies=a)
    assert reg.slope_ == pytest.approx(0.05, abs=1e-6)
    assert reg.intercept_ == pytest.approx(0.3, abs=1e-6)
    res = reg.evaluate(scores=s, accuracies=a)
    assert res["r2"] == pytest.approx(1.0, abs=1e-9)
    assert res["mae"] == pytest.approx(0.0, abs=1e-6)
    assert res["pearson_r"] == pytest.approx(1.0) and res["spearman_rho"] == pytest.approx(1.0)
    assert reg.fit_r2_ == pytest.approx(1.0, abs=1e-9)


def test_linear_matches_sklearn_and_percent_units():
    s, a = _noisy_meta_set(0)
    reg = MetaSetRegression().fit(scores=s, accuracies=a)
    ref = LinearRegression().fit(s[:, None], a)
    assert reg.slope_ == pytest.approx(ref.coef_[0])
    assert reg.intercept_ == pytest.approx(ref.intercept_)
    # in-sample R² of the line == LinearRegression.score == squared Pearson (the authors' number)
    assert reg.fit_r2_ == pytest.approx(ref.score(s[:, None], a))
    assert reg.fit_r2_ == pytest.approx(stats.pearsonr(s, a)[0] ** 2)
    assert reg.fit_spearman_rho_ == pytest.approx(stats.spearmanr(s, a)[0])
    # the authors regress percent: slope and intercept are 100x, R² is the same
    ref_pct = LinearRegression().fit(s[:, None], 100 * a)
    assert ref_pct.coef_[0] == pytest.approx(100 * reg.slope_)
    assert ref_pct.score(s[:, None], 100 * a) == pytest.approx(reg.fit_r2_)


def test_huber_matches_sklearn_on_raw_scores():
    s, a = _noisy_meta_set(1)
    reg = MetaSetRegression(model="huber").fit(scores=s, accuracies=a)
    ref = HuberRegressor(alpha=0.0, max_iter=1000).fit(s[:, None], a)
    assert reg.slope_ == pytest.approx(ref.coef_[0], rel=1e-3)
    assert reg.intercept_ == pytest.approx(ref.intercept_, rel=1e-3, abs=1e-4)


def test_huber_robust_to_one_outlier_set_linear_is_not():
    s = np.arange(1.0, 13.0)
    a = 0.04 * s + 0.3  # 0.34 .. 0.78
    a_bad = a.copy()
    a_bad[-1] = 0.0  # one broken set (e.g. a corruption that destroys the image)
    lin = MetaSetRegression(model="linear").fit(scores=s, accuracies=a_bad)
    hub = MetaSetRegression(model="huber").fit(scores=s, accuracies=a_bad)
    assert abs(hub.slope_ - 0.04) < 0.002
    assert abs(lin.slope_ - 0.04) > 0.01
    clean = np.arange(1.5, 11.5)
    assert hub.evaluate(scores=clean, accuracies=0.04 * clean + 0.3)["mae"] < 0.005
    assert lin.evaluate(scores=clean, accuracies=0.04 * clean + 0.3)["mae"] > 0.02


def test_heldout_r2_can_be_negative_while_in_sample_is_high():
    s, a = _noisy_meta_set(2)
    reg = MetaSetRegression().fit(scores=s, accuracies=a)
    assert reg.fit_r2_ > 0.9
    # held-out sets where the relation is reversed (e.g. a shift the score misreads)
    hs = np.array([1.0, 3.0, 5.0, 7.0])
    ha = np.array([0.8, 0.6, 0.45, 0.3])
    res = reg.evaluate(scores=hs, accuracies=ha)
    assert res["r2"] < 0
    assert res["pearson_r"] < 0 and res["spearman_rho"] == pytest.approx(-1.0)


def test_negative_slope_scores_work():
    # entropy-like score: higher score, lower accuracy
    s = np.array([0.2, 0.5, 0.9, 1.4, 2.0])
    a = 0.9 - 0.3 * s
    reg = MetaSetRegression().fit(scores=s, accuracies=a)
    assert reg.slope_ == pytest.approx(-0.3)
    assert reg.fit_pearson_r_ == pytest.approx(-1.0)
    assert reg.fit_r2_ == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------- estimate / predict


def test_estimate_clips_and_keeps_score():
    reg = MetaSetRegression().fit(scores=[1.0, 2.0, 3.0, 4.0], accuracies=[0.5, 0.6, 0.7, 0.8])
    est = reg.estimate(score=2.5)
    assert isinstance(est, Estimate)
    assert est.accuracy == pytest.approx(0.65) and est.score == 2.5
    assert est.details["slope"] == pytest.approx(0.1) and est.details["intercept"] == pytest.approx(0.4)
    assert est.details["extrapolated"] is False
    hi = reg.estimate(score=10.0)  # raw 1.4 -> clipped to 1
    assert hi.accuracy == 1.0 and hi.details["raw_accuracy"] == pytest.approx(1.4)
    assert hi.details["extrapolated"] is True
    assert reg.estimate(score=-10.0).accuracy == 0.0
    np.testing.assert_allclose(reg.predict([10.0, 2.0]), [1.4, 0.6])
    np.testing.assert_allclose(reg.predict([10.0, 2.0], clip=True), [1.0, 0.6])
    assert "detail_slope" in est.to_frame().columns
    np.testing.assert_allclose(metaset_predict([1, 2, 3, 4], [0.5, 0.6, 0.7, 0.8], [2.5, 10.0]), [0.65, 1.0])


def test_not_fitted_and_keyword_only():
    reg = MetaSetRegression()
    with pytest.raises(NotFittedError):
        reg.estimate(score=1.0)
    with pytest.raises(NotFittedError):
        reg.predict([1.0])
    with pytest.raises(TypeError):
        reg.fit([1.0, 2.0, 3.0], [0.1, 0.2, 0.3])
    assert reg.get_params()["model"] == "linear"


# ------------------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("scores", "accuracies", "match"),
    [
        ([1.0, np.nan, 3.0], [0.1, 0.2, 0.3], "scores: expected finite"),
        ([1.0, 2.0, 3.0], [0.1, np.inf, 0.3], "accuracies"),
        ([1.0, 2.0, 3.0], [0.1, 0.2], "scores=3, accuracies=2"),
        ([1.0, 2.0], [0.1, 0.2], "scores: expected at least 3"),
        ([], [], "scores: expected at least 3"),
        ([[1.0, 2.0, 3.0]], [[0.1, 0.2, 0.3]], "scores: expected a 1-D"),
        ([2.0, 2.0, 2.0], [0.1, 0.2, 0.3], "scores: all 3 values are equal"),
        ([1.0, 2.0, 3.0], [10.0, 20.0, 30.0], "accuracies: expected accuracies as fractions.*percent"),
        ([1.0, 2.0, 3.0], [-0.1, 0.2, 0.3], "accuracies: expected accuracies as fractions"),
    ],
)
def test_fit_bad_inputs(scores, accuracies, match):
    with pytest.raises(InputValidationError, match=match):
        MetaSetRegression().fit(scores=scores, accuracies=accuracies)


def test_other_bad_inputs():
    with pytest.raises(InputValidationError, match="model: expected one of"):
        MetaSetRegression(model="ridge").fit(scores=[1, 2, 3], accuracies=[0.1, 0.2, 0.3])
    with pytest.raises(InputValidationError, match="epsilon"):
        MetaSetRegression(model="huber", epsilon=0.5).fit(scores=[1, 2, 3], accuracies=[0.1, 0.2, 0.3])
    reg = MetaSetRegression().fit(scores=[1, 2, 3], accuracies=[0.1, 0.2, 0.3])
    with pytest.raises(InputValidationError, match="score: expected one scalar"):
        reg.estimate(score=[1.0, 2.0])
    with pytest.raises(InputValidationError, match="score: expected finite"):
        reg.estimate(score=float("nan"))
    with pytest.raises(InputValidationError, match="accuracies: all 3 values are equal"):
        reg.evaluate(scores=[1, 2, 3], accuracies=[0.5, 0.5, 0.5])


# ------------------------------------------------------------------------------------------- reports


def test_metaset_report_rows_and_values():
    fs, fa = _noisy_meta_set(3, n=30)
    hs, ha = _noisy_meta_set(4, n=10)
    us, ua = np.array([2.0, 6.0]), np.array([0.40, 0.65])
    rep = metaset_report(fs, fa, hs, ha, us, ua)
    assert list(rep.columns) == ["split", "measure", "value", "n_sets", "model"]
    assert not rep.duplicated(["split", "measure"]).any()
    got = {(r.split, r.measure) for r in rep.itertuples()}
    for split in ("fit", "heldout"):
        assert {(split, m) for m in ("r2", "pearson_r", "spearman_rho", "mae", "mae_pp")} <= got
    assert {(s, m) for s, m in got if s == "unseen"} == {("unseen", "mae"), ("unseen", "mae_pp")}
    v = rep.set_index(["split", "measure"])["value"]
    assert v["fit", "r2"] == pytest.approx(stats.pearsonr(fs, fa)[0] ** 2)  # in-sample, like the authors
    assert v["heldout", "spearman_rho"] == pytest.approx(stats.spearmanr(hs, ha)[0])
    ref = LinearRegression().fit(fs[:, None], fa)
    assert v["unseen", "mae"] == pytest.approx(np.mean(np.abs(ref.predict(us[:, None]) - ua)))
    assert v["unseen", "mae_pp"] == pytest.approx(100 * v["unseen", "mae"])
    assert rep.set_index(["split", "measure"]).loc[("heldout", "r2"), "n_sets"] == 10


def test_metaset_report_optional_splits_and_small_heldout():
    fs, fa = _noisy_meta_set(5, n=12)
    only_fit = metaset_report(fs, fa)
    assert set(only_fit["split"]) == {"fit"}
    small = metaset_report(fs, fa, [1.0, 2.0], [0.3, 0.4])  # 2 held-out sets: MAE only
    assert set(small.loc[small["split"] == "heldout", "measure"]) == {"mae", "mae_pp"}
    with pytest.raises(InputValidationError, match="heldout_acc: required"):
        metaset_report(fs, fa, heldout_scores=[1.0, 2.0, 3.0])
    with pytest.raises(InputValidationError, match="heldout_scores/heldout_acc"):
        metaset_report(fs, fa, [1.0, 2.0, 3.0], [0.5, 0.5, 0.5])
    with pytest.raises(InputValidationError, match="unseen_scores"):
        metaset_report(fs, fa, unseen_scores=[np.nan], unseen_acc=[0.5])


def test_compare_measures_dict_and_frame_agree_with_report():
    rng = np.random.default_rng(6)
    n = 40
    acc = rng.uniform(0.2, 0.9, size=n)
    good = 10 * acc + rng.normal(scale=0.2, size=n)  # strongly related
    bad = rng.normal(size=n)  # unrelated
    labels = np.array(["fit"] * 25 + ["heldout"] * 12 + ["unseen"] * 3)
    by_dict = compare_measures({"good": good, "bad": bad}, acc, labels)
    by_frame = compare_measures(pd.DataFrame({"good": good, "bad": bad}), acc, labels)
    pd.testing.assert_frame_equal(by_dict, by_frame)
    assert list(by_dict.columns) == ["score", "split", "measure", "value", "n_sets", "model"]
    direct = metaset_report(good[:25], acc[:25], good[25:37], acc[25:37], good[37:], acc[37:])
    mine = by_dict[by_dict["score"] == "good"].drop(columns="score").reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, direct)
    wide = by_dict.pivot_table(index=["split", "measure"], columns="score", values="value")
    assert wide.loc[("heldout", "r2"), "good"] > 0.9 > wide.loc[("heldout", "r2"), "bad"]
    assert wide.loc[("unseen", "mae"), "good"] < wide.loc[("unseen", "mae"), "bad"]


def test_compare_measures_bad_inputs():
    acc = np.linspace(0.2, 0.8, 6)
    labels = ["fit"] * 4 + ["unseen"] * 2
    with pytest.raises(InputValidationError, match="split_labels: expected values in"):
        compare_measures({"a": np.arange(6.0)}, acc, ["fit"] * 4 + ["test"] * 2)
    with pytest.raises(InputValidationError, match="split_labels: expected at least 3 'fit'"):
        compare_measures({"a": np.arange(6.0)}, acc, ["fit"] * 2 + ["unseen"] * 4)
    with pytest.raises(InputValidationError, match="accuracies=6, split_labels=5"):
        compare_measures({"a": np.arange(6.0)}, acc, labels[:5])
    with pytest.raises(InputValidationError, match=r"scores\['a'\]: expected 6 values"):
        compare_measures({"a": np.arange(5.0)}, acc, labels)
    with pytest.raises(InputValidationError, match=r"scores\['b'\]: expected finite"):
        compare_measures({"a": np.arange(6.0), "b": [1, 2, np.nan, 4, 5, 6]}, acc, labels)
    with pytest.raises(InputValidationError, match=r"scores\['c'\].*scores: all 4 values are equal"):
        compare_measures({"c": [1, 1, 1, 1, 2, 3]}, acc, labels)
    with pytest.raises(InputValidationError, match="scores: expected a pandas DataFrame or a mapping"):
        compare_measures(np.arange(6.0), acc, labels)
    with pytest.raises(InputValidationError, match="scores: expected at least one measure"):
        compare_measures({}, acc, labels)
    assert math.isfinite(compare_measures({"a": np.arange(6.0)}, acc, labels)["value"].iloc[0])
