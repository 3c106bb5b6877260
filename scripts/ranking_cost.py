"""Cost of ranking models (a script, not a test): ``python scripts/ranking_cost.py``.

``rank_models`` on a synthetic collection of 100 models x 10,000 target examples x 10 classes (float32 logits with a
planted skill per model, a 10,000-row labelled reference per model, 64-wide penultimate features for the methods
that read them), each method timed with the agreement's bootstrap off (the ranking itself) and, for the mergeable
methods, on the same outputs as Dask arrays (out of core: each model's logits read block by block).  Medians over
repeats, with the 1-minute load average of each measurement.  Writes ``figures/study_ranking_cost.csv`` and
``.md``.  Wall time on 2 CPU cores: a few minutes; peak memory about 2 GB.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.estimators import get_estimator, rank_models  # noqa: E402
from helpers.estimators.streaming import MERGEABLE  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402

METHODS = ("average_confidence", "doc", "atc_mc", "cot", "confusion_matrix_shift", "average_negative_entropy",
           "mde_normalized", "nuclear_norm", "mano", "softmax_corr", "dispersion", "gdscore", "aline_s", "aline_d")  # fmt: skip
FEATURES = 64


def collection(models: int, n: int, k: int, seed: int = 0) -> tuple[dict, dict, np.ndarray]:
    """(outputs, reference, target labels): ``models`` models of rising skill on the same rows."""
    rng = np.random.default_rng(seed)
    y, y_ref = rng.integers(0, k, n), rng.integers(0, k, n)
    outputs, reference = {}, {}
    for i, skill in enumerate(np.linspace(0.5, 3.0, models)):
        z = rng.standard_normal((n, k), dtype=np.float32)
        z[np.arange(n), y] += np.float32(0.7 * skill)
        zr = rng.standard_normal((n, k), dtype=np.float32)
        zr[np.arange(n), y_ref] += np.float32(skill)
        outputs[f"m{i:03d}"] = {"logits": z, "features": rng.standard_normal((n, FEATURES), dtype=np.float32)}
        reference[f"m{i:03d}"] = {"logits": zr, "labels": y_ref}
    return outputs, reference, y


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _time(call, repeats: int) -> tuple[float, float]:
    times, loads = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
        loads.append(_load())
    return statistics.median(times), statistics.median(loads)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "figures" / "study_ranking_cost"))
    args = ap.parse_args(argv)
    import dask.array as da

    outputs, reference, y = collection(args.models, args.n, args.k)
    lazy = {m: {"logits": da.from_array(o["logits"], chunks=(2_000, args.k))} for m, o in outputs.items()}
    rows = []
    for method in METHODS:
        feats = "features" in getattr(get_estimator(method), "target_inputs", ())
        outs = outputs if feats else {m: {"logits": o["logits"]} for m, o in outputs.items()}
        secs, load = _time(lambda outs=outs, method=method: rank_models(outs, method=method, reference=reference,
                                                                        labels=y, n_boot=0), args.repeats)  # fmt: skip
        r = rank_models(outs, method=method, reference=reference, labels=y, n_boot=0)
        row = {"method": method, "seconds": secs, "load_1min": load, "kendall_tau": r.agreement["kendall_tau"]}
        if type(get_estimator(method)).__name__ in MERGEABLE:
            row["seconds_out_of_core"], row["load_out_of_core"] = _time(
                lambda method=method: rank_models(lazy, method=method, reference=reference, n_boot=0), args.repeats)
        rows.append(row)
        print(f"{method}: {secs:.2f} s (load {load:.2f})", flush=True)
    table = pd.DataFrame(rows)
    meta = (f"{args.models} models x {args.n:,} examples x {args.k} classes (float32), a {args.n:,}-row reference "
            f"per model, {FEATURES}-wide random stand-in features (so the tau of dispersion and gdscore means nothing "
            f"here); median of {args.repeats} calls, agreement bootstrap off; "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")  # fmt: skip
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(f"{args.out}.csv", index=False)
    md = to_markdown(table.round(4))
    Path(f"{args.out}.md").write_text(f"# Cost of rank_models\n\n{meta}\n\n{md}\n", encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
