"""Benchmark of notebook 05's CIFAR-10-C pipeline (a script, not a test): ``python scripts/cifar10c_speed.py``.

Two parts, on ``--n`` CIFAR-10 test images (default 2,000, the default profile's set size):

* corruption: images/s of :func:`helpers.data.corruptions.corrupt` for each of the 19 CIFAR-10-C types at
  severities 1, 3 and 5 (the recipe of :mod:`helpers.data.corruptions.cifar10c`), one process;
* inference: images/s of the shipped ResNet-20 and ResNet-32 through
  :func:`helpers.training.features_and_logits` (batch 500, inference mode) with 1 and 2 torch threads, NCHW vs
  channels-last memory format, and ``torch.compile`` (channels-last, 2 threads; compile time reported apart).

Reports medians over ``--repeats`` runs with the 1-minute load average before each configuration. Writes
``study_cifar10c_speed.csv`` and ``.md`` to ``--out`` (default ``runs/studies``). Needs the shared data
(``HELPERS_DATA``). Wall time on 2 CPU cores: about 6 minutes.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.data import load  # noqa: E402
from helpers.data.corruptions import CIFAR10C_NAMES, corrupt  # noqa: E402
from helpers.models.resnet_cifar import cifar_preprocess, load_cifar_resnet  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402
from helpers.training import features_and_logits  # noqa: E402


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def corruption_rows(x: np.ndarray, repeats: int) -> list[dict]:
    rows = []
    for name in CIFAR10C_NAMES:
        for sev in (1, 3, 5):
            load_avg = os.getloadavg()[0]
            med = _median_time(lambda n=name, s=sev: corrupt(x, n, s, seed=0), repeats)
            rows.append({"part": "corruption", "what": name, "setting": f"severity {sev}",
                         "images_per_s": round(len(x) / med, 1), "load_1min": round(load_avg, 2)})  # fmt: skip
            print(rows[-1], flush=True)
    return rows


class _Compiled(torch.nn.Module):
    """A compiled ResNet behind the ``features`` / ``linear`` interface of ``features_and_logits``."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.inner = model
        self.compiled_features = torch.compile(model.features)
        self.linear = model.linear

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.compiled_features(x)


def inference_rows(x: np.ndarray, repeats: int) -> list[dict]:
    rows = []

    def cl(batch):
        return cifar_preprocess(batch).contiguous(memory_format=torch.channels_last)

    for depth in (20, 32):
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for layout in ("NCHW", "channels-last", "compile"):
                if layout == "compile" and threads == 1:
                    continue
                model = load_cifar_resnet(depth).eval()
                prep = cifar_preprocess
                if layout != "NCHW":
                    model, prep = model.to(memory_format=torch.channels_last), cl
                extra = {}
                if layout == "compile":
                    t = time.perf_counter()
                    try:
                        model = _Compiled(model)
                        features_and_logits(model, x[:500], preprocess=prep)
                    except Exception as exc:  # no C++ toolchain, unsupported platform: report, go on
                        print(f"torch.compile failed: {type(exc).__name__}: {exc}"[:300], flush=True)
                        continue
                    extra["compile_s"] = round(time.perf_counter() - t, 1)
                load_avg = os.getloadavg()[0]
                med = _median_time(lambda m=model, p=prep: features_and_logits(m, x, batch_size=500, preprocess=p), repeats)
                rows.append({"part": "inference", "what": f"resnet{depth}", "setting": f"{layout}, {threads} thr",
                             "images_per_s": round(len(x) / med, 1), "load_1min": round(load_avg, 2), **extra})  # fmt: skip
                print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "runs" / "scripts"))
    args = ap.parse_args()
    x = load("cifar10_jpeg").x[: args.n]
    start = time.perf_counter()
    torch.set_num_threads(1)
    df = pd.DataFrame(corruption_rows(x, args.repeats) + inference_rows(x, args.repeats))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "study_cifar10c_speed"
    df.to_csv(out / f"{stem}.csv", index=False)
    corr = df[df.part == "corruption"]
    meta = (
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"{args.n} CIFAR-10 test images; medians of {args.repeats} runs; wall {time.perf_counter() - start:.0f} s. "
        f"Corruption over all 57 (type, severity) cells: median {corr.images_per_s.median():.0f} images/s, "
        f"slowest {corr.images_per_s.min():.0f} ({corr.loc[corr.images_per_s.idxmin(), 'what']})."
    )
    (out / f"{stem}.md").write_text(meta + "\n\n" + to_markdown(df.astype(object).fillna("")) + "\n")
    print(f"wrote {out / stem}.csv/.md")


if __name__ == "__main__":
    main()
