"""Benchmark of the attribution methods (a script, not a test): ``python scripts/attribution.py``.

Examples/second of :func:`helpers.attribution.attribute` for IG, KernelSHAP and LIME on a tiny Transformer
(the notebook's ``tiny`` architecture, untrained: timing does not depend on the weights) over HANS-style
premise/hypothesis pairs, batched (``batch_size=64``: up to 64 length-sorted examples per Captum IG call, cut where
the length changes once a call holds 16 -- here two calls of 32 unpadded examples --, their examples × ``n_steps``
interpolation rows run in forward/backward chunks of ≈ ``IG_TOKEN_BUDGET`` token rows; 64-row model batches for the
SHAP/LIME perturbations) vs one at a time (``batch_size=1``, the same code path: one example per IG call, all its
steps in one forward; one perturbed sequence per forward).  Caching is off.  Batched and one-at-a-time runs alternate; medians over ``--repeats`` runs (IG) and
``--repeats-slow`` runs (SHAP, LIME), with the range of the per-repeat (wall-clock) speed-ups and the median 1-min load average.  Examples per
CPU-second (``time.process_time``) are reported too: on a shared machine the wall clock also measures the other
users' load, the process CPU time much less so.  torch uses ``--threads`` threads: by default torch's own default
(one per physical core: 2 here), as a user's session would; ``--threads 1`` measures one core.

IG's speed-up depends on the thread count.  The batched path is bound by the forward/backward arithmetic of the 32
interpolation steps (~4.4 ms per example on one thread, flash attention over 10-11 tokens about a third of it),
which one-at-a-time pays too; on one thread batching removes only the per-call overhead of Captum and the model
(~7 ms per example): 2.5x measured.  Batched chunks of a few thousand token rows also spread over both cores, the
one-at-a-time calls of 32 rows hardly do: 3.8x measured with 2 threads (3.1x in the slowest of 9 repeats), also
against one-at-a-time on its best thread count (column ``speed-up vs best batch-1``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.attribution import WordTokenizer, attribute  # noqa: E402
from helpers.data.hans import hans_examples  # noqa: E402
from helpers.experiments.p4_attribution import build_model, pair_vocab  # noqa: E402
from helpers.plotting import save_table  # noqa: E402


def _time_method(model, tok, pairs, fwd, method: str, repeats: int, args) -> list[dict]:
    """Median wall/CPU seconds of batched and one-at-a-time runs of ``method`` (alternating, ``repeats`` each)."""
    kw = dict(method=method, forward=fwd, n_steps=args.n_steps, n_samples=args.n_samples, cache=False)
    times: dict[int, list[float]] = {1: [], 64: []}
    cpu: dict[int, list[float]] = {1: [], 64: []}
    loads = []
    # batched and one-at-a-time runs alternate, so that load changes on the shared machine hit both alike
    for _ in range(repeats):
        for batch in (1, 64):
            t0, c0 = time.perf_counter(), time.process_time()
            attribute(model, tok, pairs, batch_size=batch, **kw)
            times[batch].append(time.perf_counter() - t0)
            cpu[batch].append(time.process_time() - c0)
        loads.append(os.getloadavg()[0])
    ratios = [t1 / t64 for t1, t64 in zip(times[1], times[64])]
    return [
        {"threads": torch.get_num_threads(), "method": method, "batch_size": batch,
         "seconds": statistics.median(times[batch]), "examples_per_s": args.n / statistics.median(times[batch]),
         "examples_per_cpu_s": args.n / statistics.median(cpu[batch]),
         "ratio_min": min(ratios), "ratio_max": max(ratios), "load_median": statistics.median(loads)}
        for batch in (1, 64)
    ]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="examples per run")
    ap.add_argument("--repeats", type=int, default=7, help="repeats for IG (fast)")
    ap.add_argument("--repeats-slow", type=int, default=3, help="repeats for SHAP and LIME")
    default_threads = sorted({torch.get_num_threads(), 1}, reverse=True)
    ap.add_argument("--threads", type=int, nargs="+", default=default_threads, help="torch thread counts")
    ap.add_argument("--n-steps", type=int, default=32)
    ap.add_argument("--n-samples", type=int, default=200)
    ap.add_argument("--methods", nargs="+", default=["ig", "shap", "lime"])
    args = ap.parse_args()
    data = hans_examples("sub", n=args.n, seed=0)
    pairs = list(zip(data.premise, data.hypothesis))
    vocab = pair_vocab(data.premise.tolist() + data.hypothesis.tolist())
    model = build_model("tiny", vocab, seed=0).eval()
    tok = WordTokenizer(vocab)

    def fwd(ids, seg, mask):
        return model(ids, seg)

    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        for method in args.methods:
            repeats = args.repeats if method == "ig" else args.repeats_slow
            rows += _time_method(model, tok, pairs, fwd, method, repeats, args)
            print(rows[-2], rows[-1], sep="\n", flush=True)
    table = pd.DataFrame(rows)
    index = ["threads", "method"]
    wide = table.pivot_table(index=index, columns="batch_size", values="examples_per_s")
    wide.columns = [f"ex/s (batch {c})" for c in wide.columns]
    wide["speed-up"] = wide["ex/s (batch 64)"] / wide["ex/s (batch 1)"]
    # against one-at-a-time at its own best thread count (small calls can be slower on more threads)
    best_single = wide["ex/s (batch 1)"].groupby(level="method").transform("max")
    wide["speed-up vs best batch-1"] = wide["ex/s (batch 64)"] / best_single
    cpu_wide = table.pivot_table(index=index, columns="batch_size", values="examples_per_cpu_s")
    wide["ex/cpu-s (batch 1)"], wide["ex/cpu-s (batch 64)"] = cpu_wide[1], cpu_wide[64]
    wide["cpu speed-up"] = cpu_wide[64] / cpu_wide[1]
    extra = table.groupby(index)[["ratio_min", "ratio_max", "load_median"]].first()
    wide = wide.join(extra.rename(columns={"ratio_min": "speed-up min", "ratio_max": "speed-up max"}))
    load = os.getloadavg()
    print(wide.round(2).to_string())
    print(f"n={args.n}, repeats={args.repeats}/{args.repeats_slow}, load average {load[0]:.2f} {load[1]:.2f}")
    save_table(wide.reset_index().assign(n=args.n), "study_attribution")


if __name__ == "__main__":
    main()
