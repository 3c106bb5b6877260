"""Execute the notebooks with papermill under a named profile.

Profiles are parameter sets stored with the notebooks, one YAML file per notebook
(``notebooks/profiles/<stem>.yaml``), mapping each profile name to the notebook's parameters::

    smoke:   {n_train: 300, epochs: 3}
    default: {epochs: 15}
    full:    {epochs: 30}

Every notebook has a cell tagged ``parameters``.  The runner refuses a parameter that the notebook does not
declare, or a value of another type (:mod:`helpers.run.notebook_params`), passes ``profile`` when the notebook
declares it, writes every run to its own folder ``<runs>/<profile>/<run id>/`` (git-ignored; executed notebooks,
records, figures; :mod:`helpers.paths`), goes on past a failing notebook, reports which notebook and cell failed,
and writes the folder's ``run_status.json`` after every notebook so an interrupted batch can be resumed with
``resume=True`` (finished notebooks whose source, parameters, ``helpers`` code and data files are unchanged are
skipped).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from helpers.errors import ProfileError
from helpers.paths import REPO_ROOT, runs_dir  # noqa: F401  (runs_dir: re-exported for callers)
from helpers.run.notebook_params import check_parameters as _check_parameters
from helpers.run.notebook_params import declared_parameters, namespace_parameters, notebook_parameters  # noqa: F401
from helpers.run.profiles import PROFILES, list_notebooks, load_profile, notebooks_dir, select_notebooks  # noqa: F401

__all__ = [
    "PROFILES",
    "NotebookRun",
    "notebooks_dir",
    "list_notebooks",
    "load_profile",
    "declared_parameters",
    "notebook_parameters",
    "namespace_parameters",
    "run_notebook",
    "run_notebooks",
    "run_folder_label",
    "format_runs",
]

#: on a cluster, how often (s) the console says what is still running and the load average is sampled
HEARTBEAT_S = 120.0
_PATH_VARS = ("HELPERS_DATA", "HELPERS_CACHE", "HELPERS_RUNS", "HELPERS_FIGURES")


@dataclass
class NotebookRun:
    """Outcome of one notebook execution."""

    notebook: str
    status: str  # "ok", "failed", "skipped"
    wall_s: float
    output: str
    failed_cell: int | None = None
    error: str = ""
    source_sha256: str = ""
    params_sha256: str = ""
    finished_at: str = ""  # UTC, ISO 8601
    load_avg: float | None = None  # 1-minute load average at the end (timings on a shared CPU depend on it)
    code_sha256: str = ""  # the helpers package's source (see inputs_fingerprint)
    data_sha256: str = ""  # the data folder's files (see inputs_fingerprint)
    started_at: str = ""  # UTC, ISO 8601
    cpu_s: float | None = None  # CPU seconds of its kernel and of its units on the workers (helpers.parallel.note_cpu)


#: the notebook being executed right now (for the one-line message on Ctrl-C)
CURRENT: dict[str, str] = {}


def inputs_fingerprint() -> dict[str, str]:
    """Fingerprints of what a notebook's results depend on besides its source and parameters.

    ``code_sha256``: sha256 over every ``helpers/**/*.py`` file (path and content).  ``data_sha256``: sha256 over
    every file under the data folder (``$HELPERS_DATA``) by relative path, size and modification time (reading
    gigabytes of data at every resume would cost minutes; ``python -m helpers data check`` verifies contents).
    """
    from helpers.paths import data_dir

    code = hashlib.sha256()
    pkg = REPO_ROOT / "helpers"
    for f in sorted(pkg.rglob("*.py")):
        code.update(str(f.relative_to(pkg)).encode() + b"\0" + f.read_bytes() + b"\0")
    data = hashlib.sha256()
    root = data_dir()
    if root.is_dir():
        for f in sorted(root.rglob("*")):
            if f.is_file():
                st = f.stat()
                data.update(f"{f.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return {"code_sha256": code.hexdigest(), "data_sha256": data.hexdigest()}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_notebook(
    notebook: Path,
    *,
    profile: str = "smoke",
    parameters: Mapping[str, Any] | None = None,
    output_dir: Path | None = None,
    kernel_name: str | None = None,
    timeout: float | None = None,
    progress: bool | None = None,
    executor_env: Mapping[str, str] | None = None,
) -> NotebookRun:
    """Execute one notebook with papermill; never raises for a failing cell (returns status ``"failed"``).

    Parameters
    ----------
    notebook : Path
        The input notebook.
    profile : str
        Profile name, passed as the ``profile`` parameter when the notebook declares one.
    parameters : mapping, optional
        Parameters to inject; each must be declared by the notebook (else :class:`ProfileError`).
    output_dir : Path, optional
        The run folder: the executed copy, ``results/`` and ``figures/`` (default: a new run folder,
        :func:`helpers.paths.new_run_dir`).
    kernel_name : str, optional
        Jupyter kernel; default: the kernel of the Python running this code.
    timeout : float, optional
        Per-cell execution timeout in seconds, rounded up to whole seconds (papermill refuses a float).
    progress : bool, optional
        A cell i/n progress bar (papermill's); default: on when stderr is a terminal.
    executor_env : mapping, optional
        Extra environment of the kernel: how its units reach the executor (:mod:`helpers.parallel`).
    """
    import sys

    import papermill
    from papermill.exceptions import PapermillExecutionError

    notebook = Path(notebook)
    params = dict(parameters or {})
    declared = declared_parameters(notebook)
    if "profile" in declared:
        params.setdefault("profile", profile)
    _check_parameters(notebook, params)
    if output_dir is None:
        from helpers.paths import new_run_dir

        output_dir = new_run_dir(profile)
    out_dir = Path(output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / notebook.name
    results = out_dir / "results"
    # this run's records go to a staging folder and replace the last run's only when the notebook succeeds: a
    # failed re-run keeps the last good results (marked stale in the summary), its own records go to failed/
    staging = results / ".running"
    staging.mkdir(parents=True, exist_ok=True)
    (staging / f"{notebook.stem}.jsonl").unlink(missing_ok=True)
    for old in (staging / "claims").glob(f"{notebook.stem}.*"):  # claim outcomes (helpers.claims) of an earlier try
        old.unlink()

    env = kernel_environment(notebook.stem, profile, staging, out_dir, executor_env)
    run = NotebookRun(
        notebook=notebook.stem,
        status="ok",
        wall_s=0.0,
        output=str(output),
        source_sha256=_sha256(notebook.read_bytes()),
        params_sha256=_sha256(json.dumps(params, sort_keys=True, default=str).encode()),
        **inputs_fingerprint(),
    )
    CURRENT.update(notebook=notebook.stem, profile=profile)
    run.started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    start = time.perf_counter()
    try:
        papermill.execute_notebook(
            str(notebook),
            str(output),
            parameters=params,
            kernel_name=kernel_name,
            progress_bar=sys.stderr.isatty() if progress is None else bool(progress),
            execution_timeout=None if timeout is None else int(math.ceil(timeout)),  # papermill takes an int
            kernel_manager_class=_kernel_manager_class(env, cwd=notebook.parent),
        )
    except PapermillExecutionError as exc:
        run.status = "failed"
        run.failed_cell = exc.exec_count
        run.error = f"{exc.ename}: {exc.evalue}"
    except Exception as exc:  # kernel died, timeout, bad notebook JSON: report, go on with the next
        run.status = "failed"
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        run.wall_s = time.perf_counter() - start
        run.finished_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        run.load_avg = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
        CURRENT.clear()
        run.cpu_s = _read_cpu_note(staging / f"{notebook.stem}.cpu.json")
        _settle_records(staging / f"{notebook.stem}.jsonl", results, ok=run.status == "ok")
        _settle_claims(staging / "claims", notebook.stem, results, ok=run.status == "ok")
        _settle_records(staging / "units" / f"{notebook.stem}.jsonl", results / "units", ok=run.status == "ok")
    return run


def _read_cpu_note(path: Path) -> float | None:
    """The kernel's last CPU note (its own seconds plus its units' on the workers), removed once read."""
    try:
        note = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
        return round(float(note["process_cpu_s"]) + float(note["unit_cpu_s"]), 1)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cpu_total() -> float | None:
    """CPU seconds of this process and its descendants (finished ones that were waited for, and running ones such
    as a local cluster's workers); None without psutil."""
    try:
        import psutil
    except ImportError:
        return None
    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in me.children(recursive=True):
        try:
            c = child.cpu_times()
            total += c.user + c.system
        except psutil.Error:
            pass
    return total


def kernel_environment(
    stem: str, profile: str, staging: Path, out_dir: Path, executor_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a notebook's kernel: this process's, with the notebook's name, profile, records folder
    and figures folder, absolute data/cache/run paths (the kernel runs in the notebook's folder) and the
    executor's settings (``executor_env``: scheduler address, threads).  Built per notebook instead of changing
    ``os.environ``, so that notebooks started at the same time from one process never see each other's."""
    env = dict(os.environ)
    env.update(HELPERS_NOTEBOOK=stem, HELPERS_PROFILE=profile, HELPERS_RESULTS=str(staging))
    # figures inline in the executed notebook (its published copy shows them); a non-interactive "Agg" from the
    # environment is kept (the tests need no images), any other backend (a GUI one) is not
    backend = os.environ.get("MPLBACKEND", "")
    env["MPLBACKEND"] = backend if backend.lower() == "agg" else "module://matplotlib_inline.backend_inline"
    if not env.get("HELPERS_FIGURES"):  # the run's figures live beside its executed notebooks
        env["HELPERS_FIGURES"] = str(Path(out_dir).resolve() / "figures")
    for var in _PATH_VARS:
        if env.get(var):
            env[var] = str(Path(env[var]).expanduser().resolve())
    env.update(executor_env or {})
    return env


def _settle_records(staged: Path, results: Path, *, ok: bool) -> None:
    """Move a finished notebook's staged records into ``results/`` (success) or ``results/failed/`` (failure,
    or an interrupted run: the last good records stay where they were)."""
    dest = results if ok else results / "failed"
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / staged.name
    if staged.exists():
        os.replace(staged, target)
    elif ok:  # a successful notebook that recorded nothing: its older records no longer describe it
        target.unlink(missing_ok=True)


def _settle_claims(staged: Path, stem: str, results: Path, *, ok: bool) -> None:
    """Like :func:`_settle_records` for the notebook's claim outcomes and their per-setup detail
    (``claims/<notebook>.jsonl``, ``claims/<notebook>.<claim id>.csv``)."""
    dest = (results if ok else results / "failed") / "claims"
    if ok:
        for old in dest.glob(f"{stem}.*"):
            old.unlink()
    for f in sorted(staged.glob(f"{stem}.*")) if staged.is_dir() else []:
        dest.mkdir(parents=True, exist_ok=True)
        os.replace(f, dest / f.name)


class RunFolderLock:
    """An exclusive lock on one run folder (``<folder>/.lock``, created with ``O_EXCL``).

    A second runner on the same folder gets :class:`~helpers.errors.ProfileError` naming the holder (pid, host,
    start time); a lock left by a process that no longer runs on this host is taken over.
    """

    def __init__(self, folder: Path):
        self.path = Path(folder) / ".lock"

    def __enter__(self) -> RunFolderLock:
        import socket

        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": datetime.now(timezone.utc).isoformat()}
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                holder = self._holder()
                young = time.time() - self._mtime() < 10.0  # an empty lock may be one being written now
                if (holder and self._alive(holder)) or (not holder and young):
                    raise ProfileError(
                        f"run folder {self.path.parent} is in use by another runner (pid {holder.get('pid')} on "
                        f"{holder.get('host')}, since {holder.get('since')}); wait for it, or use another "
                        "HELPERS_RUNS folder"
                    ) from None
                self.path.unlink(missing_ok=True)  # stale lock: its process is gone
                continue
            with os.fdopen(fd, "w") as f:
                json.dump(me, f)
            return self
        raise ProfileError(f"could not lock the run folder {self.path.parent}")

    def __exit__(self, *exc: Any) -> None:
        self.path.unlink(missing_ok=True)

    def _mtime(self) -> float:
        try:
            return self.path.stat().st_mtime
        except OSError:
            return 0.0

    def _holder(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}

    @staticmethod
    def _alive(holder: dict[str, Any]) -> bool:
        import socket

        if holder.get("host") != socket.gethostname():
            return True  # another machine's runner: cannot check, assume it runs
        try:
            os.kill(int(holder.get("pid", -1)), 0)
        except (ProcessLookupError, ValueError):
            return False
        except PermissionError:
            return True
        return True


def _kernel_manager_class(env: Mapping[str, str], cwd: Path):
    """A kernel manager that starts the kernel with ``env`` in ``cwd`` (not this process's environment and folder:
    papermill's own ``cwd`` changes the whole process's folder, which notebooks run side by side must not do).

    On POSIX, kernels talk over IPC sockets (local files), not TCP: nothing listens on a port, and the kernel's
    "running over TCP without encryption" warning does not fill every run's log."""
    from jupyter_client import AsyncKernelManager

    class RunKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any):
            if os.name == "posix":
                kwargs.setdefault("transport", "ipc")
                # an absolute prefix for the socket files: the kernel runs in another folder than this process
                kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(), f"helpers-kernel-{os.getpid()}-{id(self):x}"))
            super().__init__(**kwargs)

        async def _async_pre_start_kernel(self, **kw: Any):
            kw["env"] = dict(env)
            kw["cwd"] = str(cwd)
            return await super()._async_pre_start_kernel(**kw)

    return RunKernelManager


def run_label(parameters: Mapping[str, Any] | None) -> str:
    """How a run with these ``-p`` overrides is labelled: ``""`` (the profile's own run), ``"seed<N>"`` (only the
    seed changed: another draw of every trained model, for the seeds stability table of :mod:`helpers.claims`),
    ``"byod"`` (your data through ``byod_path``), or ``"custom"`` (any other override).  Labelled runs never become
    the profile's ``latest`` reference."""
    if not parameters:
        return ""
    if set(parameters) == {"seed"} and isinstance(parameters["seed"], int) and not isinstance(parameters["seed"], bool):
        return f"seed{parameters['seed']}"
    return "byod" if (parameters or {}).get("byod_path") else "custom"


def _run_folder(profile: str, output_dir: Path | None, label: str, resume: bool) -> Path:
    """Where a run writes: ``output_dir`` if given; with ``resume``, the profile's last run folder; else a new one
    (:func:`helpers.paths.new_run_dir`)."""
    from helpers.paths import new_run_dir, run_dirs

    if output_dir is not None:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        return Path(output_dir)
    if resume:  # the last run folder of the same kind (the profile's own runs, or those with overrides)
        earlier = [d for d in run_dirs(profile) if run_folder_label(d) == label]
        if earlier:
            return earlier[-1]
    return new_run_dir(profile, label)


def run_folder_label(folder: Path) -> str:
    """The label a run folder's ``run_status.json`` records (``""``: the profile's own run)."""
    try:
        status = json.loads((folder / "run_status.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return ""
    return str((status.get("_run") or {}).get("label") or "")


def run_notebooks(
    *,
    profile: str = "default",
    only: Iterable[str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    output_dir: Path | None = None,
    resume: bool = False,
    kernel_name: str | None = None,
    timeout: float | None = None,
    echo: bool = True,
    progress: bool | None = None,
    workers: int | None = 1,
    scheduler: str | None = None,
) -> list[NotebookRun]:
    """Run every notebook (or ``only`` those named) under ``profile``; go on past failures.

    ``parameters`` are added to every selected notebook's profile parameters (useful with ``only``).
    Every notebook's parameters are validated before any runs.  The run writes its own folder,
    ``<runs>/<profile>/<run id>/`` (``output_dir`` if given; see :mod:`helpers.paths`), labelled ``-custom`` or
    ``-byod`` when ``parameters`` are given (:func:`run_label`); a complete unlabelled run becomes the profile's
    ``latest``.  With ``resume``, the run continues the profile's last run folder, and notebooks that finished
    ``ok`` there with the same source, parameters, ``helpers`` source and data files (:func:`inputs_fingerprint`)
    are skipped.  The status file is rewritten after each notebook, so an interrupted batch loses nothing finished.

    ``workers=1`` (the default here; the command line's default is a local cluster): one notebook after another in
    this process, their units too.  ``workers=None`` or ``> 1``: a local Dask cluster of that many processes
    (None: one per core); ``scheduler``: an existing cluster.  On a cluster, notebooks whose needs
    (:mod:`helpers.run.graph`) have finished run side by side and their units share the workers (:mod:`helpers.parallel`).
    """
    from helpers import parallel
    from helpers.run.graph import dependency_order

    if workers is not None and not scheduler:
        workers = parallel.check_workers(workers)
    profile_params = load_profile(profile)
    notebooks = select_notebooks(list_notebooks(), only)
    unknown = sorted(set(profile_params) - {p.stem for p in list_notebooks()})
    if unknown:
        raise ProfileError(f"profile file(s) for notebook(s) that do not exist: {', '.join(unknown)}")
    graph = dependency_order(notebooks, [p.stem for p in list_notebooks()])
    # every selected notebook's parameters are checked before any runs: a typo fails in seconds, not after hours
    for nb in notebooks:
        _check_parameters(nb, {**profile_params.get(nb.stem, {}), **dict(parameters or {})})
    for var in _PATH_VARS:  # local workers inherit this environment; their kernels run in another folder
        if os.environ.get(var):
            os.environ[var] = str(Path(os.environ[var]).expanduser().resolve())
    # the executor starts (or its address fails) before anything is written to the run folder
    with parallel.start(None if scheduler else workers, scheduler) as ex:
        label = run_label(parameters)
        folder = _run_folder(profile, output_dir, label, resume)
        status_path = folder / "run_status.json"
        from helpers.run.calibration import write_calibration

        write_calibration(folder)  # a few seconds of timed work: the run's times scale to other machines by it
        # a resumed run keeps the status of its folder's earlier notebooks; --resume uses it to skip work
        status: dict[str, dict[str, Any]] = {}
        if status_path.exists():
            try:
                status = json.loads(status_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                status = {}
        previous = status if resume else {}
        fingerprint = inputs_fingerprint() if resume else {}
        with RunFolderLock(status_path.parent):
            todo, runs = [], {}
            for nb in notebooks:
                params = {**profile_params.get(nb.stem, {}), **dict(parameters or {})}
                skipped = _finished_before(nb, params, previous.get(nb.stem), profile, fingerprint) if resume else None
                if skipped is not None:
                    runs[nb.stem] = skipped
                    if echo:
                        print(f"[{profile}] {nb.stem}: skipped (finished before with the same inputs)", flush=True)
                else:
                    todo.append((nb, params))
            settings = dict(profile=profile, output_dir=folder, kernel_name=kernel_name, timeout=timeout,
                            progress=progress)  # fmt: skip
            from helpers.run.provenance import run_provenance

            meta = {"run_id": folder.name, "label": label, "parameters": dict(parameters or {}), **run_provenance()}
            runs |= _run_on(ex, todo, graph, settings, status_path, meta=meta, echo=echo)
        out = [runs[nb.stem] for nb in notebooks]
        if output_dir is None and not label and all(r.status in ("ok", "skipped") for r in out):
            from helpers.paths import mark_latest

            mark_latest(folder)  # the profile's reference run: complete and with its own parameters
        return out


def _finished_before(nb: Path, params: dict, prev: dict | None, profile: str, fingerprint: dict) -> NotebookRun | None:
    """The previous run of ``nb`` as ``skipped`` when it finished ok with the same inputs, else None."""
    params_with_profile = dict(params)
    if "profile" in declared_parameters(nb):
        params_with_profile.setdefault("profile", profile)
    if (
        prev
        and prev.get("status") == "ok"
        and prev.get("source_sha256") == _sha256(nb.read_bytes())
        and prev.get("params_sha256") == _sha256(json.dumps(params_with_profile, sort_keys=True, default=str).encode())
        and all(prev.get(k) == v for k, v in fingerprint.items())  # same helpers code and data files
    ):
        known = set(NotebookRun.__dataclass_fields__)
        return NotebookRun(**{**{k: v for k, v in prev.items() if k in known}, "status": "skipped"})
    return None


def _run_on(ex, todo, graph, settings, status_path, *, meta, echo) -> dict[str, NotebookRun]:
    """Run ``todo`` (notebook, parameters) on the executor ``ex`` by ``graph``; the status file is written here
    only (one writer), after each notebook and for the run as a whole (key ``_run``)."""
    from helpers.parallel import ENV_SCHEDULER, ENV_THREADS, ENV_WORKERS

    profile = settings["profile"]
    runs: dict[str, NotebookRun] = {}
    info = {**ex.describe(), "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "notebooks": [nb.stem for nb, _ in todo], "load_avg_samples": [], **meta}  # fmt: skip
    t_start, cpu_start = time.perf_counter(), cpu_total()

    def note_load() -> None:
        if hasattr(os, "getloadavg"):
            info["load_avg_samples"].append(round(os.getloadavg()[0], 2))

    note_load()
    _write_status(status_path, "_run", {**info, "status": "running"})
    if ex.client is None:
        executor_env = {ENV_WORKERS: "1", ENV_SCHEDULER: ""}
    else:
        executor_env = {ENV_SCHEDULER: ex.address, ENV_THREADS: str(ex.threads), ENV_WORKERS: ""}
    params_of = {nb.stem: params for nb, params in todo}

    def finished(nb: Path, run: NotebookRun) -> None:
        runs[nb.stem] = run
        _write_status(status_path, nb.stem, asdict(run))
        note_load()
        if echo:
            where = f" (cell {run.failed_cell})" if run.failed_cell is not None else ""
            print(f"[{profile}] {nb.stem}: {run.status}{where} in {run.wall_s:.1f} s {run.error}", flush=True)

    try:
        if ex.client is None:  # in-process: one notebook after another, in dependency order
            for nb in _topological([nb for nb, _ in todo], graph):
                if echo:
                    print(f"[{profile}] running {nb.name} ...", flush=True)
                finished(nb, run_notebook(nb, parameters=params_of[nb.stem], executor_env=executor_env, **settings))
        else:
            _run_side_by_side(ex, todo, graph, settings, executor_env, params_of, finished, note_load, echo=echo)
    finally:
        info["wall_s"] = round(time.perf_counter() - t_start, 1)
        cpu_end = cpu_total()  # this machine's processes: a remote cluster's workers are not counted
        info["cpu_s"] = round(cpu_end - cpu_start, 1) if cpu_end is not None and cpu_start is not None else None
        info["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        samples = info["load_avg_samples"]
        info["load_avg_mean"] = round(sum(samples) / len(samples), 2) if samples else None
        failed = [s for s, r in runs.items() if r.status == "failed"]
        info["status"] = "failed" if failed else ("ok" if len(runs) == len(todo) else "interrupted")
        _write_status(status_path, "_run", info)
    return runs


def _run_side_by_side(ex, todo, graph, settings, executor_env, params_of, finished, note_load, *, echo) -> None:
    """The notebooks of ``todo`` side by side by ``graph``, their units on the cluster of ``ex``.

    Each kernel is a process that papermill starts and a thread of this process waits on (the threads only wait;
    the work runs in the kernels and on the workers).  The kernels do not run on the workers: a notebook task that
    seceded from a worker's pool stays in the scheduler's view of that worker, which then drew every unit onto the
    other worker while it sat idle (measured: one of two cores idle for minutes).  On a cluster of other machines
    the kernels run here and their units there.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    from helpers.parallel import ENV_PRIORITY
    from helpers.run.graph import critical_minutes, run_graph

    chain = critical_minutes([nb for nb, _ in todo], graph)

    def submit(nb: Path):
        # the units of the notebook with the longest chain of work ahead (03 -> 06) go first on the cluster;
        # 1000 per minute keeps the notebooks apart from the units' own priorities (tens to hundreds)
        env = {**executor_env, ENV_PRIORITY: str(round(1000 * chain[nb.stem]))}
        return _in_daemon_thread(run_notebook, nb, parameters=params_of[nb.stem], executor_env=env, **settings)

    def wait_one(futures):
        done = wait(futures, timeout=HEARTBEAT_S, return_when=FIRST_COMPLETED).done
        if not done:
            note_load()
            return None  # nothing finished for a while: run_graph says what is still running
        return next(iter(done))

    say = (lambda m: print(f"[{settings['profile']}] {m}", flush=True)) if echo else None
    # one notebook more than worker threads: a kernel waiting on its units leaves its core to the others
    run_graph([nb for nb, _ in todo], graph, submit, wait_one, lambda nb, fut: finished(nb, fut.result()),
              slots=ex.slots + 1, echo=say)  # fmt: skip


def _in_daemon_thread(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a daemon thread, as a :class:`concurrent.futures.Future`.  Daemon threads, so
    that Ctrl-C ends the run at once: the runner exits, and each kernel, whose parent it is, shuts itself down."""
    import threading
    from concurrent.futures import Future

    fut: Future = Future()

    def run() -> None:
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the thread that waits on the future
            fut.set_exception(exc)

    threading.Thread(target=run, daemon=True, name=f"notebook-{getattr(args[0], 'stem', '')}").start()
    return fut


def _topological(notebooks: list[Path], graph: dict[str, list[str]]) -> list[Path]:
    """``notebooks`` reordered so that each comes after what it needs (else in the given order)."""
    out: list[Path] = []
    while len(out) < len(notebooks):
        done = {p.stem for p in out}
        out.append(next(nb for nb in notebooks if nb not in out and set(graph.get(nb.stem, [])) <= done))
    return out


def _write_status(path: Path, notebook: str, entry: dict[str, Any]) -> None:
    """Merge one notebook's entry into the status file (re-read first: another batch may have written since)."""
    current: dict[str, Any] = {}
    if path.exists():
        try:
            current = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            current = {}
    current[notebook] = entry
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(current, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def format_runs(runs: list[NotebookRun]) -> str:
    """A plain-text table of notebook, status, wall time, failed cell and error."""
    lines = [f"{'notebook':<32} {'status':<8} {'wall_s':>9}  failed cell / error"]
    for r in runs:
        cell = f"cell {r.failed_cell}: " if r.failed_cell is not None else ""
        lines.append(f"{r.notebook:<32} {r.status:<8} {r.wall_s:>9.1f}  {cell}{r.error}".rstrip())
    total = sum(r.wall_s for r in runs if r.status != "skipped")
    n_failed = sum(r.status == "failed" for r in runs)
    lines.append(f"{len(runs)} notebook(s), {n_failed} failed, {total:.1f} s of execution")
    return "\n".join(lines)
