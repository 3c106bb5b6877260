"""Paper 1 parser check (a script, not a test): ``python scripts/p1_parser_schedule.py --task scan``.

Our parsers are trained from scratch with paper 1's *fine-tuning* recipe (Adam, constant learning rate, App. B.1),
and the SCAN parser fits only 70 % of its own training pairs exactly after 4,000 steps (``p1_parser_capacity``:
a 6x larger model did not help).  Does a decaying learning rate (linear decay after a 5 % warm-up, the usual recipe
for transformers trained from scratch) let the same model, steps and data fit better?

For one task, with the ``default`` profile's data and that task's pipeline settings (steps, batch size, unknown-word
handling), one parser is trained per candidate (``--candidates``, ``schedule:lr``; ``constant`` = the current
recipe) into a scratch folder and decoded exactly as notebook 01 decodes its dev set (beam 4, the task's decoding
constraints) on the 200 dev pairs and on 300 of its own training pairs.  Rows: exact match on both, final training
loss, training seconds, 1-minute load average.

Selection rule, fixed before the run: per task, the candidate with the highest **dev** exact match is adopted if it
beats the current recipe (``constant`` at the task's current lr) by at least .05; otherwise the task keeps the
current recipe.  Same steps, so the run time does not change.  No test set is decoded here.  Writes
``study_p1_parser_schedule_<task>.csv`` / ``.md`` to ``--out`` (default ``runs/studies``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.experiments.p1_bounds.pipeline import decode_constraints_for  # noqa: E402
from helpers.seq2seq import beam_search, build_parser, exact_match, train_parser  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402
from scripts.p1_parser_capacity import default_task  # noqa: E402


def exact(model, vocab, task, cfg, pairs) -> float:
    """Exact match of the top beam on ``pairs``, decoded as notebook 01 decodes its dev set."""
    inputs = [p[0] for p in pairs]
    out = beam_search(model, vocab, inputs, num_beams=cfg.num_beams, max_new_tokens=task.decode_budget(inputs),
                      batch_size=cfg.beam_batch_size, device="cpu", **decode_constraints_for(task, cfg, inputs))  # fmt: skip
    return float(exact_match([str(x) for x in out.top], [p[1] for p in pairs]).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="scan")
    ap.add_argument("--candidates", nargs="+", default=None, help="schedule:lr (default: constant and linear "
                    "at the task's lr, linear at 3x it)")  # fmt: skip
    ap.add_argument("--out", default="runs/studies")
    args = ap.parse_args()
    torch.set_num_threads(2)
    task, base, vocab, train_probe = default_task(args.task)
    lr = base.parser_lr
    cands = args.candidates or [f"constant:{lr:g}", f"linear:{lr:g}", f"linear:{3 * lr:g}"]
    rows = []
    for cand in cands:
        schedule, cand_lr = cand.split(":")
        model = build_parser(len(vocab), base.parser_config, seed=base.seed)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as ckdir:
            fit = train_parser(model, task.train, vocab, max_steps=base.parser_steps, batch_size=base.parser_batch_size,
                               lr=float(cand_lr), seed=base.seed, unk_singletons=base.parser_unk_singletons,
                               scheduler=None if schedule == "constant" else schedule, checkpoint_dir=ckdir,
                               device="cpu", progress=False)  # fmt: skip
        train_s = time.perf_counter() - t0
        rows.append({"task": args.task, "schedule": schedule, "lr": float(cand_lr), "steps": base.parser_steps,
                     "final_loss": fit.final_loss, "dev_exact": exact(model, vocab, task, base, task.dev),
                     "train_exact": exact(model, vocab, task, base, train_probe), "train_seconds": train_s,
                     "load_1min": os.getloadavg()[0]})  # fmt: skip
        print(rows[-1], flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / f"study_p1_parser_schedule_{args.task}.csv", index=False)
    (out / f"study_p1_parser_schedule_{args.task}.md").write_text(to_markdown(frame.round(3)))
    print(f"wrote {out / f'p1_parser_schedule_{args.task}.csv'}")


if __name__ == "__main__":
    main()
