"""helpers.experiments.p2_selective.report and helpers.experiments.p2_selective.suite: tables on hand-built frames, a tiny cached training run."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from helpers.errors import InputValidationError, UnknownNameError
from helpers.experiments.p2_selective import report as rep
from helpers.selective import auc, disca

# model "good": ranks its one error last; model "bad": its one error is the most confident answer
CONF = [0.9, 0.8, 0.7, 0.6]
FRAME = pd.DataFrame(
    dict(
        model=["good"] * 4 + ["bad"] * 4 + ["good"] * 4 + ["bad"] * 4,
        split=["id"] * 8 + ["ood"] * 8,
        confidence=CONF * 4,
        correct=[1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1],
    )
)


def test_split_data_and_summary():
    d = rep.split_data(FRAME, "id")
    assert list(d) == ["good", "bad"]
    s = rep.selective_summary(FRAME).set_index(["split", "model"])
    # good (id): accuracies 1, 1, 1, 3/4 -> AUC = 3.75/4; accuracy first drops below 1 at 0.6 -> a = 0.6
    assert s.loc[("id", "good"), "auc"] == pytest.approx(3.75 / 4)
    assert s.loc[("id", "good"), "a"] == 0.6
    # bad (id): accuracies 0, 1/2, 2/3, 3/4 -> AUC = 1.9167/4; a = 0.9
    assert s.loc[("id", "bad"), "auc"] == pytest.approx((0 + 1 / 2 + 2 / 3 + 3 / 4) / 4)
    assert s.loc[("id", "bad"), "disca"] == pytest.approx(disca(CONF, [0, 1, 1, 1]).score)
    assert s.loc[("id", "good"), "accuracy"] == 0.75
    with pytest.raises(InputValidationError, match="split"):
        rep.split_data(FRAME, "test")
    with pytest.raises(InputValidationError, match="missing column"):
        rep.selective_summary(FRAME.drop(columns="correct"))


def test_b_table():
    b = rep.b_table(FRAME, "id")
    # good: accuracy 3/4 at 0.6 is below 1.00 … 0.80 -> 0.6; never below 0.75 … 0.55 -> lowest 0.6
    assert set(b.loc["good"]) == {0.6}
    # bad: accuracy 0 at 0.9 is below every threshold -> 0.9; lowest MaxProb 0.6
    assert b.loc["bad", "0.55"] == 0.9 and b.loc["bad", "lowest"] == 0.6


def test_scores_rankings_kendall():
    s = rep.selective_summary(FRAME)
    scores = rep.scores_table(s, {"good": 2e6, "bad": 5e5}, {"good": 0.02, "bad": 0.01}, optimal_params=1e6)
    # compute_params: 0.5 and 2; compute_time with median reference 0.015: 0.75 and 1.5
    assert scores.compute_params.tolist() == [0.5, 2.0]
    np.testing.assert_allclose(scores.compute_time, [0.75, 1.5])
    g = scores.loc["good"]
    assert g.didma == pytest.approx(0.5 * g.disca + 0.25)
    assert g.nidma == pytest.approx(0.5 * g.didma + 0.5 * g.disca_ood)
    ranks = rep.ranking_table(scores, ["auc", "aurc", "n_params"])
    assert ranks.loc["good"].tolist() == [1, 1, 2]  # AURC and n_params rank ascending
    taus = rep.kendall_matrix(ranks)
    assert taus.loc["auc", "aurc"] == 1.0 and taus.loc["auc", "n_params"] == -1.0
    with pytest.raises(InputValidationError, match="missing"):
        rep.scores_table(s, {"good": 1.0}, {"good": 1.0, "bad": 1.0})
    with pytest.raises(InputValidationError, match="columns"):
        rep.ranking_table(scores, ["nope"])


def test_failure_cases_and_plots():
    cases = rep.failure_cases(FRAME, max_coverage=0.5)
    # good has the higher AUC everywhere and is perfect on the tail: no tail case; bad's error is more confident
    assert not (cases.model_a == "bad").any()
    fig = rep.plot_curves(FRAME)
    assert len(fig.axes) == 2
    # a hand-made case row is drawn as one panel pair
    one = pd.DataFrame([dict(kind="tail", model_a="good", model_b="bad", split="id")])
    fig = rep.plot_pairs(FRAME, one, max_coverage=0.5, ncols=2)
    assert len(fig.axes[0].lines) == 3  # two curves + the tail marker
    with pytest.raises(InputValidationError, match="no failure case"):
        rep.plot_pairs(FRAME, one.iloc[:0])
    # max_panels keeps the cases with the largest relative gap |b - a| / |a|, and labels the outer axes
    many = pd.DataFrame(
        [dict(kind="plateau", model_a="good", model_b="bad", split="id", value_a=1.0, value_b=v) for v in (1.1, 3, 2)]
    )
    fig = rep.plot_pairs(FRAME, many, ncols=4, max_panels=2)
    drawn = [ax for ax in fig.axes if ax.lines]
    assert len(drawn) == 2 and drawn[0].get_ylabel() == "accuracy" and drawn[1].get_xlabel() == "coverage"
    assert auc(CONF, [1, 1, 1, 0]) > auc(CONF, [0, 1, 1, 1])


def test_sentiment_suite_tiny_bow_run_is_cached():
    from helpers.experiments.p2_selective.suite import (
        SuiteConfig,
        SuiteData,
        predictions_frame,
        suite_predictions,
    )
    from helpers.paths import cache_dir

    pos = ["a great wonderful film", "great acting and a wonderful plot", "wonderful , great fun"]
    neg = ["a terrible boring film", "boring plot and terrible acting", "terrible , boring mess"]
    texts = (pos + neg) * 4
    labels = np.array(([1] * 3 + [0] * 3) * 4)
    data = SuiteData(texts, labels, pos + neg, np.array([1] * 3 + [0] * 3), ["great fun", "boring mess"],
                     np.array([1, 0]))  # fmt: skip
    cfg = SuiteConfig(overrides={"bow_sum": {"epochs": 20, "lr": 0.1, "batch_size": 8}})
    preds = suite_predictions(data, models=["bow_sum"], config=cfg, progress=False)
    p = preds["bow_sum"]
    assert p["id_logits"].shape == (6, 2) and p["ood_logits"].shape == (2, 2)
    assert int(p["n_params"]) > 0 and float(p["id_seconds"]) > 0
    frame = predictions_frame(preds, data)
    assert frame.groupby("split").correct.mean().to_dict() == {"id": 1.0, "ood": 1.0}
    assert frame.confidence.between(0.5, 1.0).all()
    assert any((cache_dir() / "checkpoints" / "02_selective").iterdir())
    again = suite_predictions(data, models=["bow_sum"], config=cfg, progress=False)["bow_sum"]
    np.testing.assert_array_equal(again["id_logits"], p["id_logits"])
    assert float(again["id_seconds"]) == float(p["id_seconds"])  # read from the cache, not re-measured
    with pytest.raises(UnknownNameError):
        suite_predictions(data, models=["gpt"], config=cfg)
