"""What the executor's local cluster costs beside its units (a script, not a test):
``python scripts/executor_overhead.py``.

Starts :func:`helpers.parallel.start`'s two-worker local cluster with distributed's own settings (``distributed``),
with only its sampling profiler turned off (``no profiler``) and with the project's
:data:`helpers.parallel.QUIET_CLUSTER_CONFIG` (``project``), in turn, ``--repeats`` times each.  Each time it runs ``--units`` units that each spend ``--seconds`` of thread CPU in small torch
products under a deep Python stack (a model's forward pass is tens of frames deep, and distributed's sampling
profiler walks every frame), and reads the CPU of every process of the cluster (this one: scheduler, nannies,
client; the worker processes) with psutil.  ``overhead_cpu_s`` = that CPU minus the units' own thread CPU: what the
cluster spent on itself while the units ran; ``overhead_share`` = overhead / unit CPU.

With ``--smoke N``, distributed's defaults and the project's settings also run the runner's real job N times each,
every notebook's smoke profile on the two-worker cluster from an empty cache of its own (``helpers run --profile
smoke``), and the study reports that run's wall clock and CPU (the runner's ``cpu_s``: every process of the run)
and whether its records (times left out) equal those of the first smoke run: the settings must change no number.

Writes ``study_executor_overhead.{csv,md}`` to ``--out`` (default ``runs/studies``; ``--out figures`` for the
committed record), one row a run with the 1-minute load before it, and the medians per setting.  Wall time on
2 CPU cores at the defaults: about 8 minutes, and about 5 to 6 minutes more per smoke run.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import parallel  # noqa: E402
from helpers.run.results import comparable_records  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402

STACK_DEPTH = 40  #: Python frames above the unit's arithmetic


def burn(seconds: float) -> float:
    """``seconds`` of this thread's CPU in 256x256 float32 products (one torch thread); returns the CPU spent."""
    import torch

    torch.set_num_threads(1)
    start = time.thread_time()
    _nested(STACK_DEPTH, torch.randn(256, 256, generator=torch.Generator().manual_seed(0)), start + seconds)
    return time.thread_time() - start


def _nested(depth: int, a, until: float) -> None:
    if depth:
        return _nested(depth - 1, a, until)
    while time.thread_time() < until:
        a = (a @ a).tanh()


def _cluster_cpu(me) -> float:
    """CPU seconds (user + system) of this process and every live descendant."""
    import psutil

    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


def one_run(setting: str, units: int, seconds: float) -> dict:
    """One cluster under ``setting`` (:data:`SETTINGS`), ``units`` units of ``seconds`` each."""
    import psutil

    def measure() -> tuple[float, float, float]:
        ex = parallel.start(2)
        try:
            me = psutil.Process()
            ex.client.run(burn, 0.2)  # torch imported on every worker: its import is not the units' time
            time.sleep(2.0)
            cpu0, t0 = _cluster_cpu(me), time.perf_counter()
            futures = [ex.client.submit(burn, seconds, pure=False, key=f"burn-{i}") for i in range(units)]
            unit_cpu = sum(f.result() for f in futures)
            return unit_cpu, _cluster_cpu(me) - cpu0, time.perf_counter() - t0
        finally:
            ex.close()

    load = os.getloadavg()[0]
    unit_cpu, cpu, wall = _with_setting(setting, measure)
    overhead = cpu - unit_cpu
    return {"setting": setting, "load_1min": round(load, 2), "wall_s": round(wall, 1), "unit_cpu_s": round(unit_cpu, 1),
            "cluster_cpu_s": round(cpu, 1), "overhead_cpu_s": round(overhead, 2),
            "overhead_share": round(overhead / unit_cpu, 4)}  # fmt: skip


#: the cluster settings compared: distributed's defaults, its sampling profiler alone turned off, the project's
SETTINGS = ("distributed", "no profiler", "project")


def _with_setting(setting: str, fn, *args):
    """``fn(*args)`` with the cluster settings of ``setting`` (one of :data:`SETTINGS`)."""
    saved = dict(parallel.QUIET_CLUSTER_CONFIG)
    if setting != "project":
        parallel.QUIET_CLUSTER_CONFIG.clear()
    if setting == "no profiler":
        parallel.QUIET_CLUSTER_CONFIG["distributed.worker.profile.enabled"] = False
    try:
        return fn(*args)
    finally:
        parallel.QUIET_CLUSTER_CONFIG.clear()
        parallel.QUIET_CLUSTER_CONFIG.update(saved)


def smoke_run(setting: str, base: Path) -> tuple[dict, dict]:
    """Every notebook's smoke profile on the two-worker cluster under ``setting``, from an empty cache in ``base``."""
    import json

    from helpers.run import runner

    env = {"HELPERS_CACHE": base / "cache", "HELPERS_RUNS": base / "runs", "HELPERS_FIGURES": base / "figures"}
    before = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    load = os.getloadavg()[0]
    try:
        runs = _with_setting(setting, lambda: runner.run_notebooks(profile="smoke", workers=2, output_dir=base / "out",
                                                                   echo=False))  # fmt: skip
    finally:
        for k, v in before.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    status = json.loads((base / "out" / "run_status.json").read_text())["_run"]
    ok = all(r.status == "ok" for r in runs)
    row = {"setting": setting, "workload": "smoke run", "load_1min": round(load, 2), "wall_s": status["wall_s"],
           "cluster_cpu_s": status["cpu_s"], "load_mean": status["load_avg_mean"], "ok": ok}  # fmt: skip
    records = comparable_records(base / "out" / "results")
    return row, {k: "nan" if v != v else v for k, v in records.items()}  # NaN equal to NaN when comparing runs


def medians(df: pd.DataFrame) -> pd.DataFrame:
    """Per workload and setting: runs, median wall clock, cluster CPU and overhead, and whether every run's records
    equal the first smoke run's."""
    cols = [c for c in ("wall_s", "cluster_cpu_s", "overhead_cpu_s", "overhead_share") if c in df]
    g = df.groupby(["workload", "setting"], sort=False)
    out = g[cols].median()
    out.insert(0, "runs", g.size())
    if "records_equal_first" in df:
        out["records_equal_first"] = g["records_equal_first"].agg(lambda v: "" if v.isna().all() else bool(v.all()))
    return out.reset_index()


def write_record(df: pd.DataFrame, out: Path, *, units: int, seconds: float, wall_s: float | None = None) -> str:
    """``study_executor_overhead.{csv,md}`` in ``out``: the medians (table 1) and every run (table 2)."""
    import torch

    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "study_executor_overhead.csv", index=False)
    meta = (
        f"torch {torch.__version__}, {platform.machine()}, {os.cpu_count()} CPUs, a 2-worker local cluster"
        + (f", wall {wall_s:.0f} s" if wall_s is not None else "") + ". `burn units`: "
        f"{units} units of {seconds:g} s thread CPU each under a {STACK_DEPTH}-frame Python stack; `smoke run`: every "
        "notebook's smoke profile from an empty cache (`cluster_cpu_s`: the runner's `cpu_s`, every process of the "
        "run). Settings: `distributed` = distributed's defaults; `no profiler` = only "
        "`distributed.worker.profile.enabled: False`; `project` = `helpers.parallel.QUIET_CLUSTER_CONFIG` ("
        + ", ".join(f"`{k}: {v}`" for k, v in parallel.QUIET_CLUSTER_CONFIG.items())
        + "). Run in turn, each setting once per round; medians first, then every run with the 1-minute load before it."
    )
    text = (f"# Executor overhead beside the units\n\n{meta}\n\n{to_markdown(medians(df).astype(object).fillna(''))}"
            f"\n\nEvery run:\n\n{to_markdown(df.astype(object).fillna(''))}\n")  # fmt: skip
    (out / "study_executor_overhead.md").write_text(text, encoding="utf-8")
    return meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--units", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20.0, help="thread CPU seconds per unit")
    ap.add_argument("--smoke", type=int, default=0, help="smoke runs per setting (0: none)")
    ap.add_argument("--out", default="runs/studies")
    ap.add_argument("--render", metavar="CSV", help="only write the record again from a study's CSV")
    args = ap.parse_args()
    if args.render:
        write_record(pd.read_csv(args.render), Path(args.out), units=args.units, seconds=args.seconds)
        return
    t0 = time.perf_counter()
    rows = [{"workload": "burn units", **one_run(s, args.units, args.seconds)}
            for _ in range(args.repeats) for s in SETTINGS]  # fmt: skip
    if args.smoke:
        import tempfile

        first = None
        with tempfile.TemporaryDirectory(prefix="executor_overhead_") as tmp:
            for i in range(args.smoke):
                for setting in ("distributed", "project"):
                    row, records = smoke_run(setting, Path(tmp) / f"{setting}{i}")
                    first = records if first is None else first
                    rows.append({**row, "records": len(records), "records_equal_first": records == first})
    df = pd.DataFrame(rows)
    print(write_record(df, Path(args.out), units=args.units, seconds=args.seconds, wall_s=time.perf_counter() - t0))
    print(medians(df).to_string())


if __name__ == "__main__":
    main()
