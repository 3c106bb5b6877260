"""Per-chunk monitoring: chunking by size and by period, the reference band and alerts, Dask input, NannyML."""

import numpy as np
import pandas as pd
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import CBPE, get_estimator, softmax
from helpers.monitoring import BAND_SIGMAS, estimate_chunks

RNG = np.random.default_rng(0)
K = 3


def _stream(n, sharpness, seed):
    g = np.random.default_rng(seed)
    y = g.integers(0, K, n)
    z = g.normal(size=(n, K))
    z[np.arange(n), y] += sharpness
    return z, y


REF_Z, REF_Y = _stream(4000, 2.0, 1)
EST = get_estimator("average_confidence").fit(logits=REF_Z)


def test_chunks_by_size_estimates_band_and_alerts_by_hand():
    z = np.vstack([_stream(1000, 2.0, 2)[0], _stream(500, -1.0, 3)[0]])  # the last 500 rows drift
    res = estimate_chunks(EST, z, chunk_size=500, reference_logits=REF_Z)
    df = res.to_df()
    assert list(df["chunk"]) == ["[0:500]", "[500:1000]", "[1000:1500]"] and list(df["n"]) == [500] * 3
    for (_, row), lo in zip(df.iterrows(), (0, 500, 1000)):
        assert row["estimate"] == pytest.approx(EST.estimate(logits=z[lo : lo + 500]).accuracy)
    ref = np.array([EST.estimate(logits=REF_Z[i : i + 500]).accuracy for i in range(0, 4000, 500)])
    assert df["band_lower"].iloc[0] == pytest.approx(ref.mean() - BAND_SIGMAS * ref.std())
    assert df["band_upper"].iloc[0] == pytest.approx(ref.mean() + BAND_SIGMAS * ref.std())
    assert list(df["alert"]) == [False, False, True]
    assert df["realised_accuracy"].isna().all()


def test_last_chunk_may_be_smaller_and_labels_give_realised_accuracy():
    z, y = _stream(1100, 1.0, 4)
    df = estimate_chunks(EST, z, labels=y, chunk_size=500).to_df()
    assert list(df["n"]) == [500, 500, 100]
    assert df["realised_accuracy"].iloc[2] == pytest.approx((z[1000:].argmax(1) == y[1000:]).mean())
    assert df["band_lower"].isna().all() and not df["alert"].any()  # no reference: no band, no alert


def test_chunks_by_period_keep_an_empty_period():
    z, _ = _stream(90, 2.0, 5)
    days = pd.to_datetime("2026-01-01") + pd.to_timedelta(np.r_[np.zeros(30), np.full(30, 2), np.full(30, 3)], "D")
    df = estimate_chunks(EST, z, timestamps=days, period="D", reference_logits=REF_Z).to_df()
    assert list(df["chunk"]) == ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]
    assert list(df["n"]) == [30, 0, 30, 30]
    assert np.isnan(df["estimate"].iloc[1]) and not df["alert"].iloc[1]
    assert df["estimate"].iloc[2] == pytest.approx(EST.estimate(logits=z[30:60]).accuracy)


def test_dask_chunks_give_the_same_table():
    da = pytest.importorskip("dask.array")
    z, y = _stream(2000, 1.5, 6)
    a = estimate_chunks(EST, z, labels=y, chunk_size=400, reference_logits=REF_Z).to_df()
    b = estimate_chunks(EST, da.from_array(z, chunks=(700, K)), labels=y, chunk_size=400,
                        reference_logits=REF_Z).to_df()  # fmt: skip
    pd.testing.assert_frame_equal(a, b, rtol=1e-9)


def test_plot_draws_estimate_band_alerts_and_realised_accuracy():
    import matplotlib

    matplotlib.use("Agg")
    z, y = _stream(1500, 1.0, 7)
    z[1000:] *= 0.2
    ax = estimate_chunks(EST, z, labels=y, chunk_size=250, reference_logits=REF_Z).plot()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "alert" in labels and "realised accuracy" in labels and any("band" in t for t in labels)


def test_bad_input():
    z, _ = _stream(100, 1.0, 8)
    with pytest.raises(InputValidationError, match="estimator: expected a fitted estimator"):
        estimate_chunks("average_confidence", z, chunk_size=10)
    with pytest.raises(InputValidationError, match="exactly one of the two"):
        estimate_chunks(EST, z, probs=softmax(z), chunk_size=10)
    with pytest.raises(InputValidationError, match="chunk_size, period"):
        estimate_chunks(EST, z)
    with pytest.raises(InputValidationError, match="chunk_size: expected a positive integer"):
        estimate_chunks(EST, z, chunk_size=0)
    with pytest.raises(InputValidationError, match="timestamps: needed"):
        estimate_chunks(EST, z, period="D")
    with pytest.raises(InputValidationError, match="timestamps: expected one per prediction"):
        estimate_chunks(EST, z, timestamps=pd.date_range("2026-01-01", periods=5), period="D")
    with pytest.raises(InputValidationError, match="period: expected a pandas period alias"):
        estimate_chunks(EST, z, timestamps=pd.date_range("2026-01-01", periods=100), period="fortnightly")
    with pytest.raises(InputValidationError, match="labels: expected 100 labels"):
        estimate_chunks(EST, z, labels=np.zeros(5), chunk_size=10)
    with pytest.raises(InputValidationError, match="fewer than 2 reference chunks"):
        estimate_chunks(EST, z, chunk_size=60, reference_logits=REF_Z[:50])
    with pytest.raises(InputValidationError, match="reference_timestamps: only used with period"):
        estimate_chunks(EST, z, chunk_size=10, reference_logits=REF_Z, reference_timestamps=np.zeros(4000))
    with pytest.raises(InputValidationError, match="reference_timestamps: expected one per prediction"):
        estimate_chunks(EST, z, timestamps=pd.date_range("2026-01-01", periods=100), period="D",
                        reference_logits=REF_Z, reference_timestamps=pd.date_range("2025-01-01", periods=5))
    with pytest.raises(InputValidationError, match="reference_labels: give the reference predictions"):
        estimate_chunks(EST, z, chunk_size=10, reference_labels=REF_Y)


def test_band_from_reference_labels_is_the_spread_of_realised_accuracy():
    z, _ = _stream(1000, 1.0, 11)
    df = estimate_chunks(EST, z, chunk_size=500, reference_logits=REF_Z, reference_labels=REF_Y).to_df()
    real = np.array([(REF_Z[i : i + 500].argmax(1) == REF_Y[i : i + 500]).mean() for i in range(0, 4000, 500)])
    assert df["band_upper"].iloc[0] == pytest.approx(min(1.0, real.mean() + BAND_SIGMAS * real.std()))


def test_cbpe_per_chunk_equals_nannyml():
    import importlib.util

    import helpers  # noqa: F401  (turns nannyml's telemetry off)

    if importlib.util.find_spec("nannyml") is None:
        pytest.skip("nannyml not installed: pip install -e .[peers]")
    import nannyml as nml

    zr, yr = _stream(3000, 1.0, 9)
    zt, _ = _stream(2000, 0.5, 10)
    pr, pt = softmax(zr), softmax(zt)

    def frame(p, y=None):
        d = {"y_pred": p.argmax(1), **{f"p{c}": p[:, c] for c in range(K)}}
        return pd.DataFrame({**d, "y_true": y} if y is not None else d)

    theirs = nml.CBPE(y_pred_proba={c: f"p{c}" for c in range(K)}, y_pred="y_pred", y_true="y_true",
                      problem_type="classification_multiclass", metrics=["accuracy"], chunk_size=500)  # fmt: skip
    df = theirs.fit(frame(pr, yr)).estimate(frame(pt)).to_df()
    values = df[df[("chunk", "period")] == "analysis"][("accuracy", "value")].to_numpy(float)
    ours = estimate_chunks(CBPE().fit(probs=pr, labels=yr), probs=pt, chunk_size=500, reference_probs=pr,
                           reference_labels=yr).to_df()  # fmt: skip
    np.testing.assert_allclose(ours["estimate"].to_numpy(), values, atol=1e-6)
    analysis = df[df[("chunk", "period")] == "analysis"]
    for ours_col, theirs_col in (("band_lower", "lower_threshold"), ("band_upper", "upper_threshold")):
        np.testing.assert_allclose(ours[ours_col].to_numpy(), analysis[("accuracy", theirs_col)].to_numpy(float),
                                   atol=1e-9)  # fmt: skip


def test_the_reference_keeps_its_short_last_chunk_as_nannyml_does():
    """4,000 reference rows in chunks of 600: six of 600 and one of 400 (NannyML's SizeBasedChunker keeps it)."""
    z, _ = _stream(1200, 1.0, 12)
    df = estimate_chunks(EST, z, chunk_size=600, reference_logits=REF_Z, reference_labels=REF_Y).to_df()
    hit = REF_Z.argmax(1) == REF_Y
    real = np.array([hit[i : i + 600].mean() for i in range(0, 4000, 600)])
    assert len(real) == 7 and len(hit[3600:]) == 400
    assert df["band_lower"].iloc[0] == pytest.approx(max(0.0, real.mean() - BAND_SIGMAS * real.std()), abs=1e-12)
    assert df["band_upper"].iloc[0] == pytest.approx(min(1.0, real.mean() + BAND_SIGMAS * real.std()), abs=1e-12)


def test_reference_timestamps_cut_the_reference_into_the_same_periods():
    z, _ = _stream(90, 2.0, 13)
    days = pd.to_datetime("2026-02-01") + pd.to_timedelta(np.repeat([0, 1, 2], 30), "D")
    ref_days = pd.to_datetime("2026-01-01") + pd.to_timedelta(np.repeat([0, 1, 3, 4], 1000), "D")  # day 3: empty
    df = estimate_chunks(EST, z, timestamps=days, period="D", reference_logits=REF_Z, reference_labels=REF_Y,
                         reference_timestamps=ref_days).to_df()  # fmt: skip
    hit = REF_Z.argmax(1) == REF_Y
    real = np.array([hit[i : i + 1000].mean() for i in range(0, 4000, 1000)])  # four non-empty days
    assert df["band_upper"].iloc[0] == pytest.approx(min(1.0, real.mean() + BAND_SIGMAS * real.std()), abs=1e-12)


def _nannyml_frames(pr, yr, pt, ts_ref=None, ts_ana=None):
    def frame(p, y=None, ts=None):
        d = {"y_pred": p.argmax(1), **{f"p{c}": p[:, c] for c in range(K)}}
        if y is not None:
            d["y_true"] = y
        if ts is not None:
            d["timestamp"] = ts
        return pd.DataFrame(d)

    return frame(pr, yr, ts_ref), frame(pt, None, ts_ana)


def _nannyml_or_skip():
    import importlib.util

    import helpers  # noqa: F401  (turns nannyml's telemetry off)

    if importlib.util.find_spec("nannyml") is None:
        pytest.skip("nannyml not installed: pip install -e .[peers]")
    import nannyml

    return nannyml


@pytest.mark.parametrize("chunking", ["size", "period"])
def test_cbpe_band_equals_nannyml_when_the_chunks_do_not_divide_the_reference(chunking):
    """Reference 2,900 rows in chunks of 500 (a short last chunk of 400), and by day with days of unequal size."""
    nml = _nannyml_or_skip()
    zr, yr = _stream(2900, 1.0, 14)
    zt, _ = _stream(2000, 0.5, 15)
    pr, pt = softmax(zr), softmax(zt)
    kw, ours_kw = {"chunk_size": 500}, {"chunk_size": 500}
    ts_ref = ts_ana = None
    if chunking == "period":
        ts_ref = pd.to_datetime("2026-01-01") + pd.to_timedelta(np.sort(RNG.integers(0, 6, 2900)), "D")
        ts_ana = pd.to_datetime("2026-02-01") + pd.to_timedelta(np.sort(RNG.integers(0, 4, 2000)), "D")
        kw = {"chunk_period": "D", "timestamp_column_name": "timestamp"}
        ours_kw = {"timestamps": ts_ana, "period": "D", "reference_timestamps": ts_ref}
    ref, ana = _nannyml_frames(pr, yr, pt, ts_ref, ts_ana)
    theirs = nml.CBPE(y_pred_proba={c: f"p{c}" for c in range(K)}, y_pred="y_pred", y_true="y_true",
                      problem_type="classification_multiclass", metrics=["accuracy"], **kw)  # fmt: skip
    df = theirs.fit(ref).estimate(ana).to_df()
    analysis = df[df[("chunk", "period")] == "analysis"]
    ours = estimate_chunks(CBPE().fit(probs=pr, labels=yr), probs=pt, reference_probs=pr, reference_labels=yr,
                           **ours_kw).to_df()  # fmt: skip
    np.testing.assert_allclose(ours["estimate"].to_numpy(), analysis[("accuracy", "value")].to_numpy(float), atol=1e-6)
    for ours_col, theirs_col in (("band_lower", "lower_threshold"), ("band_upper", "upper_threshold")):
        np.testing.assert_allclose(ours[ours_col].to_numpy(), analysis[("accuracy", theirs_col)].to_numpy(float),
                                   atol=1e-9)  # fmt: skip
