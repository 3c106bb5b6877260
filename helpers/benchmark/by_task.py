""":func:`run_benchmark` with one unit per task on the project's executor (:mod:`helpers.parallel`).

Each task's rows depend on that task and the methods only (every bootstrap is seeded by ``seed``), so the rows and
the skipped list are those of one :func:`run_benchmark` call over all tasks, in the same order; only ``seconds`` (each
unit's own measurement) differ.  Estimators registered in the calling process with
:func:`helpers.estimators.register_estimator` travel with the units and are registered on the workers too.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from helpers.benchmark.engine import BenchmarkResult, _check_args, run_benchmark
from helpers.benchmark.task import ShiftTask

__all__ = ["run_benchmark_by_task"]


def _task_unit(job: tuple) -> BenchmarkResult:
    from helpers.estimators import list_estimators, register_estimator

    task, methods, factories, n_boot, level, seed = job
    known = set(list_estimators())
    for name, factory in factories.items():
        if name not in known:  # registered in the caller's process only (e.g. in a notebook)
            register_estimator(name, factory)
    return run_benchmark([task], methods=methods, n_boot=n_boot, level=level, seed=seed, progress=False)


def run_benchmark_by_task(
    tasks: Sequence[ShiftTask],
    *,
    methods: Sequence[str] | None = None,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
    progress: bool = True,
) -> BenchmarkResult:
    """:func:`run_benchmark` (same arguments, same rows but ``seconds``), one task per unit on the executor's
    workers (:func:`helpers.parallel.map_units`)."""
    from helpers.estimators.registry import ESTIMATORS
    from helpers.parallel import map_units

    tasks, methods = _check_args(tasks, methods, n_boot, level)
    factories = {m: ESTIMATORS.get(m) for m in methods}
    jobs = [(t, methods, factories, int(n_boot), float(level), int(seed)) for t in tasks]
    # the biggest tasks (most sets) first, so that none of them starts last
    sizes = [len(t.targets) + len(t.meta) for t in tasks]
    parts = map_units(_task_unit, jobs, names=[t.name for t in tasks], desc="benchmark tasks", progress=progress,
                      priorities=sizes)  # fmt: skip
    rows = [p.rows for p in parts if len(p.rows)]
    skipped = [p.skipped for p in parts if len(p.skipped)]
    out = BenchmarkResult(
        pd.concat(rows, ignore_index=True) if rows else parts[0].rows.iloc[:0],
        pd.concat(skipped, ignore_index=True) if skipped else BenchmarkResult(pd.DataFrame()).skipped,
    )
    return out
