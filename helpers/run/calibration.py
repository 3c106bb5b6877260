"""A few seconds of the work the notebooks do, timed at the start of every run, so published times travel.

:func:`calibrate` times a fixed workload on one thread: numpy softmax and log-sum-exp passes over float32 logits
(the estimators' kind of work) and optimiser steps of a small torch MLP (the training loops' kind of work).  The
runner writes it to ``<run folder>/calibration.json``; ``helpers publish`` copies the published run's to
``figures/calibration.json``; ``python -m helpers calibrate`` times this machine and says how its time compares, so
a reader can scale the published notebook times to their machine -- and tell a slow machine from a slow change.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

__all__ = ["CALIBRATION_VERSION", "calibrate", "write_calibration", "compare_with"]

CALIBRATION_VERSION = 1  #: bump when the workload changes (calibrations of other versions are not compared)


def _numpy_work() -> None:
    import numpy as np

    z = np.random.default_rng(0).standard_normal((200_000, 10), dtype=np.float32)
    for _ in range(8):
        m = z.max(axis=1, keepdims=True)
        e = np.exp(z - m)
        s = e.sum(axis=1, keepdims=True)
        (e / s).max(axis=1).mean()
        (m[:, 0] + np.log(s[:, 0])).mean()


def _torch_work() -> None:
    import torch

    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(4096, 64, generator=g), torch.randint(0, 10, (4096,), generator=g)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for i in range(60):
        idx = slice((i * 256) % 4096, (i * 256) % 4096 + 256)
        loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()


def calibrate(repeats: int = 3) -> dict[str, Any]:
    """Median seconds of the numpy and the torch workload (one thread each), their sum and the machine."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        times = {}
        for name, work in (("numpy_s", _numpy_work), ("torch_s", _torch_work)):
            work()  # warm-up: imports, allocator, first-call costs
            runs = []
            for _ in range(repeats):
                t = time.perf_counter()
                work()
                runs.append(time.perf_counter() - t)
            times[name] = round(statistics.median(runs), 4)
    finally:
        torch.set_num_threads(threads)
    return {"version": CALIBRATION_VERSION, **times, "total_s": round(sum(times.values()), 4),
            "load_1min": round(os.getloadavg()[0], 2), "machine": platform.machine(),
            "cpus": os.cpu_count()}  # fmt: skip


def write_calibration(folder: Path) -> Path:
    """Time this machine once for a run folder (kept when the run is resumed)."""
    path = Path(folder) / "calibration.json"
    if not path.exists():
        path.write_text(json.dumps(calibrate(), indent=2) + "\n", encoding="utf-8")
    return path


def compare_with(published: Path, mine: dict[str, Any]) -> str:
    """A sentence: this machine's calibration against the published run's (``figures/calibration.json``)."""
    if not Path(published).exists():
        return f"this machine: {mine['total_s']:.2f} s (no published calibration to compare with)"
    ref = json.loads(Path(published).read_text(encoding="utf-8"))
    if ref.get("version") != mine.get("version"):
        return f"this machine: {mine['total_s']:.2f} s (the published calibration is of another workload version)"
    ratio = mine["total_s"] / ref["total_s"]
    return (f"this machine: {mine['total_s']:.2f} s, the published run's machine: {ref['total_s']:.2f} s (load "
            f"{ref.get('load_1min')}): expect the published notebook times x {ratio:.2f} here")
