"""The runner on a Dask cluster: notebooks side by side in dependency order, unit failures, bad options, and an
external scheduler with workers started separately (tiny notebooks built by the tests)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import write_notebook

from helpers.paths import run_dirs
from helpers.run import runner

STAMP = "import json, os, time\n"


def _stamped(path: Path, seconds: float, needs: list[str] | None = None) -> Path:
    """A notebook that records when it ran (start, end) into a file of the run's folder, sleeping in between."""
    write_notebook(
        path,
        "n = 1",
        [
            STAMP + f"t0 = time.time()\ntime.sleep({seconds})",
            "from helpers.run.results import record\nrecord('n', n)\n"
            "out = os.path.join(os.environ['HELPERS_RUNS'], 'stamps')\nos.makedirs(out, exist_ok=True)\n"
            f"json.dump([t0, time.time()], open(os.path.join(out, '{path.stem}.json'), 'w'))",
        ],
    )
    if needs:
        nb = nbformat.read(str(path), as_version=4)
        nb.metadata["helpers"] = {"needs": needs}
        nbformat.write(nb, str(path))
    return path


@pytest.fixture()
def graph_dir(tmp_path, monkeypatch):
    d = tmp_path / "notebooks"
    (d / "profiles").mkdir(parents=True)
    _stamped(d / "01_slow.ipynb", 6)
    _stamped(d / "02_quick.ipynb", 2)
    _stamped(d / "03_after_01.ipynb", 0, needs=["01_slow"])
    write_notebook(
        d / "04_units.ipynb",
        "bad = 3",
        [
            "from helpers.parallel import map_units\n\ndef check(x):\n    if x == bad:\n"
            "        raise ValueError('unit input rejected')\n    return x",
            "out = map_units(check, [1, 2, 3, 4], names=['a', 'b', 'c', 'd'], progress=False)",
        ],
    )
    monkeypatch.setenv("HELPERS_NOTEBOOKS", str(d))
    return d


def _stamps() -> dict[str, list[float]]:
    folder = runner.runs_dir() / "stamps"
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def test_cluster_runs_independent_notebooks_side_by_side_and_dependents_after(graph_dir):
    runs = runner.run_notebooks(profile="smoke", only=["01", "02", "03"], workers=2, echo=False)
    assert [r.status for r in runs] == ["ok", "ok", "ok"]
    s = _stamps()
    assert s["02_quick"][0] < s["01_slow"][1], "02 waited for 01 although it does not need it"
    assert s["03_after_01"][0] >= s["01_slow"][1], "03 started before 01, which it needs, had finished"
    status = json.loads((Path(runs[0].output).parent / "run_status.json").read_text())
    whole = status["_run"]
    assert whole["executor"] == "local cluster" and whole["workers"] == 2 and whole["threads_per_worker"] == [1]
    assert whole["status"] == "ok" and whole["load_avg_samples"]


def test_a_failing_unit_names_notebook_cell_and_unit_and_the_others_finish(graph_dir):
    runs = {r.notebook: r for r in runner.run_notebooks(profile="smoke", only=["02", "04"], workers=2, echo=False)}
    assert runs["02_quick"].status == "ok"
    bad = runs["04_units"]
    assert bad.status == "failed" and bad.failed_cell == 3
    assert "unit 'c' of 04_units failed: ValueError: unit input rejected" in bad.error


def test_dependency_cycle_and_unknown_need_are_refused(graph_dir):
    from helpers.errors import ProfileError

    _stamped(graph_dir / "05_a.ipynb", 0, needs=["06_b"])
    _stamped(graph_dir / "06_b.ipynb", 0, needs=["05_a"])
    with pytest.raises(ProfileError, match="cycle among 05_a, 06_b"):
        runner.run_notebooks(profile="smoke", only=["05", "06"], echo=False)
    _stamped(graph_dir / "07_c.ipynb", 0, needs=["99_missing"])
    with pytest.raises(ProfileError, match="unknown notebook"):
        runner.run_notebooks(profile="smoke", only=["07"], echo=False)


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_cli_refuses_bad_worker_counts_before_writing_anything(graph_dir, bad):
    proc = subprocess.run([sys.executable, "-m", "helpers", "run", "--profile", "smoke", "--workers", bad],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "--workers" in proc.stderr and "whole number >= 1" in proc.stderr
    assert not (runner.runs_dir() / "smoke").exists()


def test_cli_unreachable_scheduler_is_a_clear_error(graph_dir):
    proc = subprocess.run(
        [sys.executable, "-m", "helpers", "run", "--profile", "smoke", "--scheduler", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "--scheduler: no Dask scheduler answered at tcp://127.0.0.1:9" in proc.stderr
    assert not (runner.runs_dir() / "smoke").exists()


def _start(cmd: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def _scheduler(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    sched_file = tmp_path / "scheduler.json"
    dask = str(Path(sys.executable).with_name("dask"))
    proc = _start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(sched_file)])  # fmt: skip
    for _ in range(300):
        if sched_file.exists() and sched_file.read_text().strip():
            break
        time.sleep(0.1)
    return proc, sched_file


def test_separately_started_scheduler_and_workers_run_the_notebooks(graph_dir, tmp_path):
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1, then `helpers run --scheduler ADDRESS`."""
    sched, sched_file = _scheduler(tmp_path)
    dask = str(Path(sys.executable).with_name("dask"))
    workers = [_start([dask, "worker", "--scheduler-file", str(sched_file), "--nthreads", "1", "--no-dashboard",
                       "--host", "127.0.0.1"]) for _ in range(2)]  # fmt: skip
    try:
        address = json.loads(sched_file.read_text())["address"]
        proc = subprocess.run(
            [sys.executable, "-m", "helpers", "run", "--profile", "smoke", "--only", "01", "02", "03",
             "--scheduler", address, "--no-progress"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        status = json.loads((run_dirs("smoke")[-1] / "run_status.json").read_text())
        assert status["_run"]["executor"] == "cluster" and status["_run"]["scheduler"] == address
        assert status["_run"]["workers"] == 2
        assert {status[k]["status"] for k in ("01_slow", "02_quick", "03_after_01")} == {"ok"}
    finally:
        for p in [*workers, sched]:
            p.terminate()
        for p in [*workers, sched]:
            p.wait(timeout=30)


def test_a_cluster_whose_workers_lack_the_package_is_refused(graph_dir, tmp_path):
    """A worker whose Python cannot import helpers (shadowed by a broken package first on its path)."""
    shadow = tmp_path / "shadow" / "helpers"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('helpers is not installed on this worker')\n")
    sched, sched_file = _scheduler(tmp_path)
    dask = str(Path(sys.executable).with_name("dask"))
    import os

    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    worker = _start([dask, "worker", "--scheduler-file", str(sched_file), "--nthreads", "1", "--no-dashboard",
                     "--host", "127.0.0.1", "--no-nanny"], env=env, cwd=str(tmp_path))  # fmt: skip
    try:
        address = json.loads(sched_file.read_text())["address"]
        proc = subprocess.run(
            [sys.executable, "-m", "helpers", "run", "--profile", "smoke", "--only", "02", "--scheduler", address],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"--scheduler: the workers of {address} cannot run this project's code" in proc.stderr
        assert not (runner.runs_dir() / "smoke").exists()
    finally:
        for p in (worker, sched):
            p.terminate()
            p.wait(timeout=30)


def test_the_projects_graph_runs_06_and_07_after_what_they_read():
    """06 reads 01's SCAN pipeline, 03's models and 05's setups from the cache, 07 reads 05's CIFAR outputs: each is
    declared to need them, and both the in-process order and the cluster's graph put it after them."""
    from helpers.run.graph import dependency_order

    notebooks = runner.list_notebooks()
    graph = dependency_order(notebooks, [p.stem for p in notebooks])
    assert set(graph["06_benchmark"]) == {"01_discriminator_bounds", "03_self_training", "05_mde"}
    assert set(graph["07_monitoring"]) == {"05_mde"}
    assert set(graph["08_model_ranking"]) == {"02_selective_answering", "05_mde"}
    assert all(not needs for stem, needs in graph.items() if stem not in ("06_benchmark", "07_monitoring",
                                                                          "08_model_ranking"))  # fmt: skip
    order = [p.stem for p in runner._topological(list(reversed(notebooks)), graph)]
    for stem in ("06_benchmark", "07_monitoring", "08_model_ranking"):
        assert order.index(stem) > max(order.index(n) for n in graph[stem])


def test_a_killed_worker_fails_the_notebook_clearly_and_the_rerun_resumes_from_the_cache(graph_dir, tmp_path):
    """A unit that kills its worker fails its notebook with a message that says so; the re-run (--resume) reads
    the units that had finished back from the cache and completes."""
    log, marker = tmp_path / "computed.log", tmp_path / "marker"
    write_notebook(
        graph_dir / "05_dies.ipynb",
        f"log = {str(log)!r}\nmarker = {str(marker)!r}",
        [
            "import os\nimport numpy as np\nfrom helpers.cache import cached_arrays\nfrom helpers.parallel import map_units\n\n"
            "def square(x):\n"
            "    def compute():\n"
            "        with open(log, 'a') as f:\n"
            "            f.write(f'{x}\\n')\n"
            "        return {'v': np.array(x * x)}\n"
            "    return int(cached_arrays('squares', {'x': x}, compute)['v'])\n\n"
            "def killer(_):\n"
            "    if not os.path.exists(marker):\n"
            "        open(marker, 'w').write('died once')\n"
            "        os._exit(1)\n"
            "    return 0",
            "squares = map_units(square, [2, 3, 4], progress=False)",
            "done = map_units(killer, [0, 1], names=['killer', 'twin'], progress=False)",
        ],
    )
    first = runner.run_notebooks(profile="smoke", only=["05"], workers=2, echo=False)[0]
    assert first.status == "failed" and first.failed_cell == 4, first.error
    assert "its worker died" in first.error and "05_dies" in first.error
    assert sorted(log.read_text().split()) == ["2", "3", "4"]
    again = runner.run_notebooks(profile="smoke", only=["05"], workers=2, resume=True, echo=False)[0]
    assert again.status == "ok", again.error
    assert sorted(log.read_text().split()) == ["2", "3", "4"], "finished units were computed again"


def test_units_of_notebooks_run_on_every_worker(graph_dir):
    """Two notebooks side by side, each with four 2-second units on a two-worker cluster: each notebook's units run
    on both workers, and units run at the same time (behaviour, not seconds: a loaded machine only stretches them).
    06 submits its units 5 s after its kernel starts, so that 05's four are queued first: with equal priorities,
    units submitted at the same instant may each keep to one worker (both workers busy, each notebook on one)."""
    for stem, delay in (("05_sleepy", 0), ("06_sleepy", 5)):
        write_notebook(
            graph_dir / f"{stem}.ipynb",
            "n = 4",
            [
                f"import json, os, time\nfrom helpers.parallel import map_units\ntime.sleep({delay})\n\n"
                "def nap(_):\n    t0 = time.time()\n    time.sleep(2.0)\n    return os.getpid(), t0, time.time()",
                "units = map_units(nap, list(range(n)), progress=False)\n"
                "out = os.path.join(os.environ['HELPERS_RUNS'], 'stamps')\nos.makedirs(out, exist_ok=True)\n"
                f"json.dump(units, open(os.path.join(out, '{stem}.json'), 'w'))",
            ],
        )
    runs = runner.run_notebooks(profile="smoke", only=["05", "06"], workers=2, echo=False)
    assert [r.status for r in runs] == ["ok", "ok"], [r.error for r in runs]
    s = _stamps()
    assert all(len({pid for pid, _, _ in units}) == 2 for units in s.values()), s  # both workers, each notebook
    spans = sorted((start, end) for units in s.values() for _, start, end in units)
    overlapping = [a for a, b in zip(spans, spans[1:]) if b[0] < a[1]]
    assert overlapping, f"no two units ran at the same time: {spans}"


def test_ctrl_c_ends_a_cluster_run_at_once_and_records_it(graph_dir):
    """Ctrl-C while a notebook's kernel runs on the cluster: the runner exits within seconds (it does not wait
    for the notebook), says how to resume, and the run's status says interrupted."""
    import signal

    proc, status = _start_sleeping_run(graph_dir, "--workers", "2", foreground=True)
    time.sleep(8.0)  # the kernel is up and sleeping
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)  # the notebook sleeps 120 s: the runner did not wait for it
    assert proc.returncode == 130, out + err
    assert "interrupted" in err and "--resume" in err
    assert json.loads(status.read_text())["_run"]["status"] == "interrupted"


def _start_sleeping_run(graph_dir, *extra: str, only: str = "05", foreground: bool = False
                        ) -> tuple[subprocess.Popen, Path]:  # fmt: skip
    """``helpers run`` of ``only`` (05: a notebook that sleeps 120 s); returns the process and its status file once
    the sleeping notebook has started.  ``foreground``: SIGINT restored to its default in the child, as in a
    terminal's foreground job (a test session started in the background inherits SIGINT ignored, and a Python
    started with SIGINT ignored never raises KeyboardInterrupt)."""
    import os
    import signal

    write_notebook(graph_dir / "05_long.ipynb", "n = 1", ["import time\ntime.sleep(120)"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "helpers", "run", "--profile", "smoke", "--only", only, "--no-progress", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) if foreground else None,
    )  # fmt: skip
    for _ in range(600):
        folders = run_dirs("smoke")
        status = folders[-1] / "run_status.json" if folders else None
        if status is not None and status.exists() and "05_long" in status.read_text():
            break
        time.sleep(0.1)
    return proc, status


def test_sigterm_ends_a_run_as_interrupted(graph_dir):
    """SIGTERM (a batch scheduler's time limit, ``timeout``, ``kill``) is taken like Ctrl-C: the runner exits at
    once with 143, says how to resume, and the run's status says interrupted (it used to stay "running")."""
    import signal

    proc, status = _start_sleeping_run(graph_dir, "--workers", "2")
    time.sleep(8.0)  # the kernel is up and sleeping
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)  # the notebook sleeps 120 s: the runner did not wait for it
    assert proc.returncode == 143, out + err
    assert "interrupted while running 05_long (stopped by SIGTERM)" in err and "--resume" in err
    assert json.loads(status.read_text())["_run"]["status"] == "interrupted"


def test_time_limit_ends_a_run_as_interrupted_and_keeps_what_finished(graph_dir):
    """``--time-limit``: the notebook that finished in time is recorded ok, the one cut short is not recorded as
    finished, and the run is interrupted, with the reason on stderr."""
    write_notebook(graph_dir / "01_quick.ipynb", "n = 1", ["x = 1"])
    proc, status = _start_sleeping_run(graph_dir, "--workers", "1", "--time-limit", "30", only="01,05")
    out, err = proc.communicate(timeout=120)  # 30 s, not the 120 s the notebook sleeps
    assert proc.returncode == 143, out + err
    assert "(time limit of 30 s reached)" in err
    recorded = json.loads(status.read_text())
    assert recorded["01_quick"]["status"] == "ok" and "05_long" not in recorded
    assert recorded["_run"]["status"] == "interrupted"


def test_the_longest_chain_of_work_starts_first_and_its_units_go_first(tmp_path):
    """critical_minutes: a notebook's own minutes plus the longest chain waiting for it; run_graph starts the
    longest chain first (03 -> 06 in the project's default), ties in the given order."""
    from helpers.run.graph import critical_minutes, notebook_minutes, run_graph

    def nb(stem: str, minutes: float | None, needs: list[str] | None = None) -> Path:
        path = _stamped(tmp_path / f"{stem}.ipynb", 0, needs=needs)
        if minutes is not None:
            book = nbformat.read(str(path), as_version=4)
            book.metadata["helpers"] = {**book.metadata.get("helpers", {}), "minutes": minutes}
            nbformat.write(book, str(path))
        return path

    books = [nb("a", 20), nb("b", 25), nb("c", None), nb("d", 5, needs=["a", "b"])]
    graph = {"a": [], "b": [], "c": [], "d": ["a", "b"]}
    assert critical_minutes(books, graph) == {"a": 25.0, "b": 30.0, "c": 1.0, "d": 5.0}
    started: list[str] = []
    run_graph(books, graph, lambda p: started.append(p.stem) or p, lambda hs: hs[0], lambda p, h: None, slots=1)
    assert started == ["b", "a", "d", "c"]  # d (5 min) became ready before c (1 min) started
    from helpers.errors import ProfileError

    with pytest.raises(ProfileError, match="minutes must be a number >= 0"):
        notebook_minutes(nb("e", -3))
    # the project's notebooks: 03 -> 06 is the longest chain, so 03 starts first
    project = runner.list_notebooks()
    from helpers.run.graph import dependency_order

    chain = critical_minutes(project, dependency_order(project, [p.stem for p in project]))
    assert max(chain, key=chain.get) == "03_self_training"
