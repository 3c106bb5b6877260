"""Paper 1 diagnostics (a script, not a test): ``python scripts/p1_discriminator_diagnostics.py``.

Why do the SCAN / POS discriminators judge the final parser's outputs poorly?  On notebook 01's ``default``
pipeline of each task (read from the cache; trained first if the cache is empty), one discriminator member is
trained again, with the task's own settings, in two experiments:

* *data*: on 25 / 50 / 100 % of the mined training pairs (a class-stratified subsample), seeds 0 and 1;
* *length*: on all pairs for ``--epochs`` epochs instead of the task's ``disc_epochs`` (dev-AUC selection as in
  the pipeline), seed 0, with the member's dev-AUC trace.

Each row gives the member's AUC on the discriminator dev set (snapshot negatives, its selection score), its
Correct-vote rate there, and the AUC of its Correct-minus-Incorrect logit on the final parser's dev outputs
(``final_dev``) and on every labelled test set, with the seconds it took and the 1-minute load average.  Writes
``study_p1_discriminator_diagnostics.csv`` / ``.md`` to ``--out`` (default ``runs/studies``).  ``--set`` changes the
task's pipeline settings (the negative-snapshot rule of the README compares ``{"negative_snapshots": null}`` with
the default, ``--shares 1``); ``--member-set`` changes only the retrained members' settings, on the cached pipeline
(e.g. whole-model fine-tuning ``{"disc_freeze_layers": 0}``, or word-level members ``{"disc_kind": "scratch"}``).
About 15 minutes on 2 CPU cores with a warm cache (SCAN and POS).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.experiments.p1_bounds import run_task  # noqa: E402
from helpers.experiments.p1_bounds.settings import notebook_parameters, pipeline_config, task_data  # noqa: E402
from helpers.experiments.p1_bounds.tasks import discriminator_text  # noqa: E402
from helpers.metrics import roc_auc  # noqa: E402
from helpers.seq2seq import DiscriminatorData, WordVocab, discriminator_margins, train_discriminators  # noqa: E402
from helpers.seq2seq.discriminators import SEP  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402


def stratified_share(data: DiscriminatorData, share: float, *, seed: int = 0) -> DiscriminatorData:
    """``share`` of the positives and of the negatives of ``data`` (a fixed random draw)."""
    rng = np.random.default_rng(seed)
    keep = []
    for label in (1, 0):
        idx = rng.permutation(np.flatnonzero(data.labels == label))
        keep.append(idx[: int(round(share * len(idx)))])
    idx = np.sort(np.concatenate(keep))
    return DiscriminatorData([data.inputs[i] for i in idx], [data.outputs[i] for i in idx], data.labels[idx])


def one_member(result, cfg, pairs: DiscriminatorData, *, seed: int, epochs: int) -> dict:
    """Train one member on ``pairs`` as the pipeline does and score it on the final parser's outputs."""
    t0 = time.perf_counter()
    vocab = WordVocab.build([*result.disc_train.inputs, *result.disc_train.outputs, SEP])
    members = train_discriminators(
        pairs, kind=cfg.disc_kind, n_members=1, seed=seed, vocab=vocab, max_length=cfg.disc_max_length,
        epochs=epochs, batch_size=cfg.disc_batch_size, lr=cfg.disc_lr, dev=result.disc_dev,
        model_kwargs={"freeze_layers": cfg.disc_freeze_layers} if cfg.disc_kind == "minilm" else None,
        evals_per_epoch=cfg.disc_evals_per_epoch, max_attempts=1, device="cpu", progress=False,
    )  # fmt: skip
    model = members[0][0]
    row = {"pairs": len(pairs), "seed": seed, "epochs": epochs, "disc_dev_auc": model.dev_stats["dev_auc"],
           "vote_rate": model.dev_stats["dev_vote_rate"]}  # fmt: skip
    render = discriminator_text(result.task)
    for name, s in [("final_dev", result.dev), *result.sets.items()]:
        if s.labelled and 0 < s.correct.sum() < len(s.correct):
            outputs = [render(p) for p in s.predictions]  # as the pipeline shows them to the members
            margins = discriminator_margins(members, s.inputs, outputs, device="cpu")[:, 0]
            row[name] = roc_auc(scores=margins, labels=s.correct.astype(int))
    row["seconds"] = time.perf_counter() - t0
    row["load_1min"] = os.getloadavg()[0]
    row["dev_auc_trace"] = " ".join(f"{step}:{auc:.3f}" for step, auc in getattr(model, "dev_history", []))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=["scan", "pos"])
    ap.add_argument("--shares", nargs="+", type=float, default=[0.25, 0.5, 1.0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--epochs", type=int, default=6, help="the length experiment's epochs (0: skip it)")
    ap.add_argument(
        "--set", default="{}", help="PipelineConfig overrides as JSON, e.g. '{\"negative_snapshots\": null}'"
    )
    ap.add_argument(
        "--member-set", default="{}",
        help="overrides for the retrained members only (the pipeline stays cached), e.g. '{\"disc_freeze_layers\": 0}'",
    )  # fmt: skip
    ap.add_argument("--out", default="runs/studies")
    args = ap.parse_args()
    torch.set_num_threads(2)
    params = notebook_parameters("default")
    rows = []
    for task in args.tasks:
        cfg = dataclasses.replace(pipeline_config(params, task), **json.loads(args.set))
        result = run_task(task_data(params, task), cfg, progress=True)
        cfg = dataclasses.replace(cfg, **json.loads(args.member_set))
        for share in args.shares:
            for seed in args.seeds:
                pairs = stratified_share(result.disc_train, share)
                rows.append({"task": task, "experiment": "data", "share": share,
                             **one_member(result, cfg, pairs, seed=cfg.seed + seed, epochs=cfg.disc_epochs)})  # fmt: skip
                print(rows[-1], flush=True)
        if not args.epochs:
            continue
        longer = dataclasses.replace(cfg, disc_epochs=args.epochs)
        rows.append({"task": task, "experiment": "length", "share": 1.0,
                     **one_member(result, longer, result.disc_train, seed=cfg.seed, epochs=args.epochs)})  # fmt: skip
        print(rows[-1], flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "study_p1_discriminator_diagnostics.csv", index=False)
    (out / "study_p1_discriminator_diagnostics.md").write_text(
        to_markdown(frame.drop(columns="dev_auc_trace").round(3))
    )
    print(f"wrote {out / 'p1_discriminator_diagnostics.csv'}")


if __name__ == "__main__":
    main()
