"""The executor (helpers.parallel): in-process and on a local Dask cluster; bad options; dead workers; the cache
under concurrent writers."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from helpers import parallel
from helpers.errors import InputValidationError


def square(x: int) -> int:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def threads_and_cache(_: int) -> tuple[int, str]:
    import torch

    return torch.get_num_threads(), os.environ.get("HELPERS_CACHE", "")


def nested(x: int) -> list[int]:
    return parallel.map_units(square, [x, x + 1], progress=False)  # on a worker: runs right there


def slow_cached(i: int) -> float:
    from helpers.cache import cached_arrays

    def compute():
        time.sleep(1.0)
        return {"v": np.full(1000, 7.0), "who": np.array(os.getpid())}

    return float(cached_arrays("race", {"k": 1}, compute)["v"].sum())


def die_unless_marked(marker: str) -> int:
    """Kills its worker the first time (no marker file yet), succeeds afterwards."""
    from pathlib import Path

    if not Path(marker).exists():
        Path(marker).write_text("died once")
        os._exit(1)
    return 1


def cached_square(x: int) -> int:
    from helpers.cache import cached_arrays

    return int(cached_arrays("squares", {"x": x}, lambda: {"v": np.array(x * x)})["v"])


def nap_since(args: tuple[float, float]) -> float:
    """Sleeps ``args[1]`` seconds; returns when it started, in seconds after ``args[0]``."""
    t0, secs = args
    start = time.time() - t0
    time.sleep(secs)
    return start


@pytest.fixture(scope="module")
def cluster():
    ex = parallel.start(2)
    yield ex
    ex.close()


@pytest.fixture()
def on_cluster(cluster, monkeypatch):
    """map_units in this process goes to the module's 2-worker cluster."""
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", cluster)
    return cluster


def _quiet_settings_here(dask_worker=None) -> dict:
    """What a process of the cluster runs with: distributed's config there and, on a worker, whether its sampling
    profiler is running and how often its event-loop check ticks."""
    import dask

    seen = {k: dask.config.get(k) for k in parallel.QUIET_CLUSTER_CONFIG}
    if dask_worker is not None:
        seen["profile_callback"] = "profile" in dask_worker.periodic_callbacks
        seen["tick_ms"] = dask_worker.periodic_callbacks["tick"].callback_time
    return seen


def test_the_local_cluster_runs_without_distributed_sampling_profiler_and_with_slow_health_checks(cluster):
    """The workers' statistical profiler is off and their event-loop check ticks once a second (distributed's
    defaults: a stack sample of the running unit every 10 ms, a tick every 20 ms), in the worker processes
    themselves, not only in this one's config; the scheduler ticks as slowly."""
    assert parallel.QUIET_CLUSTER_CONFIG["distributed.worker.profile.enabled"] is False
    for seen in cluster.client.run(_quiet_settings_here).values():
        assert seen["profile_callback"] is False and seen["tick_ms"] == 1000, seen
        assert {k: seen[k] for k in parallel.QUIET_CLUSTER_CONFIG} == parallel.QUIET_CLUSTER_CONFIG
    def scheduler_tick_ms(dask_scheduler) -> float:
        return dask_scheduler.periodic_callbacks["tick"].callback_time

    assert cluster.client.run_on_scheduler(scheduler_tick_ms) == 1000


@pytest.mark.parametrize("bad", [0, -1, "x", "1.5", "", True, None])
def test_bad_worker_counts_name_the_option(bad):
    with pytest.raises(InputValidationError, match="--workers: expected a whole number >= 1"):
        parallel.check_workers(bad)


def test_in_process_keeps_order_and_names_the_failing_unit(monkeypatch):
    monkeypatch.setenv("HELPERS_WORKERS", "1")
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", None)
    assert parallel.map_units(square, [3, 1, 2], progress=False) == [9, 1, 4]
    monkeypatch.setenv("HELPERS_NOTEBOOK", "07_mine")
    with pytest.raises(parallel.UnitError, match=r"unit 'c' of 07_mine failed: ValueError: three is not allowed"):
        parallel.map_units(fail_on_three, [1, 2, 3], names=["a", "b", "c"], progress=False)
    with pytest.raises(InputValidationError, match="names: expected 2 names"):
        parallel.map_units(square, [1, 2], names=["a"], progress=False)
    with pytest.raises(InputValidationError, match="priorities: expected 2 numbers"):
        parallel.map_units(square, [1, 2], priorities=[1], progress=False)


def test_cluster_keeps_order_fixes_threads_and_passes_the_cache_folder(on_cluster, monkeypatch, tmp_path):
    assert on_cluster.describe()["workers"] == 2 and on_cluster.slots == 2
    assert parallel.map_units(square, list(range(8)), progress=False) == [x * x for x in range(8)]
    assert parallel.map_units(square, [1, 2, 3], priorities=[0, 5, 1], progress=False) == [1, 4, 9]
    monkeypatch.setenv("HELPERS_CACHE", str(tmp_path / "elsewhere"))  # a later test's cache: the units follow it
    out = parallel.map_units(threads_and_cache, [0, 1, 2], progress=False)
    assert out == [(1, str(tmp_path / "elsewhere"))] * 3
    assert parallel.map_units(nested, [1, 5], progress=False) == [[1, 4], [25, 36]]


def test_cluster_unit_error_names_unit_and_notebook(on_cluster, monkeypatch):
    monkeypatch.setenv("HELPERS_NOTEBOOK", "07_mine")
    with pytest.raises(parallel.UnitError, match=r"unit 'pair c' of 07_mine failed: ValueError: three"):
        parallel.map_units(fail_on_three, [1, 2, 3, 4], names=["pair a", "pair b", "pair c", "pair d"],
                           progress=False)  # fmt: skip


def test_two_units_writing_one_cache_key_leave_one_complete_entry(on_cluster):
    from helpers.cache import cache_path

    assert parallel.map_units(slow_cached, [0, 1], progress=False) == [7000.0, 7000.0]
    path = cache_path("race", {"k": 1})
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == [path.name], files  # no temporary or lock file left behind
    with np.load(path) as data:
        assert data["v"].shape == (1000,) and float(data["v"].sum()) == 7000.0


def test_a_killed_worker_fails_clearly_and_a_rerun_resumes_from_the_cache(tmp_path, monkeypatch):
    from helpers.cache import cache_path

    ex = parallel.start(2)
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", ex)
    marker, survivor = str(tmp_path / "marker"), tmp_path / "survivor"
    survivor.write_text("exists: this unit just returns")
    try:
        assert parallel.map_units(cached_square, [2, 3], progress=False) == [4, 9]
        with pytest.raises(parallel.UnitError, match=r"unit 'killer' of .* failed \(its worker died"):
            parallel.map_units(die_unless_marked, [marker, str(survivor)], names=["killer", "twin"], progress=False)
    finally:
        ex.close()
    # the re-run reads the finished units back from the cache and completes
    assert cache_path("squares", {"x": 2}).exists() and cache_path("squares", {"x": 3}).exists()
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", None)
    monkeypatch.setenv("HELPERS_WORKERS", "1")
    assert parallel.map_units(die_unless_marked, [marker, marker], progress=False) == [1, 1]


def test_unreachable_scheduler_fails_clearly():
    with pytest.raises(parallel.ExecutorError, match=r"--scheduler: no Dask scheduler answered at tcp://127.0.0.1:9"):
        parallel.start(scheduler="tcp://127.0.0.1:9")
    with pytest.raises(InputValidationError, match="--scheduler: expected an address like tcp://HOST:PORT"):
        parallel.start(scheduler="localhost")
    with pytest.raises(InputValidationError, match="--workers and --scheduler"):
        parallel.start(2, scheduler="tcp://127.0.0.1:9")


def test_set_threads_is_capped_by_the_executor(monkeypatch):
    import torch

    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("HELPERS_THREADS", raising=False)
        assert parallel.set_threads(2) == 2
        monkeypatch.setenv("HELPERS_THREADS", "1")
        assert parallel.set_threads(2) == 1 and parallel.set_threads(0) == 1
        monkeypatch.setenv("HELPERS_THREADS", "zero")
        with pytest.raises(InputValidationError, match="HELPERS_THREADS"):
            parallel.set_threads(1)
    finally:
        torch.set_num_threads(before)


class GapEstimator:
    """A user's estimator registered in the calling process only: reference accuracy shifted by the change in mean
    top-logit gap (enough to check it runs on the workers)."""

    name = "test_gap"

    def fit(self, *, logits, labels, features=None):
        self.ref_acc_ = float((logits.argmax(1) == labels).mean())
        self.ref_gap_ = float(np.sort(logits, 1)[:, -1].mean() - np.sort(logits, 1)[:, -2].mean())
        return self

    def estimate(self, *, logits, features=None, interval=False):
        from helpers.estimators import Estimate

        gap = float(np.sort(logits, 1)[:, -1].mean() - np.sort(logits, 1)[:, -2].mean())
        return Estimate(method=self.name, accuracy=float(np.clip(self.ref_acc_ + 0.1 * (gap - self.ref_gap_), 0, 1)),
                        n=len(logits))  # fmt: skip


def _tasks():
    from helpers.benchmark import ShiftTask

    out = []
    for s in (1, 2, 3):
        rng = np.random.default_rng(s)

        def make(n, noise, rng=rng):
            y = rng.integers(0, 4, n)
            z = rng.normal(0, 1, (n, 4))
            z[np.arange(n), y] += 3 - noise
            return z, y

        metas = {f"m{i}": make(150, 0.5 * i) for i in range(4)}
        out.append(ShiftTask(f"task{s}", "fam" if s < 3 else "other", make(200, 0),
                             {f"t{i}": make(150, 0.8 * i) for i in range(2)}, meta=metas))  # fmt: skip
    return out


def test_benchmark_by_task_on_a_cluster_equals_one_call_and_carries_registered_estimators(on_cluster):
    import pandas as pd

    from helpers.benchmark import run_benchmark, run_benchmark_by_task
    from helpers.estimators import register_estimator
    from helpers.estimators.registry import ESTIMATORS

    tasks, methods = _tasks(), ["average_confidence", "atc_mc", "mde_normalized", "test_gap"]
    register_estimator("test_gap", GapEstimator)
    try:
        one = run_benchmark(tasks, methods=methods, n_boot=30, seed=4, progress=False)
        units = run_benchmark_by_task(tasks, methods=methods, n_boot=30, seed=4, progress=False)
    finally:
        ESTIMATORS.unregister("test_gap")
    assert set(units.rows.method) == set(methods)
    pd.testing.assert_frame_equal(one.rows.drop(columns="seconds"), units.rows.drop(columns="seconds"))
    pd.testing.assert_frame_equal(one.skipped, units.skipped)


def test_priority_orders_the_units_of_every_notebook_on_the_cluster(on_cluster):
    """Three 3-s units of a low-priority notebook start first (two run, one waits); four 0.5-s units of a
    higher-priority notebook submitted next all start before the waiting low one, on both workers.  (Units handed
    to workers at submission, as ``client.submit`` does, let the waiting low unit start first on its worker.)"""
    import threading

    t0, low = time.time(), {}
    th = threading.Thread(target=lambda: low.update(
        out=parallel.map_units(nap_since, [(t0, 3.0)] * 3, priorities=[0] * 3, progress=False)))  # fmt: skip
    th.start()
    time.sleep(1.0)
    high = parallel.map_units(nap_since, [(t0, 0.5)] * 4, priorities=[100] * 4, progress=False)
    th.join()
    first, waiting = sorted(low["out"])[:2], sorted(low["out"])[2]
    assert max(first) < min(high)  # the two workers took two low units at once, before the high ones came
    assert max(high) < waiting, (low["out"], high)


def test_after_starts_each_unit_once_what_it_needs_is_done_without_a_barrier(on_cluster):
    """Unit 2 needs the 1.5-s unit 0, unit 3 the 0.2-s unit 1: 3 starts after 1 ends but before 0 ends (no
    barrier between the 'stages'), 2 after 0 ends; results in the order of the items."""
    t0 = time.time()
    items = [(t0, 1.5), (t0, 0.2), (t0, 0.1), (t0, 0.1)]
    start = parallel.map_units(nap_since, items, after=[[], [], [0], [1]], progress=False)
    assert start[2] >= start[0] + 1.5 and start[3] >= start[1] + 0.2, start
    assert start[3] < start[0] + 1.5, start


@pytest.mark.parametrize(
    ("after", "match"),
    [([[]], "after: expected 2 lists"), ([[], [1]], r"after\[1\]: expected positions of earlier items \(0..0\)"),
     ([[1], []], r"after\[0\]"), ([[], [True]], r"after\[1\]"), ([[], ["0"]], r"after\[1\]")],
)  # fmt: skip
def test_after_must_name_earlier_items(monkeypatch, after, match):
    monkeypatch.setenv("HELPERS_WORKERS", "1")
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", None)
    with pytest.raises(InputValidationError, match=match):
        parallel.map_units(square, [1, 2], after=after, progress=False)
    assert parallel.map_units(square, [1, 2, 3], after=[[], [0], [0, 1]], progress=False) == [1, 4, 9]


class Counted:
    """An object that counts how often this process pickles it."""

    pickled = 0

    def __init__(self, data):
        self.data = data

    def __reduce__(self):
        Counted.pickled += 1
        return (Counted, (self.data,))


def plus_sum(item: int, common: Counted) -> int:
    return item + int(common.data.sum())


def test_common_object_goes_to_the_cluster_once_not_inside_every_unit(on_cluster):
    """``common`` is scattered once and every unit gets it: pickled once for 6 units (inside each unit's task it
    would be pickled 6 times: 03's full profile ran out of memory that way)."""
    Counted.pickled = 0
    out = parallel.map_units(plus_sum, list(range(6)), common=Counted(np.arange(1000)), progress=False)
    assert out == [i + 499500 for i in range(6)]
    assert Counted.pickled < 6, Counted.pickled


def test_common_object_in_process(monkeypatch):
    monkeypatch.setenv("HELPERS_WORKERS", "1")
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", None)
    assert parallel.map_units(plus_sum, [1, 2], common=Counted(np.arange(3)), progress=False) == [4, 5]


def test_the_dask_shim_builds_a_queued_task_with_the_installed_dask():
    """The private ``dask._task_spec.Task`` the executor relies on still exists and marks a data producer."""
    import dask

    from helpers.parallel import DASK_TASK_SPEC_CHECKED, queued_task_graph

    graph = queued_task_graph("unit-1", max, 1, 2)
    task = graph["unit-1"]
    assert type(task).__module__ == "dask._task_spec", f"dask {dask.__version__}: the shim fell back"
    assert task.data_producer and task() == 2
    assert tuple(map(int, dask.__version__.split(".")[:2])) >= tuple(map(int, DASK_TASK_SPEC_CHECKED.split(".")[:2]))
