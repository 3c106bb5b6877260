"""Paper 5's in-sample ρ / R² on the 95 CIFAR-10-C sets against the size of each set (a study script, not a test).

    python scripts/p5_set_size.py [--jpeg-max 10000] [--out figures]

Protocol, fixed before the run (issue "P5 originals", item 5).  Notebook 05's ``default`` parameters and measures
(MDE normalised, T = 1), the authors' protocol (:func:`helpers.experiments.p5_mde.protocol.cifar10c_frame`: the 19
types x 5 severities = 95 sets, every measure's line fitted and scored in-sample, Spearman ρ and R²).

* Original images (notebook 05's default base, ResNet-20 and ResNet-32): nested random subsets (seed 0) of 250 and
  500 of the 1,017 images, and all 1,017.  A subset's sets hold the same images corrupted as the full sets (the
  model outputs are the cached ones, restricted to the subset), and its reference is those images uncorrupted.
* The JPEG pool (ResNet-20, the paper's headline backbone): 2,000 / 4,000 / 8,000 nested subsets of 10,000 images
  (``--jpeg-max``) and all of them, the same way; the outputs on the 10,000 are computed once (cached).

Every measure at every size is reported, whichever way it goes; the paper's numbers (10,000 images per set) are
beside them.  Writes ``<out>/05_mde_set_size.csv`` and ``.md``; the heavy part runs as units on the project's
executor (:func:`helpers.parallel.map_units`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.data.corruptions import CIFAR10C_NAMES  # noqa: E402
from helpers.experiments.p5_mde.measures import (  # noqa: E402
    MEASURES,
    PAPER_CIFAR10_RESNET20,
    correlation_table,
    fit_reference,
    measure_frame,
)
from helpers.experiments.p5_mde.protocol import cifar10c_frame  # noqa: E402
from helpers.experiments.p5_mde.setups import cifar_setup, notebook_parameters  # noqa: E402

N_BLOCKS = 4  # units of the output computation (each computes every n-th set)


def _params(base: str, n: int, backbones: list[int]) -> dict:
    return notebook_parameters("default", cifar_base=base, cifar_n_per_set=n, cifar_n_reference=0,
                               cifar_backbones=backbones)  # fmt: skip


def _is_cifar10c(spec) -> bool:
    kind, _, sev = spec.name.rpartition("-")
    return spec.family == "corruption" and kind in CIFAR10C_NAMES and sev in {"1", "2", "3", "4", "5"}


def _block(args: tuple[str, int, list[int], int]) -> int:
    """One unit: the outputs of every N_BLOCKS-th CIFAR-10-C set (cached on disk); returns the number of sets."""
    base, n, backbones, i = args
    setup = cifar_setup(_params(base, n, backbones))
    setup.specs = [s for s in setup.specs if _is_cifar10c(s)]
    specs, _, _ = setup.outputs(block=(i, N_BLOCKS), progress=False)
    return len(specs)


def _outputs(base: str, n: int, backbones: list[int]):
    from helpers.parallel import map_units

    map_units(_block, [(base, n, backbones, i) for i in range(N_BLOCKS)], desc=f"{base} outputs")
    setup = cifar_setup(_params(base, n, backbones))
    setup.specs = [s for s in setup.specs if _is_cifar10c(s)]
    specs, out, ref = setup.outputs(progress=False)  # all cached now
    return setup, specs, out, ref


def _subset_rows(setup, specs, out, ref, idx: np.ndarray, *, base: str) -> pd.DataFrame:
    """ρ / R² of every measure on the 95 sets restricted to the images ``idx``."""
    labels = np.asarray(setup.labels(specs[0]))[idx]
    sub = {b: {s.name: {k: v[idx] for k, v in per[s.name].items()} for s in specs} for b, per in out.items()}
    refs = {b: fit_reference(logits=ref[b]["logits"][idx], labels=labels,
                             features=ref[b].get("features")[idx] if ref[b].get("features") is not None else None)
            for b in out}  # fmt: skip
    names = list(out)
    partners = {b: names[(i + 1) % len(names)] for i, b in enumerate(names)} if len(names) > 1 else {}
    frame = measure_frame(sub, specs, labels=lambda s: labels, references=refs, partners=partners, setup="cifar10")
    report = correlation_table(cifar10c_frame(frame), measures=list(MEASURES))
    fit = report[report.split == "fit"]
    rows = fit.pivot_table(index=["backbone", "score"], columns="measure", values="value").reset_index()
    rows.insert(0, "n_per_set", len(idx))
    rows.insert(0, "base", base)
    rows["mean_accuracy"] = float(frame[frame.set.isin([s.name for s in specs])].accuracy.mean())
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jpeg-max", type=int, default=10_000, help="largest JPEG subset (0: originals only)")
    ap.add_argument("--out", default="figures", help="folder for 05_mde_set_size.csv/.md")
    args = ap.parse_args(argv)
    t0 = time.time()
    rng = np.random.default_rng(0)
    tables = []
    plan = [("original", 1017, [20, 32], (250, 500, 1017))]
    if args.jpeg_max:
        sizes = tuple(s for s in (2000, 4000, 8000) if s < args.jpeg_max) + (args.jpeg_max,)
        plan.append(("jpeg", args.jpeg_max, [20], sizes))
    for base, n_max, backbones, sizes in plan:
        t1 = time.time()
        setup, specs, out, ref = _outputs(base, n_max, backbones)
        order = rng.permutation(n_max)  # nested subsets: the first n of one seeded order
        for n in sizes:
            tables.append(_subset_rows(setup, specs, out, ref, np.sort(order[:n]), base=base))
            print(f"{base} n={n}: done ({time.time() - t1:.0f} s since its outputs began)", flush=True)
    df = pd.concat(tables, ignore_index=True)
    paper = pd.DataFrame([{"score": m, "paper_rho": v.get("spearman_rho"), "paper_r2": v.get("r2")}
                          for m, v in PAPER_CIFAR10_RESNET20.items()])  # fmt: skip
    df = df.merge(paper, on="score", how="left")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "05_mde_set_size.csv", index=False)
    from helpers.tables import to_markdown

    view = df[["base", "n_per_set", "backbone", "score", "spearman_rho", "r2", "paper_rho", "paper_r2"]]
    (out / "05_mde_set_size.md").write_text(
        f"# Paper 5's in-sample ρ / R² (95 CIFAR-10-C sets) against the set size\n\nProtocol{__doc__.split('Protocol', 1)[1]}"
        f"\nWall time {time.time() - t0:.0f} s.\n\n" + to_markdown(view, digits=3) + "\n", encoding="utf-8")
    print(f"wrote {out / '05_mde_set_size.csv'} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
