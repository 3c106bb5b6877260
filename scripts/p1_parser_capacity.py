"""Paper 1 parser check (a script, not a test): ``python scripts/p1_parser_capacity.py``.

Does notebook 01's SCAN parser underfit because it is too small or trained too briefly?  With the ``default``
profile's SCAN data (2,500 training pairs, 200 dev pairs) and settings (lr, batch size, seed), one parser is
trained per candidate (``--candidates``, ``preset:steps``) into a scratch folder, then decoded with beam 4 on the
dev pairs and on 300 of its own training pairs.  Each row gives exact match on both, the training seconds, the
seconds to decode 500 inputs (mining cost), the parameter count and the 1-minute load average.

Selection rule, fixed before the run: the candidate with the highest **dev** exact match is adopted for SCAN if it
beats the current parser (``tiny:2000``) by at least .05 and its extra training and mining time
(5 snapshots' training + 2 snapshots × 2,500 mined inputs + the final decode) keeps the projected cold default run
of notebook 01 under 25 minutes (1,500 s; last cold run 1,157 s).  No test set is decoded here.  Writes
``study_p1_parser_capacity.csv`` / ``.md`` to ``--out`` (default ``runs/studies``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.experiments.p1_bounds.pipeline import parser_cache  # noqa: E402
from helpers.experiments.p1_bounds.settings import notebook_parameters, pipeline_config, task_data  # noqa: E402
from helpers.seq2seq import beam_search, build_parser, exact_match, train_parser  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402


def exact(model, vocab, pairs, budget: int) -> tuple[float, float]:
    """Exact match of the top beam on ``pairs`` and the seconds the decode took."""
    t0 = time.perf_counter()
    out = beam_search(model, vocab, [p[0] for p in pairs], num_beams=4, max_new_tokens=budget, device="cpu")
    return float(
        exact_match([str(x) for x in out.top], [p[1] for p in pairs]).mean()
    ), time.perf_counter() - t0


def default_task(name: str) -> tuple:
    """The ``default`` profile's task ``name``: its data, pipeline settings, parser vocabulary and a fixed probe of
    300 of its own training pairs (seeded, so every parser benchmark probes the same pairs)."""
    params = notebook_parameters("default")
    task = task_data(params, name)
    base = pipeline_config(params, name)
    vocab = parser_cache(task, base)[0]
    rng = np.random.default_rng(0)
    train_probe = [task.train[i] for i in rng.choice(len(task.train), 300, replace=False)]
    return task, base, vocab, train_probe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="scan")
    ap.add_argument("--candidates", nargs="+", default=["tiny:2000", "tiny:4000", "small:2000", "small:4000"])
    ap.add_argument("--out", default="runs/studies")
    args = ap.parse_args()
    torch.set_num_threads(2)
    task, base, vocab, train_probe = default_task(args.task)
    rows = []
    for cand in args.candidates:
        preset, steps = cand.split(":")
        model = build_parser(len(vocab), preset, seed=base.seed)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as ckdir:
            fit = train_parser(model, task.train, vocab, max_steps=int(steps), batch_size=base.parser_batch_size,
                               lr=base.parser_lr, seed=base.seed, checkpoint_dir=ckdir, device="cpu", progress=False)  # fmt: skip
        train_s = time.perf_counter() - t0
        dev_em, dev_s = exact(model, vocab, task.dev, task.max_new_tokens)
        train_em, train_dec_s = exact(model, vocab, train_probe, task.max_new_tokens)
        rows.append({"task": args.task, "preset": preset, "steps": int(steps),
                     "n_params": sum(p.numel() for p in model.parameters()), "final_loss": fit.final_loss,
                     "dev_exact": dev_em, "train_exact": train_em, "train_seconds": train_s,
                     "decode_500_seconds": (dev_s + train_dec_s) * 500 / (len(task.dev) + len(train_probe)),
                     "load_1min": os.getloadavg()[0]})  # fmt: skip
        print(rows[-1], flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "study_p1_parser_capacity.csv", index=False)
    (out / "study_p1_parser_capacity.md").write_text(to_markdown(frame.round(3)))
    print(f"wrote {out / 'p1_parser_capacity.csv'}")


if __name__ == "__main__":
    main()
