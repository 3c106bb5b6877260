"""``make gpu-check``: what a lent GPU machine's few minutes should answer, in one prepared script.

1. **Smoke on the GPU**: every notebook's ``smoke`` profile through the runner (``python -m helpers run``), models on
   CUDA by themselves (:func:`helpers.training.device.get_device` picks CUDA when it is there).
2. **One full-size unit per notebook**: the notebook's ``full`` profile narrowed by :data:`FULL_UNITS` to one unit of
   work (one task, pair, backbone or model at the paper's size, with fewer steps), so each finishes in about a minute.

Each notebook gets a share of the time budget (``--budget``, default 480 s) as its cell timeout; a notebook whose
data or packages are missing is recorded as skipped with the reason.  The record (date, GPU, torch, every notebook's
status, seconds, peak GPU memory from ``nvidia-smi``, 1-minute load average) is written to
``docs/reproductions/gpu/<date>-<gpu>.md``; the runs themselves go to ``runs/gpu-check/``.  On a machine without
CUDA the script says so and exits 0.

What the device needs beside this repository (the machine reaches no network): the packages of
:data:`NEEDED_PACKAGES` (``python benchmarks/gpu_check.py --wheels .whl`` downloads them here as wheels for the
device's Python; install them there into a folder on ``PYTHONPATH``) and ``$HELPERS_DATA`` with the notebooks' data.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

#: import name -> distribution name of what the runner needs beyond a PyTorch image
NEEDED_PACKAGES = {
    "papermill": "papermill", "nbclient": "nbclient", "nbformat": "nbformat", "ipykernel": "ipykernel",
    "jupyter_client": "jupyter-client", "dask": "dask", "distributed": "distributed", "ot": "pot",
}  # fmt: skip

#: the ``full`` profile of each notebook narrowed to one unit: the paper-size models, one task / pair / backbone
FULL_UNITS: dict[str, dict] = {
    "01_discriminator_bounds": {"tasks": ["scan"], "n_dev": 200, "n_test": 500, "parser_steps": 300,
                                "snapshot_every": 100, "subset_sizes": [10, 50, 100, 500]},  # t5-small parser
    "02_selective_answering": {"models": ["minilm_finetuned", "cnn_random"], "n_train_minilm": 2000,
                               "n_test": 1000, "n_ood": 1000},  # MiniLM fine-tuned at 256 tokens
    "03_self_training": {"amazon_pairs_list": ["books->dvd"], "amazon_max_target": 500, "dann_f_pairs": [],
                         "digits_targets": ["digits->usps"], "ablation_pairs": ["digits->usps"], "ablation_N": [2],
                         "ablation_T": [2], "ablation_gamma": [0.1], "conditions_pairs": ["digits->usps"]},
    "04_attribution_ranking": {"n_population": 40, "n_ood": 1000, "n_train": 4000, "n_train_pairs": 4000,
                               "arch_n_population": 40},
    "05_mde": {"cifar_backbones": [56], "cifar_n_compositions": 4, "cifar_n_heldout_compositions": 2,
               "text_models": ["minilm"], "text_n_train": 2000, "text_minilm_n_train": 2000, "text_n_per_set": 500,
               "text_n_compositions": 2, "text_n_heldout_compositions": 1},
}  # fmt: skip


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


class GpuMemory:
    """Peak ``memory.used`` (MiB) that ``nvidia-smi`` reports while the block runs (None without nvidia-smi)."""

    def __enter__(self) -> GpuMemory:
        self.peak: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self) -> None:
        while not self._stop.wait(1.0):
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=10).stdout  # fmt: skip
                used = float(out.split()[0])
            except (OSError, ValueError, IndexError, subprocess.SubprocessError):
                continue
            self.peak = used if self.peak is None else max(self.peak, used)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def run_stage(stage: str, profile: str, notebooks: list[str], budget_s: float, runs: Path) -> list[dict]:
    """Each notebook of ``notebooks`` under ``profile`` (with :data:`FULL_UNITS` for ``full``), one after another,
    each with ``budget_s / len(notebooks)`` seconds per cell at most; one row per notebook."""
    from helpers.run.runner import run_notebooks

    rows = []
    for nb in notebooks:
        params = FULL_UNITS.get(nb, {}) if profile == "full" else {}
        t0 = time.perf_counter()
        with GpuMemory() as mem:
            try:
                run = run_notebooks(profile=profile, only=[nb], parameters=params or None, workers=1,
                                    output_dir=runs / stage, timeout=budget_s / len(notebooks), echo=False)[0]  # fmt: skip
                status, error = run.status, run.error.splitlines()[-1][:160] if run.error else ""
            except Exception as exc:  # noqa: BLE001 - recorded, the next notebook still runs
                status, error = "failed", f"{type(exc).__name__}: {exc}"[:160]
        rows.append({"stage": stage, "notebook": nb, "status": status, "wall_s": round(time.perf_counter() - t0, 1),
                     "peak_gpu_mib": mem.peak, "load_1min": round(os.getloadavg()[0], 2), "error": error})  # fmt: skip
        print(f"[gpu-check] {stage} {nb}: {status} in {rows[-1]['wall_s']} s, peak GPU {mem.peak} MiB", flush=True)
    return rows


def write_record(rows: list[dict], *, device: str, folder: Path, started: datetime, note: str = "") -> Path:
    """The dated record ``<folder>/<date>-<gpu>.md``: machine, then one table row per notebook and stage."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    slug = "".join(c if c.isalnum() else "-" for c in device.lower()).strip("-")
    path = folder / f"{started:%Y-%m-%d}-{slug}.md"
    lines = [f"# GPU check, {started:%Y-%m-%d %H:%M} UTC", "",
             f"Device: {device}; torch {torch.__version__} (CUDA {torch.version.cuda}); {os.cpu_count()} CPU cores. "
             "Written by `make gpu-check` (benchmarks/gpu_check.py): smoke = every notebook's smoke profile through "
             "the runner; full-unit = the full profile narrowed to one unit (FULL_UNITS).", ""]  # fmt: skip
    if note:
        lines += [note, ""]
    lines += ["| stage | notebook | status | s | peak GPU MiB | load (1 min) | error |", "|---|---|---|---:|---:|---:|---|"]
    lines += [f"| {r['stage']} | {r['notebook']} | {r['status']} | {r['wall_s']} | {r['peak_gpu_mib']} | "
              f"{r['load_1min']} | {r['error'].replace('|', '/')} |" for r in rows]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: distributions the device image already holds (its package list, 2026-11): their wheels are not carried
DEVICE_HAS = {"numpy", "scipy", "pandas", "pyyaml", "tqdm", "jinja2", "click", "cloudpickle", "msgpack", "psutil",
              "toolz", "fsspec", "packaging", "requests", "attrs", "typing-extensions", "python-dateutil", "certifi",
              "sortedcontainers", "pygments", "markupsafe", "idna", "urllib3", "charset-normalizer", "zipp"}  # fmt: skip


def download_wheels(folder: Path, python_version: str = "3.12") -> int:
    """The wheels of :data:`NEEDED_PACKAGES` and what they need, for the device's Python (x86-64 Linux), minus
    :data:`DEVICE_HAS`.  About 48 MB, 32 of them POT's: with the data and the repository that is over one device
    call's 64 MiB, so carry the notebooks' data in two calls (``--only``) or POT without its unused modules."""
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", python_version,
           "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
           "--platform", "manylinux2014_x86_64", "--platform", "any", "-d", str(folder), *NEEDED_PACKAGES.values()]  # fmt: skip
    rc = subprocess.call(cmd)
    for wheel in folder.glob("*.whl"):
        if wheel.name.split("-")[0].lower().replace("_", "-") in DEVICE_HAS:
            wheel.unlink()
    size = sum(w.stat().st_size for w in folder.glob("*.whl")) / 2**20
    print(f"[gpu-check] {len(list(folder.glob('*.whl')))} wheels, {size:.1f} MiB in {folder}")
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for both stages together (default 480)")
    ap.add_argument("--only", nargs="+", help="notebook stems (default: every notebook)")
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
        print(f"[gpu-check] missing packages {missing}: carry them as wheels (--wheels .whl here)", file=sys.stderr)
        return 1
    from helpers.run.profiles import list_notebooks

    started = datetime.now(timezone.utc)
    stems = [p.stem for p in list_notebooks() if not args.only or any(p.stem.startswith(o) for o in args.only)]
    runs = REPO / "runs" / "gpu-check" / f"{started:%Y%m%d-%H%M%S}"
    rows = run_stage("smoke", "smoke", stems, args.budget / 2, runs)
    units = [s for s in stems if s in FULL_UNITS]
    rows += run_stage("full-unit", "full", units, args.budget / 2, runs)
    path = write_record(rows, device=device, folder=REPO / "docs" / "reproductions" / "gpu", started=started)
    if os.environ.get("OUT"):  # the device tool brings back what is under $OUT
        shutil.copy2(path, Path(os.environ["OUT"]) / path.name)
    print(f"[gpu-check] record: {path.relative_to(REPO)}; runs: {runs.relative_to(REPO)}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
