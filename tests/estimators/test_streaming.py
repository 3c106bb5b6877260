"""Out-of-core estimates: a Dask array (or a Zarr store) gives the in-memory estimate from merged block statistics."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from helpers.errors import InputValidationError  # noqa: E402
from helpers.estimators import get_estimator  # noqa: E402
from helpers.estimators.streaming import MERGEABLE  # noqa: E402

RNG = np.random.default_rng(0)
N, K = 12_007, 6
Z = RNG.normal(size=(N, K)) * 2
Z[np.arange(N), RNG.integers(0, K, N)] += 2
REF = RNG.normal(size=(3000, K)) * 2
Y = RNG.integers(0, K, 3000)
REF[np.arange(3000), Y] += 2
UNEVEN = (5000, 1, 4000, 3006)  # blocks of very different sizes, one of a single row (fewer rows than classes)
LABELLED = {"atc_mc", "atc_ne", "doc", "cbpe", "confusion_matrix_shift"}
MERGEABLE_NAMES = sorted(n for n in ("average_confidence", "average_negative_entropy", "doc", "maxprob", "atc_mc",
                                     "atc_ne", "cbpe", "average_energy", "nuclear_norm", "softmax_corr",
                                     "confusion_matrix_shift", "mano", "mde", "mde_normalized"))  # fmt: skip


def _fitted(name, **params):
    est = get_estimator(name, **params)
    return est.fit(logits=REF, labels=Y) if name in LABELLED else est.fit(logits=REF)


def _value(e):
    return e.score if e.score is not None else e.accuracy


def test_the_list_covers_every_mergeable_class():
    assert {type(get_estimator(n)).__name__ for n in MERGEABLE_NAMES} == set(MERGEABLE)


@pytest.mark.parametrize("name", MERGEABLE_NAMES)
def test_dask_blocks_give_the_in_memory_estimate(name):
    est = _fitted(name)
    memory = est.measure(logits=Z)
    streamed = est.measure(logits=da.from_array(Z, chunks=(UNEVEN, K)))
    assert _value(streamed) == pytest.approx(_value(memory), rel=1e-9, abs=1e-12)  # float summation order only
    assert streamed.n == N and streamed.details["n_blocks"] == 4


def test_mano_keeps_one_normalisation_for_the_whole_set():
    """Φ is the whole set's: blocks on either side of η = 5 must not pick their own branch."""
    calm = RNG.normal(size=(4000, K)) * 0.5  # Φ far below 5 on its own
    sharp = RNG.normal(size=(4000, K)) * 40  # Φ far above 5 on its own
    z = np.vstack([calm, sharp])
    est = get_estimator("mano")
    assert est.measure(logits=da.from_array(z, chunks=(4000, K))).score == pytest.approx(est.measure(logits=z).score)


def test_interval_is_the_bootstraps_normal_limit():
    for name in ("atc_mc", "nuclear_norm"):
        est = _fitted(name, n_boot=400)
        a = est.measure(logits=Z, interval=True)
        b = est.measure(logits=da.from_array(Z, chunks=(UNEVEN, K)), interval=True)
        lo_a, hi_a = (a.lower, a.upper) if a.score is None else (a.details["score_lower"], a.details["score_upper"])
        lo_b, hi_b = (b.lower, b.upper) if b.score is None else (b.details["score_lower"], b.details["score_upper"])
        width = hi_a - lo_a
        assert abs(lo_a - lo_b) < 0.25 * width and abs(hi_a - hi_b) < 0.25 * width
        assert "normal limit" in b.details["interval"]


def test_a_mean_of_block_estimates_is_not_the_estimate():
    """What the merge avoids: the nuclear norm of the set is not the mean of its blocks' nuclear norms."""
    est = get_estimator("nuclear_norm")
    blocks = [Z[:6000], Z[6000:6010], Z[6010:]]
    naive = np.mean([est.measure(logits=b).score for b in blocks])
    merged = est.measure(logits=da.from_array(Z, chunks=((6000, 10, N - 6010), K))).score
    assert merged == pytest.approx(est.measure(logits=Z).score) and abs(naive - merged) > 1e-3


@pytest.mark.parametrize("name", ["cot", "cott"])
def test_a_statistic_that_does_not_merge_is_refused_naming_the_estimator(name):
    est = get_estimator(name).fit(logits=REF, labels=Y) if name == "cott" else get_estimator(name).fit(labels=Y)
    with pytest.raises(InputValidationError, match=rf"\({name}\) cannot be estimated out of core.*transport"):
        est.estimate(logits=da.from_array(Z, chunks=(4000, K)))


def test_bad_blocks_are_named():
    bad = Z.copy()
    bad[9500, 2] = np.nan
    est = get_estimator("average_confidence")
    with pytest.raises(InputValidationError, match=r"logits: block 3 \(rows 9000-11999\): holds NaN"):
        est.estimate(logits=da.from_array(bad, chunks=(3000, K)))
    atc = _fitted("atc_mc")
    with pytest.raises(InputValidationError, match="expected 6 classes"):
        atc.estimate(logits=da.from_array(Z[:, :5], chunks=(3000, 5)))
    with pytest.raises(InputValidationError, match="no rows"):
        est.estimate(logits=da.zeros((0, K), chunks=(10, K)))
    with pytest.raises(InputValidationError, match="no store"):
        est.estimate(logits="/nonexistent/store.zarr")
    with pytest.raises(InputValidationError, match="exactly one of logits= / probs="):
        est.estimate(logits=da.from_array(Z, chunks=(3000, K)), probs=np.ones((N, K)) / K)


def test_zarr_store_path(tmp_path):
    pytest.importorskip("zarr")
    path = tmp_path / "logits.zarr"
    da.from_array(Z, chunks=(2500, K)).to_zarr(str(path))
    est = _fitted("cbpe")
    assert est.estimate(logits=str(path)).accuracy == pytest.approx(est.estimate(logits=Z).accuracy, rel=1e-9)


def test_parquet_store_path(tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    folder = tmp_path / "logits_parquet"
    folder.mkdir()
    for i, (a, b) in enumerate([(0, 5000), (5000, 5001), (5001, N)]):  # three files, one of a single row
        pd.DataFrame(Z[a:b], columns=[f"class_{k}" for k in range(K)]).to_parquet(folder / f"part{i}.parquet")
    for name in ("cbpe", "maxprob"):
        est = _fitted(name)
        assert _value(est.estimate(logits=folder)) == pytest.approx(_value(est.estimate(logits=Z)), rel=1e-9)
    single = tmp_path / "one.parquet"
    pd.DataFrame(Z[:100]).rename(columns=str).to_parquet(single)
    est = _fitted("average_confidence")
    assert est.estimate(logits=single).accuracy == pytest.approx(est.estimate(logits=Z[:100]).accuracy, rel=1e-9)
    pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]}).to_parquet(tmp_path / "text.parquet")
    with pytest.raises(InputValidationError, match="numeric columns"):
        est.estimate(logits=tmp_path / "text.parquet")
