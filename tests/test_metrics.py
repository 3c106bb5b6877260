"""Tests of helpers.metrics: hand-computed cases, scipy/sklearn as independent references, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from helpers import metrics as m
from helpers.errors import InputValidationError

RNG = np.random.default_rng(12345)


# ------------------------------------------------------------------------------------------- absolute errors


def test_absolute_error_and_mae_by_hand():
    # |0.5-0.4| = 0.1, |0.9-1.0| = 0.1, |0.2-0.2| = 0  -> MAE = 0.2/3
    pred = [0.5, 0.9, 0.2]
    true = [0.4, 1.0, 0.2]
    np.testing.assert_allclose(m.absolute_error(pred, true), [0.1, 0.1, 0.0], atol=1e-12)
    assert m.mean_absolute_error(pred, true) == pytest.approx(0.2 / 3)
    assert m.mean_absolute_error(0.7, 0.65) == pytest.approx(0.05)  # scalars = one set


def test_mae_matches_sklearn():
    p, t = RNG.random(30), RNG.random(30)
    assert m.mean_absolute_error(p, t) == pytest.approx(skm.mean_absolute_error(t, p))


@pytest.mark.parametrize(
    ("pred", "true", "match"),
    [
        ([0.1, np.nan], [0.1, 0.2], "predicted"),
        ([0.1, 0.2], [0.1, np.inf], "true"),
        ([0.1, 0.2, 0.3], [0.1, 0.2], "predicted=3, true=2"),
        ([], [], "predicted"),
        ([[0.1, 0.2]], [[0.1, 0.2]], "predicted"),
    ],
)
def test_mae_bad_inputs(pred, true, match):
    with pytest.raises(InputValidationError, match=match):
        m.mean_absolute_error(pred, true)


# ------------------------------------------------------------------------------------------- error detection


def test_error_detection_by_hand():
    # positive = misclassified.
    # pred flags: 1 1 0 0 1 0
    # true errs : 1 0 1 0 1 0
    # TP = idx 0, 4 -> 2; FP = idx 1 -> 1; FN = idx 2 -> 1; TN = idx 3, 5 -> 2
    # precision = 2/3, recall = 2/3, F1 = 2*2/(2*2+1+1) = 4/6
    res = m.error_detection_scores(predicted_error=[1, 1, 0, 0, 1, 0], true_error=[1, 0, 1, 0, 1, 0])
    assert (res["tp"], res["fp"], res["fn"], res["tn"], res["n"]) == (2, 1, 1, 2, 6)
    assert res["precision"] == pytest.approx(2 / 3)
    assert res["recall"] == pytest.approx(2 / 3)
    assert res["f1"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(5))
def test_error_detection_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    pred = rng.random(200) < 0.3
    true = rng.random(200) < 0.25
    res = m.error_detection_scores(predicted_error=pred, true_error=true)
    p, r, f, _ = skm.precision_recall_fscore_support(
        true, pred, average="binary", pos_label=1, zero_division=0
    )
    assert (res["precision"], res["recall"], res["f1"]) == pytest.approx((p, r, f))


def test_error_detection_zero_division():
    # nothing flagged, some true errors: precision undefined -> zero_division; recall = 0; F1 = 0/(0+0+2) = 0
    res = m.error_detection_scores(predicted_error=[0, 0, 0], true_error=[1, 0, 1])
    assert res["precision"] == 0.0 and res["recall"] == 0.0 and res["f1"] == 0.0
    res = m.error_detection_scores(predicted_error=[0, 0, 0], true_error=[1, 0, 1], zero_division=1.0)
    assert res["precision"] == 1.0 and res["recall"] == 0.0 and res["f1"] == 0.0
    # no errors and nothing flagged: every ratio undefined
    res = m.error_detection_scores(predicted_error=[0, 0], true_error=[0, 0], zero_division=float("nan"))
    assert all(math.isnan(res[k]) for k in ("precision", "recall", "f1"))
    res = m.error_detection_scores(predicted_error=[0, 0], true_error=[0, 0], zero_division=1.0)
    assert (res["precision"], res["recall"], res["f1"]) == (1.0, 1.0, 1.0)
    # same convention as sklearn
    p, r, f, _ = skm.precision_recall_fscore_support([0, 0], [0, 0], average="binary", zero_division=1.0)
    assert (p, r, f) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"predicted_error": [0, 2], "true_error": [0, 1]}, "predicted_error"),
        ({"predicted_error": [0, 1], "true_error": [0.5, 1]}, "true_error"),
        ({"predicted_error": [0, 1, 1], "true_error": [0, 1]}, "predicted_error=3, true_error=2"),
        ({"predicted_error": [], "true_error": []}, "predicted_error"),
        ({"predicted_error": [[0, 1]], "true_error": [0, 1]}, "predicted_error"),
        ({"predicted_error": [0, 1], "true_error": [0, 1], "zero_division": 2.0}, "zero_division"),
    ],
)
def test_error_detection_bad_inputs(kwargs, match):
    with pytest.raises(InputValidationError, match=match):
        m.error_detection_scores(**kwargs)


def test_error_detection_is_keyword_only():
    with pytest.raises(TypeError):
        m.error_detection_scores([0, 1], [0, 1])


# ------------------------------------------------------------------------------------------- CR / IR


def test_correct_incorrect_recall_by_hand():
    # gold : 1 1 1 0 0
    # pred : 1 0 1 1 0
    # TC = 2 (idx 0, 2), FI = 1 (idx 1)  -> CR = 2/3
    # TI = 1 (idx 4),    FC = 1 (idx 3)  -> IR = 1/2
    gold = [1, 1, 1, 0, 0]
    pred = [1, 0, 1, 1, 0]
    assert m.correct_recall(predicted_correct=pred, gold_correct=gold) == pytest.approx(2 / 3)
    assert m.incorrect_recall(predicted_correct=pred, gold_correct=gold) == pytest.approx(1 / 2)
    # CR is recall of the "correct" class, IR recall of the "incorrect" class
    assert m.correct_recall(predicted_correct=pred, gold_correct=gold) == pytest.approx(
        skm.recall_score(gold, pred, pos_label=1)
    )
    assert m.incorrect_recall(predicted_correct=pred, gold_correct=gold) == pytest.approx(
        skm.recall_score(gold, pred, pos_label=0)
    )


def test_recall_undefined_when_class_absent():
    assert math.isnan(m.correct_recall(predicted_correct=[1, 0], gold_correct=[0, 0]))
    assert math.isnan(m.incorrect_recall(predicted_correct=[1, 0], gold_correct=[1, 1]))
    assert m.incorrect_recall(predicted_correct=[1, 0], gold_correct=[1, 1], zero_division=0.0) == 0.0


def test_recall_bad_inputs():
    with pytest.raises(InputValidationError, match="gold_correct"):
        m.correct_recall(predicted_correct=[1, 0], gold_correct=[1, np.nan])
    with pytest.raises(InputValidationError, match="predicted_correct=3, gold_correct=2"):
        m.incorrect_recall(predicted_correct=[1, 0, 1], gold_correct=[1, 0])


# ------------------------------------------------------------------------------------------- intervals


def test_interval_coverage_and_width_by_hand():
    # sets: 0.5 in [0.4, 0.6] yes; 0.7 in [0.75, 0.9] no; 0.3 in [0.3, 0.3] yes (closed)  -> 2/3
    # widths 0.2, 0.15, 0.0 -> mean 0.35/3
    true = [0.5, 0.7, 0.3]
    lower = [0.4, 0.75, 0.3]
    upper = [0.6, 0.9, 0.3]
    assert m.interval_coverage(true, lower=lower, upper=upper) == pytest.approx(2 / 3)
    assert m.mean_interval_width(lower=lower, upper=upper) == pytest.approx(0.35 / 3)
    assert m.interval_coverage(0.5, lower=0.4, upper=0.6) == 1.0


def test_interval_bad_inputs():
    with pytest.raises(InputValidationError, match="lower/upper"):
        m.interval_coverage([0.5], lower=[0.6], upper=[0.4])
    with pytest.raises(InputValidationError, match="true=2, lower=1"):
        m.interval_coverage([0.5, 0.6], lower=[0.4], upper=[0.7])
    with pytest.raises(InputValidationError, match="upper"):
        m.mean_interval_width(lower=[0.4], upper=[np.nan])


# ------------------------------------------------------------------------------------------- association


def test_r2_by_hand_and_negative():
    # y = [1, 2, 3], ŷ = [1, 2, 4]: SS_res = 1, SS_tot = 2 -> R² = 0.5
    assert m.r2_score(true=[1, 2, 3], predicted=[1, 2, 4]) == pytest.approx(0.5)
    # predictions anti-correlated: ŷ = [3, 2, 1]: SS_res = 8 -> R² = 1 - 8/2 = -3
    assert m.r2_score(true=[1, 2, 3], predicted=[3, 2, 1]) == pytest.approx(-3.0)


def test_r2_matches_sklearn_and_squared_pearson_in_sample():
    x = RNG.normal(size=40)
    y = 0.3 * x + RNG.normal(scale=0.5, size=40)
    pred = RNG.normal(size=40)
    assert m.r2_score(true=y, predicted=pred) == pytest.approx(skm.r2_score(y, pred))
    # OLS line scored on its own data: R² of predictions == squared Pearson
    slope, intercept = np.polyfit(x, y, 1)
    fitted = slope * x + intercept
    assert m.r2_score(true=y, predicted=fitted) == pytest.approx(m.squared_pearson(x, y))


def test_pearson_spearman_kendall_match_scipy_with_ties():
    for seed in range(6):
        rng = np.random.default_rng(seed)
        x = rng.integers(0, 6, size=60).astype(float)  # many ties
        y = x + rng.integers(-2, 3, size=60)
        assert m.pearson_r(x, y) == pytest.approx(stats.pearsonr(x, y)[0])
        assert m.spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y)[0])
        assert m.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y)[0])
        assert m.kendall_tau(x, y, chunk_size=7) == pytest.approx(stats.kendalltau(x, y)[0])


def test_rank_and_correlation_by_hand():
    # x = [10, 20, 20, 30] -> ranks [1, 2.5, 2.5, 4]
    np.testing.assert_allclose(m.rankdata_average([10, 20, 20, 30]), [1, 2.5, 2.5, 4])
    np.testing.assert_allclose(m.rankdata_average([3.0, 1.0, 2.0]), stats.rankdata([3.0, 1.0, 2.0]))
    # monotone but non-linear: ρ = τ = 1, r < 1
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = x**3
    assert m.spearman_rho(x, y) == pytest.approx(1.0)
    assert m.kendall_tau(x, y) == pytest.approx(1.0)
    assert m.pearson_r(x, y) < 1.0
    # x = [1,2,3], y = [1,3,2]: pairs (12)+, (13)+, (23)-  -> C=2, D=1, τ = 1/3
    assert m.kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert m.pearson_r(x, -x) == pytest.approx(-1.0)


@pytest.mark.parametrize("fn", [m.pearson_r, m.spearman_rho, m.kendall_tau, m.squared_pearson])
def test_correlations_bad_inputs(fn):
    with pytest.raises(InputValidationError, match="x: all 3 values are equal"):
        fn([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(InputValidationError, match="y: all 3 values are equal"):
        fn([1.0, 2.0, 3.0], [0.5, 0.5, 0.5])
    with pytest.raises(InputValidationError, match="y"):
        fn([1.0, 2.0, 3.0], [0.5, np.nan, 0.1])
    with pytest.raises(InputValidationError, match="x=3, y=2"):
        fn([1.0, 2.0, 3.0], [0.5, 0.1])
    with pytest.raises(InputValidationError, match="x: expected at least 2"):
        fn([1.0], [2.0])
    with pytest.raises(InputValidationError, match="x: expected a 1-D"):
        fn([[1.0, 2.0]], [[1.0, 2.0]])


def test_r2_bad_inputs():
    with pytest.raises(InputValidationError, match="true: all 3 values are equal"):
        m.r2_score(true=[0.5, 0.5, 0.5], predicted=[0.1, 0.2, 0.3])
    with pytest.raises(InputValidationError, match="predicted"):
        m.r2_score(true=[0.5, 0.6], predicted=[0.1, np.nan])
    with pytest.raises(TypeError):
        m.r2_score([0.5, 0.6], [0.5, 0.6])


# ------------------------------------------------------------------------------------------------------ ROC AUC


def test_roc_auc_by_hand_and_against_sklearn():
    # positives 0.35, 0.8; negatives 0.1, 0.4: pairs (0.35>0.1) (0.35<0.4) (0.8>0.1) (0.8>0.4) -> 3/4
    assert m.roc_auc(scores=[0.1, 0.4, 0.35, 0.8], labels=[0, 0, 1, 1]) == pytest.approx(0.75)
    assert m.roc_auc(scores=[1, 1, 1, 1], labels=[0, 1, 0, 1]) == pytest.approx(0.5)  # ties count half
    s, y = RNG.normal(size=300).round(1), RNG.integers(0, 2, 300)  # rounding makes ties
    assert m.roc_auc(scores=s, labels=y) == pytest.approx(skm.roc_auc_score(y, s))
    assert math.isnan(m.roc_auc(scores=[0.1, 0.2], labels=[1, 1]))
    with pytest.raises(InputValidationError):
        m.roc_auc(scores=[0.1, 0.2], labels=[0, 2])
    with pytest.raises(InputValidationError):
        m.roc_auc(scores=[0.1, np.nan], labels=[0, 1])
    with pytest.raises(InputValidationError):
        m.roc_auc(scores=[0.1, 0.2, 0.3], labels=[0, 1])
