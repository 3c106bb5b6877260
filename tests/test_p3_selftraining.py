"""The paper-3 experiment helpers: Table 1 summary, ablation bookkeeping, one-pair runs end to end and caching."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data_dir

import helpers.experiments.p3_selftraining as ex
from helpers.errors import InputValidationError
from helpers.experiments.p3_selftraining import DomainPair, RunConfig, ablation, evaluate_pair, table1

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _pair(seed=0):
    rng = np.random.default_rng(seed)

    def blobs(n, shift):
        y = np.arange(n) % 2
        x = rng.normal(size=(n, 2)) * 0.7 + np.where(y[:, None] == 1, 1.0, -1.0) + shift
        return x.astype(np.float32), y.astype(np.int64)

    (xtr, ytr), (xho, yho), (xt, yt) = blobs(64, 0.0), blobs(32, 0.0), blobs(48, 0.8)
    return DomainPair("toy", "a", "b", xtr, ytr, xho, yho, xt, yt, 2)


CFG = RunConfig(
    typical_model="mlp",
    dann_model="dann_mlp",
    model_kwargs={
        "mlp": {"in_features": 2, "hidden": 8},
        "dann_mlp": {"in_features": 2, "hidden": 8, "domain_hidden": 8},
    },
    f_epochs=2,
    dann_epochs=2,
    batch_size=32,
    ens_size=2,
    rounds=2,
    num_models=2,
    proxy_epochs=1,
)


def test_evaluate_pair_end_to_end_and_cached(monkeypatch):
    pair = _pair()
    res = evaluate_pair(pair, CFG)
    assert list(res.method) == list(ex.METHODS)
    true_acc = float(res.true_accuracy.iloc[0])
    assert np.allclose(res.abs_error, (res.estimate - true_acc).abs())
    assert res.set_index("method").f1[["Avg Conf", "Ens Avg Conf"]].isna().all()
    assert (
        res.set_index("method")
        .f1[["MSP", "Trust Score", "Proxy Risk", "Ours (RI)", "Ours (RM)"]]
        .between(0, 1)
        .all()
    )

    def boom(*a, **k):
        raise AssertionError("retrained although cached")

    for name in ("train_pool", "train_dann", "self_training"):
        monkeypatch.setattr(ex.runs, name, boom)  # where evaluate_pair looks them up
    again = evaluate_pair(pair, CFG)
    pd.testing.assert_frame_equal(res, again)
    with pytest.raises(InputValidationError):
        evaluate_pair(pair, CFG, methods=["nope"])
    abl = ablation([pair], CFG, rounds=[1, 2], num_models=[2], gammas=[0.1])  # all cached
    assert set(abl.param) == {"N", "T", "gamma"}
    assert abl.query("param == 'T' and value == 2").f1.iloc[0] == pytest.approx(
        res.set_index("method").f1["Ours (RM)"]
    )


def test_table1_mean_std_and_paper_columns():
    rows = [
        dict(category="amazon", arch="typical", method="Avg Conf", abs_error=e, f1=np.nan) for e in (0.1, 0.3)
    ] + [dict(category="amazon", arch="typical", method="MSP", abs_error=0.5, f1=f) for f in (0.4, 0.6)]
    t = table1(pd.DataFrame(rows)).set_index("method")
    assert t.mae["Avg Conf"] == pytest.approx(0.2) and t.mae_std["Avg Conf"] == pytest.approx(0.1)
    assert t.paper_mae["Avg Conf"] == pytest.approx(0.290)
    assert (
        np.isnan(t.mae["MSP"])
        and t.f1["MSP"] == pytest.approx(0.5)
        and t.paper_f1["MSP"] == pytest.approx(0.42)
    )


def test_run_config_bad_arch():
    with pytest.raises(InputValidationError):
        CFG.factory("resnet", _pair())


@pytest.mark.skipif(shared_data_dir() is None, reason="needs the shared data (HELPERS_DATA)")
def test_data_pairs(monkeypatch):
    monkeypatch.setenv("HELPERS_DATA", str(shared_data_dir()))
    (amz,) = ex.amazon_pairs(pairs=[("kitchen", "books")], max_features=300, max_target=50)
    assert (
        amz.x_train.shape == (1600, 300) and amz.x_target.shape == (50, 300) and amz.x_heldout.shape[0] == 400
    )
    assert "kitchen training texts" in amz.info["tfidf_fitted_on"]
    d2u, c = ex.digits_pairs(targets=["digits->usps", "digits->contrast:5"], n_usps_train=100)
    assert d2u.x_target.shape == (2007, 8, 8) and 0 <= d2u.x_target.min() and d2u.x_target.max() <= 1
    assert c.target == "digits-contrast5" and len(c.y_target) == 1797 - int(0.75 * 1797)
    with pytest.raises(InputValidationError):
        ex.digits_pairs(targets=["mnist->usps"])


def test_precompute_in_worker_processes_fills_the_cache(monkeypatch):
    """Two spawned workers train every shared model and run every job; the calling process then only reads."""
    pairs = [_pair(), _pair(seed=1)]
    pairs[1].target = "c"
    cfg = RunConfig(**{**CFG.key(), "num_models": 3})  # pools of different sizes per architecture
    ex.precompute([(p, cfg, a) for p in pairs for a in ("typical", "dann")], workers=2, progress=False)

    def boom(*a, **k):
        raise AssertionError("retrained although the workers cached it")

    for name in ("train_pool", "train_dann", "self_training"):
        monkeypatch.setattr(ex.runs, name, boom)  # where evaluate_pair looks them up
    for p in pairs:
        for arch in ("typical", "dann"):
            res = evaluate_pair(p, cfg, arch=arch)
            assert len(res) == len(ex.METHODS)


def test_precompute_starts_a_pairs_methods_after_that_pairs_shared_models_only(monkeypatch):
    """No barrier between the stages: each method unit waits for its own pair's f, pools and h_0 (by name), not for
    the other pair's h_0; the shared models wait for nothing."""
    import helpers.parallel

    seen = {}
    monkeypatch.setattr(helpers.parallel, "map_units", lambda fn, items, **kw: seen.update(kw))
    pairs = [_pair(), _pair(seed=1)]
    pairs[1].target = "c"
    ex.precompute([(p, CFG, "typical") for p in pairs], workers=2, progress=False)
    names, after = seen["names"], seen["after"]
    shared = [i for i, n in enumerate(names) if not n.startswith(tuple(p.key for p in pairs))]
    assert all(after[i] == [] for i in shared) and shared == list(range(len(shared)))
    for pair, other in (pairs, pairs[::-1]):
        for m in ("rm", "ri", "proxy"):
            (i,) = [i for i, n in enumerate(names) if n.startswith(f"{pair.key} {m} ")]
            needed = {names[j] for j in after[i]}
            assert f"h0 dann {pair.key}" in needed and f"h0 dann {other.key}" not in needed, needed
            assert {f"f typical {pair.source_key}", f"pool dann {pair.source_key}"} <= needed
            assert any(n.startswith(f"pool typical {pair.source_key}") for n in needed)


def test_ablation_runs_are_units_too(monkeypatch):
    """precompute's ``ablations`` leave every Figure-2 run in the cache, so the ablation table in the kernel trains
    nothing; runs equal to the main run are not listed twice."""
    pair = _pair()
    jobs = ex.ablation_jobs([pair], CFG, num_models=[1, CFG.num_models], rounds=[1, CFG.rounds + 1],
                            gammas=[CFG.gamma, 1.0])  # fmt: skip
    assert [o for _, _, o in jobs] == [
        {"method": "rm", "arch": "typical", "num_models": 1},
        {"method": "rm", "arch": "typical", "rounds": CFG.rounds + 1},
        {"method": "rm", "arch": "typical", "gamma": 1.0},
    ]
    ex.precompute([(pair, CFG, "typical")], workers=1, ablations=jobs, progress=False)

    def boom(*a, **k):
        raise AssertionError("trained in the kernel although precompute cached it")

    for name in ("train_pool", "train_dann", "self_training"):
        monkeypatch.setattr(ex.runs, name, boom)
    abl = ablation([pair], CFG, num_models=[1, CFG.num_models], rounds=[1, CFG.rounds + 1], gammas=[CFG.gamma, 1.0])
    assert len(abl) == 6 and set(abl.param) == {"N", "T", "gamma"}


def test_settings_table_marks_the_paper_settings():
    paper = RunConfig(
        f_epochs=50, dann_epochs=50, batch_size=8, num_models=20, ens_size=10, rounds=5, proxy_epochs=20
    )
    t = ex.settings_table(paper).set_index("item")
    assert t.loc[["batch size", "N (ensemble size)", "T (rounds)", "γ"], "same"].all()
    assert t.loc["data", "same"]  # all 2,000 target reviews
    small = ex.settings_table(CFG, max_target=300).set_index("item")
    assert not small.loc["batch size", "same"] and not small.loc["data", "same"]
    assert small.loc["batch size", "ours"] == "32"


def test_pools_trained_member_after_member_are_one_unit_per_member(monkeypatch):
    """A pool that train_members trains one by one (here every toy pool, by lowering the vectorising limit) is
    spread as one unit per member; a member is the same model alone or in a pool of any size."""
    import torch

    import helpers.parallel
    import helpers.training.members

    monkeypatch.setattr(helpers.training.members, "VECTORISE_MAX_PARAMETERS", 10)
    units = []

    def serial_map(fn, items, *, names=None, common=None, **_):
        units.extend(names or [])
        return [fn(i, common) for i in items]

    monkeypatch.setattr(helpers.parallel, "map_units", serial_map)
    pair, cfg = _pair(), RunConfig(**{**CFG.key(), "num_models": 3, "ens_size": 2})
    ex.precompute([(pair, cfg, "typical")], workers=0, progress=False)
    members = sorted(n for n in units if n.startswith("pool"))
    assert members == [f"pool dann {pair.source_key} s{s}" for s in (1, 2, 3)] + [
        f"pool typical {pair.source_key} s{s}" for s in (1, 2)
    ]
    alone = ex.runs.supervised_pool(pair, cfg, "dann", [2])[0]
    together = ex.runs.train_pool(cfg.factory("dann", pair), pair.x_train, pair.y_train,
                                  cfg.train_settings(epochs=cfg.f_epochs), seeds=[1, 2])[1]  # fmt: skip
    for k, v in alone.state_dict().items():
        torch.testing.assert_close(v, together.state_dict()[k], rtol=0, atol=0)
