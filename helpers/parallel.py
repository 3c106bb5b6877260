"""The project's one executor: Dask distributed, or in-process.

Every parallel place in the project goes through this module: the runner's notebooks
(:func:`helpers.run.runner.run_notebooks`) and the independent units inside a notebook (:func:`map_units`: notebook 01's
task pipelines, 03's training jobs, 05's setups, 06's grid tasks).

Where the work runs
-------------------
- ``python -m helpers run`` (default): a :class:`distributed.LocalCluster` sized to the machine, one worker process
  per core with one thread each (:func:`local_cluster_size`), started and shut down by the runner, with distributed's
  own bookkeeping turned down (:data:`QUIET_CLUSTER_CONFIG`).
- ``--scheduler tcp://HOST:PORT`` (or ``$HELPERS_SCHEDULER``): an existing cluster.  Every worker needs the same
  environment (this package installed) and the same paths: a shared ``HELPERS_DATA`` and ``HELPERS_CACHE``
  (:func:`connect` checks that the workers can import ``helpers``).
- ``--workers 1`` (``$HELPERS_WORKERS=1``): everything in the calling process, one unit after another;
  for debugging and for tests that need it.
- A notebook opened alone (JupyterLab, plain papermill) starts its own local cluster on the first
  :func:`map_units` call and shuts it down when its kernel exits.

Why nothing deadlocks or oversubscribes
---------------------------------------
The workers run units only.  The runner starts each notebook's kernel (a process) from one of its own threads,
which only waits on it, and hands the kernel the scheduler's address (``$HELPERS_SCHEDULER``): the kernel submits
its units to the cluster, where they take the worker threads, and waits.  The runner keeps one notebook more in
flight than the cluster has worker threads, those that others need first (:mod:`helpers.run.graph`): a kernel waiting
on its units uses no core, and one more notebook keeps the cores busy meanwhile.  At worst (every kernel computing)
a machine of N worker threads runs N + 1 kernels beside N units: single-threaded processes, which the operating
system shares fairly, never N threads per process on N cores.  A unit never submits units: a :func:`map_units`
call made on a worker runs its items in that worker, one after another.  Notebooks are not tasks on the workers:
a seceded task still counts on its worker, and the scheduler would send every unit to the other one.

Reproducibility
---------------
Each unit seeds itself (the experiments' functions take their seeds from their configs) and runs with a fixed
number of torch threads (:func:`set_threads`, ``$HELPERS_THREADS``, 1 per worker by default), so its result does not
depend on the worker that ran it or on the order.  Under the runner every kernel's torch threads are capped at the
same number.  A worker that dies fails its unit at once (no retry): the units it finished are in the cache, and a
re-run resumes from there.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from numbers import Integral
from pathlib import Path
from typing import Any

from helpers.errors import HelpersError, InputValidationError

__all__ = [
    "QUIET_CLUSTER_CONFIG", "ExecutorError", "UnitError", "Executor", "check_workers", "local_cluster_size",
    "start", "connect", "map_units", "set_threads", "thread_cap", "cpu_seconds", "note_cpu", "note_units",
]

ENV_SCHEDULER = "HELPERS_SCHEDULER"
ENV_WORKERS = "HELPERS_WORKERS"
ENV_THREADS = "HELPERS_THREADS"
ENV_PRIORITY = "HELPERS_PRIORITY"
CONNECT_TIMEOUT_S = 5.0


class ExecutorError(HelpersError, RuntimeError):
    """The executor could not be started or reached (bad option, unreachable scheduler, unusable workers)."""


class UnitError(HelpersError, RuntimeError):
    """A unit submitted by :func:`map_units` raised, or its worker died; the message names the unit."""


def check_workers(value: Any, *, option: str = "--workers") -> int:
    """``value`` as a number of worker processes (a whole number >= 1), else :class:`InputValidationError`."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    try:
        n = int(str(value).strip())
    except ValueError:
        raise InputValidationError(f"{option}: expected a whole number >= 1, got {value!r}") from None
    if n < 1 or str(value).strip() != str(n):
        raise InputValidationError(f"{option}: expected a whole number >= 1, got {value!r}")
    return n


def local_cluster_size() -> int:
    """Worker processes of the default local cluster: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def thread_cap() -> int | None:
    """Torch threads per kernel or unit set by the executor (``$HELPERS_THREADS``), or None outside it."""
    value = os.environ.get(ENV_THREADS)
    return check_workers(value, option=ENV_THREADS) if value else None


def set_threads(requested: int | None) -> int:
    """Set torch's intra-op threads to ``requested`` (0 or None: torch's default), capped by :func:`thread_cap`.

    Notebooks call this instead of ``torch.set_num_threads``: alone, a notebook keeps its own thread parameter;
    under the executor every kernel and unit runs with the executor's fixed thread count, so results do not
    depend on which notebooks share the machine.  Returns the number of threads now in use.
    """
    import torch

    cap = thread_cap()
    n = int(requested or 0)
    if cap is not None:
        n = cap if n <= 0 else min(n, cap)
    if n > 0:
        torch.set_num_threads(n)
    return torch.get_num_threads()


class Executor:
    """Runs callables in this process (``client is None``) or on a Dask cluster.

    Use :func:`start` (the runner) or :func:`connect` to make one; ``with`` closes what it started.
    """

    def __init__(self, client: Any = None, cluster: Any = None, threads: int = 1):
        self.client, self.cluster, self.threads = client, cluster, threads

    @property
    def address(self) -> str | None:
        """The scheduler's address, or None in-process."""
        return None if self.client is None else self.client.scheduler.address

    @property
    def slots(self) -> int:
        """Worker threads of the cluster (1 in-process); the runner keeps one notebook more than this in flight."""
        if self.client is None:
            return 1
        info = self.client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    def describe(self) -> dict[str, Any]:
        """Workers, threads per worker and the scheduler's address (recorded in ``run_status.json``)."""
        if self.client is None:
            return {"executor": "in-process", "workers": 1, "threads_per_worker": self.threads, "scheduler": None}
        workers = self.client.scheduler_info().get("workers", {})
        return {
            "executor": "local cluster" if self.cluster is not None else "cluster",
            "workers": len(workers),
            "threads_per_worker": sorted({w.get("nthreads", 1) for w in workers.values()}),
            "scheduler": self.address,
        }

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


#: distributed's bookkeeping that the local cluster turns down: it costs CPU beside the units and gives nothing here
#: (no dashboard is installed): each worker's sampling profiler, every process's event-loop check and system monitor.
#: No unit's computation changes (``scripts/executor_overhead.py``); a cluster reached by address keeps its settings.
QUIET_CLUSTER_CONFIG: dict[str, Any] = {"distributed.worker.profile.enabled": False,
                                        "distributed.admin.tick.interval": "1s",
                                        "distributed.admin.system-monitor.interval": "5s"}  # fmt: skip


def start(workers: int | None = None, scheduler: str | None = None, *, threads: int = 1) -> Executor:
    """An executor for ``workers`` local processes, or the cluster at ``scheduler``.

    ``workers=1`` (and no scheduler): in-process.  ``workers=None``: :func:`local_cluster_size`.  A scheduler and a
    worker count together are an error (the cluster has its own workers).
    """
    threads = check_workers(threads, option="threads")
    if scheduler:
        if workers is not None:
            raise InputValidationError("--workers and --scheduler: give one (a cluster brings its own workers)")
        return connect(scheduler, threads=threads)
    n = local_cluster_size() if workers is None else check_workers(workers)
    if n == 1:
        return Executor(threads=threads)
    import dask
    from distributed import Client, LocalCluster

    for name in ("distributed", "distributed.scheduler", "distributed.nanny", "distributed.core"):
        logging.getLogger(name).setLevel(logging.ERROR)  # no INFO lines from the in-process scheduler on the console

    env = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           ENV_THREADS: str(threads)}  # fmt: skip
    # a dead worker is an out-of-memory kill or a crash of the unit itself: a retry would repeat it, so fail the
    # unit at once (its finished siblings are cached; a re-run resumes).  Worker saturation 1.0: the scheduler
    # hands a worker a queued unit only when its thread is free (see _submit)
    settings = {"distributed.scheduler.allowed-failures": 0, "distributed.nanny.pre-spawn-environ": env,
                "distributed.scheduler.worker-saturation": 1.0, **QUIET_CLUSTER_CONFIG}  # fmt: skip
    with dask.config.set(settings):
        cluster = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR, memory_limit=0,
        )  # fmt: skip
        client = Client(cluster)
    return Executor(client, cluster, threads=threads)


def _probe() -> str:
    import helpers

    return os.path.dirname(helpers.__file__)


def connect(address: str, *, threads: int = 1, timeout: float = CONNECT_TIMEOUT_S) -> Executor:
    """A client of the scheduler at ``address`` whose workers can import ``helpers``; a clear error otherwise."""
    from distributed import Client

    if not isinstance(address, str) or "://" not in address:
        raise InputValidationError(f"--scheduler: expected an address like tcp://HOST:PORT, got {address!r}")
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(
            f"--scheduler: no Dask scheduler answered at {address} within {timeout:.0f} s ({type(exc).__name__}); "
            "start one with `dask scheduler` or leave --scheduler out for a local cluster"
        ) from None
    try:
        if not client.scheduler_info().get("workers"):
            client.wait_for_workers(1, timeout=timeout)
        client.run(_probe)
    except Exception as exc:
        client.close()
        raise ExecutorError(
            f"--scheduler: the workers of {address} cannot run this project's code ({type(exc).__name__}: {exc}); "
            "every worker needs the helpers package installed and the same HELPERS_DATA / HELPERS_CACHE paths"
        ) from None
    return Executor(client, threads=threads)


_NOTEBOOK_EXECUTOR: Executor | None = None


def _notebook_executor() -> Executor:
    """The executor of this process's :func:`map_units` calls: the runner's cluster (``$HELPERS_SCHEDULER``),
    in-process (``$HELPERS_WORKERS=1``), or a local cluster started once and shut down at exit."""
    global _NOTEBOOK_EXECUTOR
    if _NOTEBOOK_EXECUTOR is None:
        address = os.environ.get(ENV_SCHEDULER)
        workers = os.environ.get(ENV_WORKERS)
        if address:
            _NOTEBOOK_EXECUTOR = connect(address, threads=thread_cap() or 1)
        else:
            _NOTEBOOK_EXECUTOR = start(check_workers(workers, option=ENV_WORKERS) if workers else None)
        atexit.register(_NOTEBOOK_EXECUTOR.close)
    return _NOTEBOOK_EXECUTOR


def _on_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


#: the caller's folders a unit needs (a cluster's workers see them at the same paths: a shared filesystem)
_UNIT_PATHS = ("HELPERS_DATA", "HELPERS_CACHE")


def _unit_env() -> dict[str, str]:
    return {v: str(Path(os.environ[v]).expanduser().resolve()) for v in _UNIT_PATHS if os.environ.get(v)}


def _run_unit(fn: Callable[..., Any], item: Any, threads: int, env: dict[str, str], *common: Any) -> Any:
    """One unit on a worker (one thread per worker): the caller's data and cache folders, fixed torch threads,
    then ``fn(item)`` (``fn(item, common)`` with the object shared by every unit, resolved from the cluster)."""
    import torch

    os.environ.update(env)
    os.environ[ENV_THREADS] = str(threads)  # set_threads() inside the unit is capped at the worker's threads
    torch.set_num_threads(threads)
    return fn(item, *common)


#: thread CPU seconds of this process's units that ran on workers (the run-times table's CPU column)
_UNIT_CPU_S = 0.0


def cpu_seconds() -> dict[str, float]:
    """CPU seconds so far of this process (every thread, units run in-process included) and of its units that ran
    on workers (each unit's thread CPU time there)."""
    return {"process_cpu_s": time.process_time(), "unit_cpu_s": _UNIT_CPU_S}


def note_cpu() -> None:
    """Write :func:`cpu_seconds` to ``$HELPERS_RESULTS/<notebook>.cpu.json`` under the runner (else nothing): the
    runner adds it to the notebook's row of the run times."""
    folder, notebook = os.environ.get("HELPERS_RESULTS"), os.environ.get("HELPERS_NOTEBOOK")
    if folder and notebook and Path(folder).is_dir():
        (Path(folder) / f"{notebook}.cpu.json").write_text(json.dumps(cpu_seconds()), encoding="utf-8")


def note_units(desc: str, names: Sequence[str], cpu_s: Sequence[float]) -> None:
    """Append one line per unit (``map``: ``desc``, ``unit``, ``cpu_s``) to ``$HELPERS_RESULTS/units/<notebook>.jsonl``
    under the runner (else nothing): the run's CPU profile by unit (:func:`helpers.publish.times.cpu_profile`)."""
    folder, notebook = os.environ.get("HELPERS_RESULTS"), os.environ.get("HELPERS_NOTEBOOK")
    if not (folder and notebook and Path(folder).is_dir()):
        return
    (Path(folder) / "units").mkdir(exist_ok=True)
    with open(Path(folder) / "units" / f"{notebook}.jsonl", "a", encoding="utf-8") as fh:
        for name, cpu in zip(names, cpu_s):
            fh.write(json.dumps({"map": desc, "unit": str(name), "cpu_s": round(float(cpu), 3)}) + "\n")


def _timed_unit(*args: Any) -> tuple[Any, float]:
    """:func:`_run_unit` and the CPU seconds of the worker thread that ran it."""
    start = time.thread_time()
    out = _run_unit(*args)
    return out, time.thread_time() - start


def _submit(client: Any, key: str, args: tuple, priority: int) -> Any:
    """``_run_unit(*args)`` as a future, held in the scheduler's queue until a worker thread is free.

    ``client.submit`` would hand the unit to a worker at once (Dask assigns tasks of small groups eagerly), and
    priorities then only order each worker's own queue: measured on 2 workers, a low-priority unit queued behind a
    running one started before four higher-priority units of another client.  A task marked as a data producer is
    "root-ish", so the scheduler queues it and, with ``worker-saturation`` 1.0 (:func:`start`; set it on a cluster of
    your own too), gives each free thread the highest-priority unit of every notebook's.
    """
    return client.get(queued_task_graph(key, _timed_unit, *args), key, sync=False, priority=priority)


#: The Dask release :func:`queued_task_graph` was checked against (``tests/test_parallel.py`` re-checks the installed one).
DASK_TASK_SPEC_CHECKED = "2026.8.0"


def queued_task_graph(key: str, fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """The one-task graph ``{key: fn(*args)}``, marked as a data producer so that the scheduler queues it.

    The one use of a private Dask name in the project: ``dask._task_spec.Task`` with ``_data_producer=True`` (checked
    against Dask :data:`DASK_TASK_SPEC_CHECKED`).  Should a later Dask release move it, the plain tuple task
    ``(fn, *args)`` is used instead, with a warning: units still run, but may start out of priority order.
    """
    try:
        from dask._task_spec import Task

        return {key: Task(key, fn, *args, _data_producer=True)}
    except (ImportError, TypeError) as exc:  # pragma: no cover - a Dask release without the private name
        import warnings

        warnings.warn(f"dask._task_spec.Task unavailable ({exc}); units are queued without priorities", stacklevel=2)
        return {key: (fn, *args)}


def map_units(
    fn: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    names: Sequence[str] | None = None,
    desc: str = "units",
    progress: bool = True,
    priorities: Sequence[int] | None = None,
    after: Sequence[Sequence[int]] | None = None,
    common: Any = None,
) -> list[Any]:
    """``[fn(item) for item in items]``, the items run as units on the executor, each once those it needs are done.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled to the workers): ``fn(item)`` computes one unit.  Units should
        write what they compute to the cache (:func:`helpers.cache.cached_arrays`, checkpoints) so that an
        interrupted run keeps every finished unit.
    items : iterable
        One argument per unit.
    names : sequence of str, optional
        One name per unit for progress and errors (default ``"<desc> <i>"``).
    desc, progress
        Progress-bar label, and whether to show it.
    priorities : sequence of int, optional
        On a cluster, units with a higher priority start first (e.g. the longest first, so that it does not start
        last); default: in the order given.  The runner adds ``$HELPERS_PRIORITY`` (1000 per CPU-minute on the notebook's critical path,
        this one), so the units of a notebook on the way to another go first.  Results are returned in the order
        of ``items`` either way.
    after : sequence of sequences of int, optional
        One list per item: the positions of the earlier items it needs (``after[i]`` ⊆ ``range(i)``).  On a
        cluster a unit is submitted as soon as the units it needs have finished, so that one stage's work starts
        pair by pair instead of after a barrier (notebook 03: a pair's methods after that pair's shared models).
        In-process the items run in the order given, which satisfies every ``after``.  Default: no dependencies.
    common : object, optional
        One object every unit needs (e.g. the data sets), so that the units call ``fn(item, common)``.  On a
        cluster it is sent once (``client.scatter``) and the units refer to it, as Dask's best practices advise,
        instead of a copy inside every unit's task: 03's ``full`` profile put each Amazon pair (~80 MB) into
        each of ~200 units, and the queued tasks held 11 GB in the scheduler until the machine ran out of memory.

    Returns
    -------
    list
        The results in the order of ``items``.

    Raises
    ------
    UnitError
        A unit raised or its worker died; the message names the unit and the notebook (``$HELPERS_NOTEBOOK``).
    """
    from helpers.progress import tqdm

    items = list(items)
    names = list(names) if names is not None else [f"{desc} {i}" for i in range(len(items))]
    if len(names) != len(items):
        raise InputValidationError(f"names: expected {len(items)} names (one per item), got {len(names)}")
    priorities = list(priorities) if priorities is not None else [0] * len(items)
    if len(priorities) != len(items):
        raise InputValidationError(f"priorities: expected {len(items)} numbers (one per item), got {len(priorities)}")
    needs = _check_after(after, len(items))
    where = os.environ.get("HELPERS_NOTEBOOK") or "this process"
    ex = None if _on_worker() or len(items) <= 1 else _notebook_executor()
    extra = () if common is None else (common,)
    if ex is None or ex.client is None:
        out, spent = [], []
        for name, item in zip(tqdm(names, desc=desc, disable=not progress), items):
            start = time.process_time()  # units run one after another here: the process's CPU is the unit's
            try:
                out.append(fn(item, *extra))
            except Exception as exc:
                raise UnitError(f"unit {name!r} of {where} failed: {type(exc).__name__}: {exc}") from exc
            spent.append(time.process_time() - start)
        if not _on_worker():
            note_units(desc, names, spent)
        note_cpu()
        return out
    from distributed import as_completed

    env = _unit_env()
    base = int(os.environ.get(ENV_PRIORITY) or 0)
    priorities = [base + p for p in priorities]
    futures: list[Any] = [None] * len(items)
    position: dict[str, int] = {}
    if extra:  # a future in the task is a dependency: each worker fetches the object once, not once per unit
        extra = tuple(ex.client.scatter(list(extra), hash=False))

    def submit(i: int) -> Any:
        key = f"{desc}-{names[i]}-{os.urandom(4).hex()}"
        futures[i] = _submit(ex.client, key, (fn, items[i], ex.threads, env, *extra), priorities[i])
        position[key] = i
        return futures[i]

    waiting = {i: set(a) for i, a in enumerate(needs) if a}  # units submitted once what they need is done
    running = as_completed([submit(i) for i in range(len(items)) if i not in waiting])
    try:
        for fut in tqdm(running, total=len(items), desc=desc, disable=not progress):
            done = position[fut.key]
            if fut.status == "error":
                exc = fut.exception()
                hint = (" (its worker died: killed or out of memory; finished units are cached, re-run to resume)"
                        if type(exc).__name__ == "KilledWorker" else "")  # fmt: skip
                raise UnitError(
                    f"unit {names[done]!r} of {where} failed{hint}: {type(exc).__name__}: {exc}"
                ) from exc
            for i in sorted(waiting):
                waiting[i].discard(done)
                if not waiting[i]:
                    del waiting[i]
                    running.add(submit(i))
    finally:
        for f in futures:
            if f is not None and not f.done():
                f.cancel()
    global _UNIT_CPU_S
    timed = [f.result() for f in futures]
    _UNIT_CPU_S += sum(cpu for _, cpu in timed)
    note_units(desc, names, [cpu for _, cpu in timed])
    note_cpu()
    return [out for out, _ in timed]


def _check_after(after: Sequence[Sequence[int]] | None, n: int) -> list[list[int]]:
    """``after`` of :func:`map_units` as lists of earlier positions, else :class:`InputValidationError`."""
    if after is None:
        return [[] for _ in range(n)]
    after = list(after)
    if len(after) != n:
        raise InputValidationError(f"after: expected {n} lists (one per item), got {len(after)}")
    out = []
    for i, needs in enumerate(after):
        needs = list(needs)
        if not all(isinstance(j, Integral) and not isinstance(j, bool) and 0 <= j < i for j in needs):
            raise InputValidationError(f"after[{i}]: expected positions of earlier items (0..{i - 1}), got {needs}")
        out.append([int(j) for j in needs])
    return out
