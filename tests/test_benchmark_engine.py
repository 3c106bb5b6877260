"""Benchmark engine: hand-computed MAE / coverage / width / ranks, applicability, bad input, determinism."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from helpers.benchmark import (
    COLUMNS,
    BenchmarkResult,
    ShiftTask,
    applicable,
    external_rows,
    run_benchmark,
)
from helpers.errors import InputValidationError, UnknownNameError
from helpers.estimators import MetaSetRegression, get_estimator

L3, L9 = math.log(3.0), math.log(9.0)


def _const(logit1: float, labels) -> tuple[np.ndarray, np.ndarray]:
    """Every row has logits [0, logit1] (max-softmax confidence 1 / (1 + exp(-logit1)), prediction class 1)."""
    y = np.asarray(labels)
    return np.tile([0.0, logit1], (y.size, 1)), y


def _hand_task() -> ShiftTask:
    # reference: confidence 0.75, accuracy 0.5 -> DoC offset = 0.25
    # target a: confidence 0.75, accuracy 0.75; target b: confidence 0.9, accuracy 0.5
    return ShiftTask(
        name="hand",
        family="fam",
        reference=_const(L3, [1, 1, 0, 0]),
        targets={"a": _const(L3, [1, 1, 1, 0]), "b": _const(L9, [1, 0, 1, 0])},
    )


def test_hand_computed_estimates_errors_intervals_and_ranks():
    res = run_benchmark([_hand_task()], methods=["average_confidence", "doc", "maxprob"], progress=False)
    df = res.to_df().set_index(["method", "set"])
    assert set(COLUMNS) <= set(res.to_df().columns)
    # average confidence: 0.75 on a (exact, covered, width 0), 0.9 on b (error 0.4, not covered)
    assert df.loc[("average_confidence", "a"), "estimate"] == pytest.approx(0.75)
    assert df.loc[("average_confidence", "a"), "abs_error"] == pytest.approx(0.0, abs=1e-12)
    assert df.loc[("average_confidence", "a"), "width"] == pytest.approx(0.0, abs=1e-12)
    assert bool(df.loc[("average_confidence", "a"), "covered"])
    assert df.loc[("average_confidence", "b"), "abs_error"] == pytest.approx(0.4)
    assert not bool(df.loc[("average_confidence", "b"), "covered"])
    # DoC: target confidence - 0.25 -> 0.5 (error 0.25) and 0.65 (error 0.15)
    assert df.loc[("doc", "a"), "estimate"] == pytest.approx(0.5)
    assert df.loc[("doc", "b"), "abs_error"] == pytest.approx(0.15)
    # MaxProb(gamma=0.5): every example counts -> 1.0; errors 0.25 and 0.5
    assert df.loc[("maxprob", "b"), "estimate"] == pytest.approx(1.0)

    mae = res.mae()
    assert mae.loc["average_confidence", "fam"] == pytest.approx(0.2)
    assert mae.loc["doc", "fam"] == pytest.approx(0.2)
    assert mae.loc["maxprob", "overall"] == pytest.approx(0.375)
    cov = res.coverage()
    assert cov.loc["average_confidence", "fam"] == pytest.approx(0.5)
    assert cov.loc["maxprob", "fam"] == pytest.approx(0.0)
    ranks = res.ranks()
    assert ranks.loc["average_confidence", "fam"] == pytest.approx(1.5)  # tie with DoC
    assert ranks.loc["doc", "fam"] == pytest.approx(1.5)
    assert ranks.loc["maxprob", "fam"] == pytest.approx(3.0)
    assert ranks.loc["maxprob", "overall_rank"] == 3
    summary = res.summary()
    assert summary.index[-1] == "maxprob"
    assert (res.seconds()["overall"] >= 0).all()


def test_ranks_over_families_and_external_rows():
    def rows(method, family, errors):
        est = {
            f"s{i}": {"estimate": 0.5 + e, "true_accuracy": 0.5, "lower": 0.4, "upper": 0.7}
            for i, e in enumerate(errors)
        }
        return external_rows(
            task=f"t-{family}", family=family, method=method, kind="accuracy", estimates=est, seconds=2.0
        )

    empty = BenchmarkResult(pd.DataFrame(columns=COLUMNS))
    res = empty.add_rows(
        [
            rows("x", "f1", [0.1, 0.1]),
            rows("y", "f1", [0.3, 0.1]),
            rows("x", "f2", [0.3]),
            rows("y", "f2", [0.0]),
            rows("z", "f2", [0.1]),
        ]
    )
    ranks = res.ranks()
    # f1: x (0.1) < y (0.2); f2: y (0.0) < z (0.1) < x (0.3); z ran only on f2
    assert ranks.loc["x", "f1"] == 1 and ranks.loc["y", "f1"] == 2 and math.isnan(ranks.loc["z", "f1"])
    assert ranks.loc["x", "mean_rank"] == pytest.approx(2.0)
    assert ranks.loc["y", "mean_rank"] == pytest.approx(1.5)
    assert ranks.loc["z", "mean_rank"] == pytest.approx(2.0)
    assert ranks.loc["z", "n_families"] == 1
    assert ranks.index[0] == "y"
    # intervals [0.4, 0.7] cover 0.5 + e only for e <= 0.2... true accuracy 0.5 is always inside
    assert res.coverage().loc["x", "overall"] == 1.0
    assert res.width().loc["y", "f1"] == pytest.approx(0.3)
    assert res.seconds().loc["x", "f1"] == pytest.approx(2.0)
    with pytest.raises(InputValidationError):
        external_rows(task="t", family="f", method="m", kind="k", estimates={"s": {"estimate": 0.5}})
    with pytest.raises(InputValidationError):
        res.add_rows(pd.DataFrame({"task": ["t"]}))


def _random_task(seed=0, *, meta=True, partner=True, equal=True) -> ShiftTask:
    rng = np.random.default_rng(seed)

    def make(n, noise):
        y = rng.integers(0, 4, n)
        z = rng.normal(0, 1, (n, 4))
        z[np.arange(n), y] += 3 - noise
        return z, y

    ref = make(300, 0)
    targets = {f"t{i}": make(200 if equal or i else 150, 0.8 * i) for i in range(2)}
    metas = {f"m{i}": make(200, 0.5 * i) for i in range(4)} if meta else {}
    part = {}
    if partner:
        part = {
            k: v[0] + rng.normal(0, 1, v[0].shape) for k, v in {"reference": ref, **targets, **metas}.items()
        }
    return ShiftTask("rand", "f", ref, targets, meta=metas, partner=part)


def test_regressed_score_matches_metaset_regression_by_hand():
    task = _random_task()
    res = run_benchmark([task], methods=["nuclear_norm"], n_boot=50, progress=False).to_df()
    names = sorted(task.meta)
    nn = get_estimator("nuclear_norm")
    scores = [nn.measure(logits=task.meta[m].logits).score for m in names]
    reg = MetaSetRegression().fit(scores=scores, accuracies=[task.meta[m].accuracy for m in names])
    for _, row in res.iterrows():
        s = nn.measure(logits=task.targets[row["set"]].logits).score
        assert row["score"] == pytest.approx(s)
        assert row["estimate"] == pytest.approx(float(np.clip(reg.predict(s)[0], 0, 1)))
        assert row["kind"] == "regressed score"
        assert row["lower"] <= row["estimate"] + 1e-9 or row["estimate"] in (0.0, 1.0)


def test_applicability_and_skips():
    bare = _random_task(meta=False, partner=False)
    assert applicable(bare, "agreement") == (False, "no partner-model logits")
    assert not applicable(bare, "mde_normalized")[0]
    unequal = _random_task(equal=False)
    ok, reason = applicable(unequal, "mde")
    assert not ok and "equal set sizes" in reason
    assert applicable(unequal, "mde_normalized")[0]
    res = run_benchmark([bare], methods=["atc_mc", "agreement", "mde"], n_boot=20, progress=False)
    assert set(res.to_df()["method"]) == {"atc_mc"}
    assert set(res.skipped["method"]) == {"agreement", "mde"}


def test_a_score_without_a_usable_line_is_skipped_with_its_reason():
    """Saturated one-hot outputs give MaNo the same score on every meta set; a task without features cannot run
    Dispersion; both are skipped with a reason while the other methods run."""
    task = _random_task(partner=False)
    saturated = {k: (v.logits * 1e4, v.labels) for k, v in task.meta.items()}  # exactly one-hot softmax
    task = ShiftTask("sat", "f", (task.reference.logits, task.reference.labels),
                     {k: (v.logits, v.labels) for k, v in task.targets.items()}, meta=saturated)
    res = run_benchmark([task], methods=["mano", "average_confidence", "dispersion"], n_boot=20, progress=False)
    assert set(res.to_df()["method"]) == {"average_confidence"}
    why = res.skipped.set_index("method")["reason"]
    assert "same score" in why["mano"] and why["dispersion"] == "no penultimate features"


def test_bad_input():
    task = _hand_task()
    with pytest.raises(InputValidationError):
        run_benchmark([], progress=False)
    with pytest.raises(InputValidationError):
        run_benchmark([task, task], progress=False)
    with pytest.raises(InputValidationError):
        run_benchmark(["not a task"], progress=False)
    with pytest.raises(UnknownNameError):
        run_benchmark([task], methods=["oracle"], progress=False)
    with pytest.raises(InputValidationError):
        run_benchmark([task], n_boot=1, progress=False)
    with pytest.raises(InputValidationError):
        run_benchmark([task], level=1.5, progress=False)
    with pytest.raises(UnknownNameError):
        applicable(task, "oracle")


def test_deterministic_for_a_seed():
    task = _random_task(3)
    methods = ["atc_mc", "average_confidence", "mde", "agreement"]
    a = (
        run_benchmark([task], methods=methods, n_boot=40, seed=7, progress=False)
        .to_df()
        .drop(columns="seconds")
    )
    b = (
        run_benchmark([task], methods=methods, n_boot=40, seed=7, progress=False)
        .to_df()
        .drop(columns="seconds")
    )
    pd.testing.assert_frame_equal(a, b)
    c = (
        run_benchmark([task], methods=methods, n_boot=40, seed=8, progress=False)
        .to_df()
        .drop(columns="seconds")
    )
    assert not np.allclose(a["lower"], c["lower"])


def test_set_ranks_normalised_head_to_head():
    def rows(method, task, errors):
        est = {f"s{i}": {"estimate": 0.5 + e, "true_accuracy": 0.5} for i, e in enumerate(errors)}
        return external_rows(task=task, family="f", method=method, kind="accuracy", estimates=est)

    res = BenchmarkResult(pd.DataFrame(columns=COLUMNS)).add_rows(
        [
            rows("x", "t1", [0.1, 0.3]),
            rows("y", "t1", [0.2, 0.0]),
            rows("z", "t1", [0.3]),
            rows("x", "t2", [0.5]),
        ]
    )
    sr = res.set_ranks()
    # t1/s0: x < y < z -> 0, 0.5, 1; t1/s1: y < x -> 0, 1 (z absent); t2/s0 has one method: left out
    assert sr.loc["x", "f"] == pytest.approx(0.5)
    assert sr.loc["y", "f"] == pytest.approx(0.25)
    assert sr.loc["z", "f"] == pytest.approx(1.0)
    assert res.summary().loc["y", "mean_set_rank"] == pytest.approx(0.25)


def test_coverage_width_plot_names_every_method_once_in_a_legend_not_on_the_points():
    import matplotlib

    matplotlib.use("Agg")
    from helpers.benchmark.report import coverage_width_plot

    res = run_benchmark([_random_task()], methods=["doc", "atc_mc", "average_confidence", "maxprob"], n_boot=20,
                        progress=False)  # fmt: skip
    ax = coverage_width_plot(res, level=0.95)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(label.split(" (")[0] for label in labels) == sorted(["doc", "atc_mc", "average_confidence", "maxprob"])
    assert [t.get_text() for t in ax.texts] == ["nominal 95%"]  # no method names drawn beside the points


def test_set_families_give_each_target_set_its_family():
    """A task whose targets span two families: each row carries its set's family; unknown sets and empty names
    are refused."""
    base = _hand_task()
    task = ShiftTask(name="hand", family="fam", reference=base.reference, targets=base.targets,
                     set_families={"b": "other"})  # fmt: skip
    assert task.family_of("a") == "fam" and task.family_of("b") == "other"
    df = run_benchmark([task], methods=["average_confidence"], progress=False).to_df().set_index("set")
    assert df.loc["a", "family"] == "fam" and df.loc["b", "family"] == "other"
    with pytest.raises(InputValidationError, match="not targets: \\['c'\\]"):
        ShiftTask(name="hand", family="fam", reference=base.reference, targets=base.targets, set_families={"c": "x"})
    with pytest.raises(InputValidationError, match="non-empty family names"):
        ShiftTask(name="hand", family="fam", reference=base.reference, targets=base.targets, set_families={"a": ""})


def test_newer_vs_established_compares_on_the_newer_methods_own_sets():
    from helpers.benchmark.report import newer_vs_established

    def rows(method, family, errors):
        est = {f"s{i}": {"estimate": 0.5 + e, "true_accuracy": 0.5} for i, e in enumerate(errors) if e is not None}
        return external_rows(task=family, family=family, method=method, kind="accuracy", estimates=est)

    res = BenchmarkResult(pd.DataFrame(columns=COLUMNS)).add_rows(
        [
            rows("new", "a", [0.01, None]),  # new ran on s0 only
            rows("old1", "a", [0.05, 0.0]),  # old1: 5 pp on s0 (0 on s1 must not count)
            rows("old2", "a", [0.02, 0.4]),  # old2: 2 pp on s0 -> best established there
            rows("new", "b", [0.3]),
            rows("old1", "b", [0.1]),
            rows("stacked", "b", [0.0]),  # excluded from the established set
        ]
    )
    t = newer_vs_established(res, ["new", "absent"], exclude=["stacked"]).set_index("family")
    assert list(t.index) == ["a", "b", "overall"]
    assert t.loc["a", "best_established"] == "old2" and t.loc["a", "n_sets"] == 1
    assert t.loc["a", "mae_pp"] == pytest.approx(1.0) and t.loc["a", "gap_pp"] == pytest.approx(-1.0)
    assert bool(t.loc["a", "newer_wins"]) and not bool(t.loc["b", "newer_wins"])
    assert t.loc["b", "best_established"] == "old1" and t.loc["b", "gap_pp"] == pytest.approx(20.0)
    # overall: new on a/s0 and b/s0, (1 + 30) / 2 pp; only old1 ran on both: (5 + 10) / 2 pp
    assert t.loc["overall", "best_established"] == "old1"
    assert t.loc["overall", "mae_pp"] == pytest.approx(15.5) and t.loc["overall", "best_established_mae_pp"] == pytest.approx(7.5)
