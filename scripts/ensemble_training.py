"""Benchmark of ensemble training for paper 3 (a script, not a test): ``python scripts/ensemble_training.py``.

Trains N = 20 members at batch 8 for one epoch over 800 rows, three ways, on one torch thread:

* ``fit``: :func:`helpers.training.fit` member after member (the project's general loop);
* ``one by one``: :func:`helpers.training.members.train_members` with ``vectorise=False`` (tensors loaded once,
  index-sliced batches, fused Adam);
* ``vectorised``: the same with ``vectorise=True`` (stacked parameters, vmapped forward pass).

for three member architectures: the paper's Amazon typical DNN (4-layer MLP of width 128 over 5,000 TF-IDF
features), the same over 1,000 features, and over 64 features (the size of an 8x8 digit).  Reports the median over
``--repeats`` runs of steps/s (one step = one batch for every member) and member-steps/s, with the 1-minute load
average before each configuration.  Writes ``study_ensemble_training.csv``, ``.md`` and ``.png`` to ``--out``
(default ``runs/studies``).  Wall time on 2 CPU cores: about 3 minutes.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.tables import to_markdown  # noqa: E402
from helpers.training import fit  # noqa: E402
from helpers.training.members import train_members  # noqa: E402

N_MEMBERS, BATCH, ROWS = 20, 8, 800


def _mlp(d: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(d, 128),
        nn.ReLU(),
        nn.Linear(128, 128),
        nn.ReLU(),
        nn.Linear(128, 128),
        nn.ReLU(),
        nn.Linear(128, 2),
    )


def _members(d: int) -> list[nn.Module]:
    out = []
    for s in range(N_MEMBERS):
        torch.manual_seed(s)
        out.append(_mlp(d))
    return out


def _run(way: str, d: int, x: np.ndarray, y: np.ndarray) -> float:
    models = _members(d)
    t = time.perf_counter()
    if way == "fit":
        for i, m in enumerate(models):
            fit(m, (x, y), epochs=1, batch_size=BATCH, lr=1e-3, seed=i, progress=False)
    else:
        train_members(
            models,
            x,
            y,
            epochs=1,
            batch_size=BATCH,
            lr=1e-3,
            seeds=range(N_MEMBERS),
            vectorise=way == "vectorised",
            progress=False,
        )
    return time.perf_counter() - t


def _plot(df: pd.DataFrame, path: Path) -> None:
    """Bar chart of member-steps/s per way, one group per input size."""
    import matplotlib

    matplotlib.use("Agg")

    piv = df.pivot(index="inputs", columns="way", values="member_steps_per_s")[
        ["fit", "one by one", "vectorised"]
    ]
    ax = piv.sort_index(ascending=False).plot.bar(figsize=(6.5, 3.8), rot=0)
    ax.set(
        xlabel="input features of the 4-layer MLP (width 128)",
        ylabel="member-steps per second",
        title=f"Training {N_MEMBERS} members at batch {BATCH}, one thread",
    )
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "runs" / "scripts"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    rows, start = [], time.perf_counter()
    steps = ROWS // BATCH
    for d in (5000, 1000, 64):
        x = (rng.random((ROWS, d)) * (rng.random((ROWS, d)) < 0.05)).astype(np.float32)
        y = rng.integers(0, 2, ROWS)
        params = sum(p.numel() for p in _mlp(d).parameters())
        for way in ("fit", "one by one", "vectorised"):
            load = os.getloadavg()[0]
            times = [_run(way, d, x, y) for _ in range(args.repeats)]
            med = statistics.median(times)
            rows.append(
                {
                    "inputs": d,
                    "parameters_per_member": params,
                    "way": way,
                    "members": N_MEMBERS,
                    "batch": BATCH,
                    "median_s": round(med, 3),
                    "steps_per_s": round(steps / med, 1),
                    "member_steps_per_s": round(steps * N_MEMBERS / med, 1),
                    "ms_per_member_step": round(1e3 * med / (steps * N_MEMBERS), 3),
                    "load_1min": round(load, 2),
                    "repeats": args.repeats,
                }
            )
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    base = df[df.way == "fit"].set_index("inputs").median_s
    df["speedup_vs_fit"] = [round(base[r.inputs] / r.median_s, 2) for r in df.itertuples()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "study_ensemble_training"
    df.to_csv(out / f"{stem}.csv", index=False)
    meta = (
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, one torch thread, "
        f"{os.cpu_count()} CPUs; N = {N_MEMBERS} members, batch {BATCH}, one epoch of {ROWS} rows; medians of "
        f"{args.repeats} runs; wall {time.perf_counter() - start:.0f} s"
    )
    (out / f"{stem}.md").write_text(meta + "\n\n" + to_markdown(df) + "\n")
    _plot(df, out / f"{stem}.png")
    print(f"wrote {out / stem}.csv/.md")


if __name__ == "__main__":
    main()
