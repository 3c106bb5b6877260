"""Notebook 07's stream and alert table on a synthetic CIFAR-like task (no data needed)."""

import numpy as np
import pandas as pd
import pytest

from helpers.benchmark import ShiftTask
from helpers.errors import InputValidationError
from helpers.experiments.p7_monitoring import (
    MonitoringSettings,
    alert_table,
    build_stream,
    fit_methods,
    monitor,
)


def _set(n, sharp, seed, k=4):
    g = np.random.default_rng(seed)
    y = g.integers(0, k, n)
    z = g.normal(size=(n, k))
    z[np.arange(n), y] += sharp
    return z, y


def _task():
    targets = {f"blur-{v}": _set(200, 3.0 - 0.6 * v, v) for v in (1, 2, 3)}
    meta = {f"m{i}": _set(200, 3.0 - 0.5 * i, 10 + i) for i in range(5)}
    return ShiftTask("cifar10/resnet20", "cifar-corruption", _set(400, 3.0, 99), targets, meta=meta,
                     info={"model": "resnet20"})  # fmt: skip


S = MonitoringSettings.for_profile("smoke", chunk_size=40, ramp_type="blur", ramp_severities=[1, 3], label_ratios=[0.2],
                                   methods=["average_confidence", "atc_mc", "nuclear_norm"])  # fmt: skip


def test_the_stream_serves_clean_ramp_then_labels_in_order_without_reusing_the_reference():
    task = _task()
    st = build_stream([task], S)
    assert st.periods == ["clean", "blur-1", "blur-3", "labels-0.2"]
    assert len(st.reference_labels) == 200 and (st.period == "clean").sum() == 200
    np.testing.assert_array_equal(st.logits[st.period == "blur-3"], task.targets["blur-3"].logits)
    ref_rows = {r.tobytes() for r in st.reference_logits}
    assert not any(r.tobytes() in ref_rows for r in st.logits[st.period == "clean"])  # the halves do not overlap
    counts = np.bincount(st.labels[st.period == "labels-0.2"], minlength=4)
    assert counts.min() < counts.max()  # long-tailed priors


def test_monitor_and_alert_table():
    st = build_stream([_task()], S)
    frame = monitor(st, fit_methods(st, S.methods, S.chunk_size), S.chunk_size)
    assert set(frame["method"]) == set(S.methods) and frame.groupby("method").size().nunique() == 1
    assert frame.loc[frame["start"] == 0, "period"].eq("clean").all()
    table = alert_table(frame)
    assert list(table.columns[:3]) == ["method", "mae_pp", "first_alert_chunk"]
    assert (table["false_alerts_clean"] <= table["alerts"]).all()


def test_alert_table_by_hand():
    frame = pd.DataFrame({
        "method": ["a"] * 4, "chunk": ["c0", "c1", "c2", "c3"], "start": [0, 10, 20, 30], "end": [9, 19, 29, 39],
        "n": [10] * 4, "estimate": [0.9, 0.9, 0.6, 0.5], "band_lower": [0.8] * 4, "band_upper": [1.0] * 4,
        "alert": [False, False, True, True], "realised_accuracy": [0.9, 0.7, 0.6, 0.5],
        "period": ["clean", "clean", "blur", "blur"]})  # fmt: skip
    row = alert_table(frame).iloc[0]
    assert row["mae_pp"] == pytest.approx(5.0)  # |0.9 - 0.7| on one chunk of four
    assert row["first_alert_chunk"] == 2 and row["oracle_first_chunk"] == 1 and row["chunks_late"] == 1
    assert row["first_alert_period"] == "blur" and row["false_alerts_clean"] == 0


def test_bad_settings_and_missing_sets():
    with pytest.raises(InputValidationError, match="chunk_size"):
        MonitoringSettings.for_profile("smoke", chunk_size=1)
    with pytest.raises(InputValidationError, match="label_ratios"):
        MonitoringSettings.for_profile("smoke", label_ratios=[1.5])
    with pytest.raises(InputValidationError, match="methods: unknown"):
        MonitoringSettings.for_profile("smoke", methods=["agreement"])
    with pytest.raises(InputValidationError, match="corruptions available: \\['blur'\\]"):
        build_stream([_task()], MonitoringSettings.for_profile("smoke", ramp_type="fog", ramp_severities=[1]))
    with pytest.raises(InputValidationError, match="backbone"):
        build_stream([_task()], MonitoringSettings.for_profile("smoke", backbone="resnet56"))
