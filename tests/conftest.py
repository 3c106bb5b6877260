"""Shared fixtures: isolate every test's cache, runs and figures folders from the repository's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The suite runs on the CPU by design, on a GPU machine too: "auto" devices mean the CPU here and in every notebook
# kernel the tests start (they inherit this environment), so the pinned smoke values and the bit-exact resume and
# determinism checks hold wherever `make test` runs.  The GPU paths have their own tests (tests/test_device_paths.py:
# a CPU-side device spy, and the real CUDA device where there is one) and `make gpu-check`.
os.environ["HELPERS_DEVICE"] = "cpu"


def _share_the_cores_between_test_processes() -> None:
    """Under pytest-xdist (``make test`` runs two test processes), each process, and the notebook kernels and other
    subprocesses it starts, computes on its share of the cores: ``cpu_count // processes`` torch and BLAS threads
    (1 on a 2-core machine).  At their defaults, two processes would each run two torch threads on two cores: the
    tiny models' many small ops then wait on each other's threads (notebook 06's self-training grid test: 9 s with
    one thread per process, 83 s at the defaults).
    The thread count can move float reductions in the last bits only: the pinned smoke values have tolerances,
    and the bit-exact checks compare two computations made under the same settings.  Outside xdist (one test
    process) every default is kept."""
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if processes < 2:
        return
    threads = max(1, (os.cpu_count() or 1) // processes)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))  # the kernels and subprocesses this process starts
    import torch
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    torch.set_num_threads(threads)
    threadpool_limits(threads)  # numpy's and scipy's BLAS, already loaded in this process


_share_the_cores_between_test_processes()


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("outputs")
    for var, sub in (("HELPERS_CACHE", "cache"), ("HELPERS_RUNS", "runs"), ("HELPERS_FIGURES", "figures")):
        monkeypatch.setenv(var, str(base / sub))
    monkeypatch.delenv("HELPERS_RESULTS", raising=False)
    monkeypatch.delenv("HELPERS_NOTEBOOK", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield


@pytest.fixture
def one_torch_thread():
    """Run a test on one torch thread (restored afterwards): the tiny models' many small ops are faster on one
    thread than on two, and far faster when the machine's two cores are shared."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def shared_data_dir() -> Path | None:
    """The real data directory if one is configured and present (CI sets HELPERS_DATA)."""
    value = os.environ.get("HELPERS_DATA")
    if value and Path(value).is_dir():
        return Path(value)
    candidate = REPO.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


def write_notebook(path, params_src, body_src):
    """A tiny notebook: a cell tagged ``parameters`` with ``params_src``, then one code cell per ``body_src``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    p = nbformat.v4.new_code_cell(params_src)
    p.metadata["tags"] = ["parameters"]
    nb.cells = [p] + [nbformat.v4.new_code_cell(src) for src in body_src]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path
