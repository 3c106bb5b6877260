"""Representative defects, planted one at a time into a notebook's kernel, for showing that the smoke bands
still catch bugs (``tests/test_notebooks.py::test_a_planted_defect_fails_the_smoke_comparison`` and
``scripts/planted_defects.py``, which writes ``figures/study_planted_defects.md``).

A plant is Python run at the kernel's start as ``sitecustomize`` (a folder put first on ``PYTHONPATH``): it wraps
or replaces one library function before the notebook imports it, so the library itself stays untouched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from helpers.run import runner

__all__ = ["PLANTS", "SMOKE_MISSES", "plant_folder", "run_planted", "unit_tests_fail"]

#: name -> (notebook, what the defect is, the code that plants it at the kernel's start)
PLANTS = {
    "metric_sign_flipped": (
        "00_example",
        "the absolute error |estimate - true| loses its absolute value",
        """
import helpers.experiments.p0_example as pkg, helpers.experiments.p0_example.scoring as mod
_original = mod.estimate_sets
def estimate_sets(*args, **kwargs):
    table = _original(*args, **kwargs)
    table["abs_error"] = table["estimate"] - table["true"]
    return table
pkg.estimate_sets = mod.estimate_sets = estimate_sets
""",
    ),
    "estimator_fed_shuffled_labels": (
        "00_example",
        "ATC is fitted on the reference with its labels permuted",
        """
import numpy as np
from helpers.estimators import atc
_original = atc.ATC.fit
def fit(self, **kwargs):
    if kwargs.get("labels") is not None:
        kwargs["labels"] = np.random.default_rng(0).permutation(np.asarray(kwargs["labels"]))
    return _original(self, **kwargs)
atc.ATC.fit = fit
""",
    ),
    "record_dropped": (
        "00_example",
        "the clean target's accuracy is never recorded",
        """
import helpers.run.results as results
_original = results.record
def record(name, *args, **kwargs):
    if name != "clean_target_accuracy":
        return _original(name, *args, **kwargs)
results.record = record
""",
    ),
    "threshold_off_by_one": (
        "00_example",
        "ATC's threshold is the next distinct score after the minimiser",
        """
import numpy as np
from helpers.estimators import atc
def _sweep_threshold(scores, correct):
    order = np.argsort(scores, kind="stable")
    s, c, n = scores[order], correct[order].astype(np.int64), scores.shape[0]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    cum_correct = np.r_[0, np.cumsum(c)]
    cum_wrong = np.arange(n + 1) - cum_correct
    below = np.r_[starts, n]
    j = int(np.argmin(np.abs((cum_wrong[n] - cum_wrong[below]) - cum_correct[below]))) + 1
    return float(s[starts[j]]) if j < starts.shape[0] else float("inf")
atc._sweep_threshold = _sweep_threshold
""",
    ),
    "window_off_by_one": (
        "07_monitoring",
        "each chunk of the monitored stream leaves out its last example",
        """
import helpers.monitoring as monitoring
_original = monitoring._size_chunks
def _size_chunks(n, chunk_size):
    return [(k, lo, hi - 1, slice(sl.start, sl.stop - 1)) for k, lo, hi, sl in _original(n, chunk_size)]
monitoring._size_chunks = _size_chunks
""",
    ),
    "ranking_read_upside_down": (
        "08_model_ranking",
        "every ranking is scored upside down (rank 1 = the lowest ranking value)",
        """
import helpers.estimators.ranking as ranking
_original = ranking.ranking_agreement
def ranking_agreement(value, true_accuracy):
    return _original(-value, true_accuracy)
ranking.ranking_agreement = ranking_agreement
""",
    ),
}

#: defects too small for the smoke bands, with the hand-computed unit test that catches each: an off-by-one in
#: ATC's threshold moves the estimate by about one target example in a few hundred, inside a trained value's band
SMOKE_MISSES = {"threshold_off_by_one": "tests/estimators/test_atc.py"}


def plant_folder(plant: str, work: Path) -> Path:
    """A folder holding the plant as ``sitecustomize.py``, to put first on ``PYTHONPATH``."""
    (work / "plant").mkdir(parents=True, exist_ok=True)
    (work / "plant" / "sitecustomize.py").write_text(PLANTS[plant][2], encoding="utf-8")
    return work / "plant"


def unit_tests_fail(plant: str, test_file: str, work: Path) -> bool:
    """Whether ``test_file`` fails with the defect planted (pytest in a fresh interpreter)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(plant_folder(plant, work)),
                                                                     os.environ.get("PYTHONPATH")]))}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
                           str(root / test_file)], env=env, cwd=root, capture_output=True, text=True, timeout=600)  # fmt: skip
    return done.returncode == 1


def run_planted(plant: str, *, cache: Path, data: Path, work: Path):
    """Notebook ``PLANTS[plant][0]``'s smoke profile with the defect planted, on a hard-linked copy of the warm
    ``cache`` (cache writes replace files, never edit them, so the original stays as it was), in one process;
    ``(NotebookRun, its results folder)``."""
    notebook = PLANTS[plant][0]
    plant_folder(plant, work)
    shutil.copytree(cache, work / "cache", copy_function=os.link)
    env = {
        "HELPERS_CACHE": work / "cache",
        "HELPERS_DATA": data,
        "HELPERS_RUNS": work / "runs",
        "HELPERS_FIGURES": work / "figures",
        "PYTHONPATH": os.pathsep.join(p for p in (str(work / "plant"), os.environ.get("PYTHONPATH")) if p),
    }
    before = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        run = runner.run_notebooks(
            profile="smoke", only=[notebook], workers=1, output_dir=work / "out", echo=False
        )[0]
    finally:
        for k, v in before.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return run, work / "out" / "results"
