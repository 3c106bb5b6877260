"""Benchmark blocks built from other notebooks' outputs: seq2seq bounds rows (hand-computed) and RI/RM intervals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from helpers.benchmark import BenchmarkResult
from helpers.errors import InputValidationError
from helpers.experiments.p6_benchmark.selftrain import _boot_flags, selftraining_grid
from helpers.experiments.p6_benchmark.seq2seq_block import seq2seq_rows


def _set(name, shift, conf, correct, votes):
    correct = np.asarray(correct, dtype=bool)
    return SimpleNamespace(name=name, shift=shift, confidence=np.asarray(conf, float), correct=correct,
                           votes=np.asarray(votes, int), accuracy=float(correct.mean()))  # fmt: skip


def test_seq2seq_rows_bounds_and_baselines_by_hand():
    dev = _set("dev", "id", [0.9, 0.8, 0.3, 0.2], [1, 1, 0, 0], np.ones((4, 2)))
    # 4 examples, 2 discriminators: any-Correct (upper) = 3/4, all-Correct (lower) = 1/4, mean_discrim = 4/8
    ood = _set("ood", "ood", [0.6, 0.6, 0.6, 0.6], [1, 1, 0, 0], [[1, 1], [1, 0], [0, 1], [0, 0]])
    result = SimpleNamespace(task="scan", dev=dev, sets={"ood": ood})
    df = seq2seq_rows(result, n_boot=50).set_index("method")
    assert set(df["family"]) == {"seq2seq"}
    assert df.loc["discriminator_mean_bounds", "lower"] == pytest.approx(0.25)
    assert df.loc["discriminator_mean_bounds", "upper"] == pytest.approx(0.75)
    assert df.loc["discriminator_mean_bounds", "estimate"] == pytest.approx(0.5)
    assert df.loc["discriminator_mean_discrim", "estimate"] == pytest.approx(0.5)
    assert bool(df.loc["discriminator_mean_bounds", "covered"])  # gold 0.5 in [0.25, 0.75]
    assert df.loc["discriminator_mean_bounds", "width"] == pytest.approx(0.5)
    # average confidence 0.6 (constant: zero-width bootstrap); DoC: 0.6 - (0.55 - 0.5) = 0.55
    assert df.loc["average_confidence", "estimate"] == pytest.approx(0.6)
    assert df.loc["doc", "estimate"] == pytest.approx(0.55)
    assert df.loc["maxprob", "estimate"] == pytest.approx(1.0)
    assert df.loc["doc", "set"] == "ood (ood)"
    assert BenchmarkResult(df.reset_index()).mae().loc["doc", "seq2seq"] == pytest.approx(0.05)


def test_boot_flags_interval_contains_point_and_shrinks_with_n():
    small = np.r_[np.ones(20), np.zeros(80)].astype(bool)
    big = np.tile(small, 20)
    lo_s, hi_s = _boot_flags(small, n_boot=500, level=0.95, seed=0)
    lo_b, hi_b = _boot_flags(big, n_boot=500, level=0.95, seed=0)
    assert lo_s <= 0.8 <= hi_s and lo_b <= 0.8 <= hi_b
    assert (hi_b - lo_b) < (hi_s - lo_s) / 2


def test_selftraining_grid_rejects_unknown_pairs():
    pair = SimpleNamespace(source="books", target="dvd")
    with pytest.raises(InputValidationError, match="not among the pairs"):
        selftraining_grid([pair], SimpleNamespace(ens_size=1), family="amazon", self_training_pairs=["dvd->books"])
    with pytest.raises(InputValidationError, match="ens_size"):
        selftraining_grid([pair], SimpleNamespace(ens_size=0), family="amazon")


def test_coverage_plot_labels_of_nearby_points_do_not_overlap():
    from helpers.benchmark.report import _label_offsets

    x = np.array([1.0, 1.05, 5.0, 1.02])
    y = np.array([0.20, 0.205, 0.20, 0.21])
    off = _label_offsets(x, y, ["a", "b", "c", "d"])
    stacked = sorted(off[n][1] + 330 * yy for n, yy in zip("abd", y[[0, 1, 3]]))
    assert min(np.diff(stacked)) >= 9.0 - 1e-9  # the three close labels are stacked one line apart
    assert off["c"] == (3.0, 2.0)  # a far point keeps the default offset
    # a long label reaching over a point further right pushes that point's label up (06 overview: entropy vs mde)
    off = _label_offsets(np.array([4.9, 6.2, 1.0]), np.array([0.22, 0.23, 0.9]), ["average_negative_entropy", "mde", "x"])
    assert off["average_negative_entropy"] == (3.0, 2.0) and off["mde"][1] > 2.0


def test_mde_scatter_limits_stay_within_percent_range():
    import matplotlib.pyplot as plt
    import pandas as pd

    from helpers.experiments.p5_mde.measures import scatter_with_fit

    frame = pd.DataFrame(
        {"MDE": [0.0, 0.1, 0.2, 0.3, 0.4], "accuracy": [0.99, 0.6, 0.98, 0.55, 0.57],
         "split": ["fit"] * 4 + ["heldout"]}
    )  # fmt: skip
    fig, ax = plt.subplots()
    scatter_with_fit(ax, frame, measure="MDE")
    lo, hi = ax.get_ylim()
    assert 0.0 <= lo < 55.0 and 99.0 < hi <= 100.0
    plt.close(fig)
