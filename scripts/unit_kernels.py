"""Where a training step of the costliest units spends its CPU (a script, not a test):
``python scripts/unit_kernels.py``.

The costliest units of the default run (``figures/cpu_profile.md``) are training loops: notebook 01's parsers and
discriminators, 02's LSTMs, 03's TF-IDF MLP pools and DANNs.  For one optimiser step of each, at the default
profile's shapes and with the optimiser ``fit`` or notebook 03's loops build for it, this reads torch's profiler
over ``--steps`` steps (one torch thread) and splits the step's CPU into

* ``matrix_share``: matrix products and attention (``mm``, ``bmm``, ``addmm``, fused attention, LSTM cells),
* ``rng_share``: random numbers, i.e. dropout's masks (``bernoulli_`` and the like),
* ``optimizer_share``: Adam's update kernels (the fused kernel of notebook 03's loops; of the per-parameter
  Adam of ``fit`` only its ``lerp_``, ``addcmul_`` and ``addcdiv_``: its ``mul_``, ``sqrt`` and ``div_`` fall in
  the next line),
* ``other_kernels_share``: every other torch kernel (activations, norms, losses, copies),
* ``outside_kernels_share``: the rest, Python and torch's dispatch around the kernels (the step's CPU with the
  profiler off minus the kernels' own time with it on, clipped at 0; the profiler's cost per kernel call counts as
  the kernels', so this share is a lower bound),

with ``step_ms``, the CPU milliseconds of one step without the profiler (median of ``--repeats`` measurements of
``steps`` steps each: at least ``--steps``, and enough for :data:`MIN_SECONDS` of CPU).  The kernels'
floating-point results are what the records are made of: a step runs faster on the same records only by leaving
out Python around them, not by running other kernels (another BLAS blocking, a batched or sparse product, a
compiled graph or another random-number stream give other bits, and training carries them into every record).

Writes ``study_unit_kernels.{csv,md}`` to ``--out`` (default ``runs/studies``; ``--out figures`` for the committed
record), with the 1-minute load before each case.  Wall time on 2 CPU cores at the defaults: about 2 minutes.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
import torch
from torch.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.tables import to_markdown  # noqa: E402
from helpers.training.members import make_adam  # noqa: E402

MATRIX = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::addbmm", "aten::_mkldnn", "mkldnn",
          "scaled_dot_product", "flash_attention", "aten::lstm", "rnn")  # fmt: skip
RNG = ("bernoulli", "uniform_", "normal_", "random_", "randperm")
OPTIMIZER = ("_fused_adam", "_foreach_", "aten::lerp_", "aten::addcdiv_", "aten::addcmul_")
MIN_SECONDS = 3.0  #: each measurement runs at least ``--steps`` steps and at least this long


def _ids(g, high, *shape):
    return torch.randint(1, high, shape, generator=g)


def parser():
    """01: the T5 parser (``tiny``) at SCAN's shapes: batch 64, 10 source and 23 target ids, 22 words; Adam, L2 1e-3."""
    from helpers.seq2seq.parser import build_parser

    g = torch.Generator().manual_seed(1)
    model = build_parser(22, "tiny", seed=0)
    batch = {"input_ids": _ids(g, 22, 64, 10), "attention_mask": torch.ones(64, 10, dtype=torch.long),
             "labels": _ids(g, 22, 64, 23)}  # fmt: skip
    return model, torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-3), lambda m: m(**batch).loss


def scratch_discriminator():
    """01: a word-level discriminator member (SCAN): 2-layer encoder of width 64, batch 16 of 40 words; AdamW."""
    from helpers.seq2seq.discriminators import ScratchPairClassifier

    g = torch.Generator().manual_seed(1)
    model = ScratchPairClassifier(200, max_length=96)
    ids, y, seg = _ids(g, 200, 16, 40), torch.randint(0, 2, (16,), generator=g), (torch.arange(40) >= 12).long()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    return model, opt, lambda m: F.cross_entropy(m(ids, torch.ones_like(ids), seg.expand(16, 40)), y)


def lstm():
    """02: ``lstm_minilm``'s biLSTM-max (hidden 64) over static 384-d embeddings, batch 64 of 256 words; AdamW."""
    from helpers.models.zoo import word_model

    g = torch.Generator().manual_seed(1)
    model = word_model("lstm", 20000, dim=384, hidden=64, pooling="max")
    model.embedding.weight.requires_grad_(False)
    ids, y = _ids(g, 20000, 64, 256), torch.randint(0, 2, (64,), generator=g)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-3, weight_decay=0.01)
    return model, opt, lambda m: F.cross_entropy(m(ids), y)


def _tfidf(g, n):
    x = torch.zeros(n, 5000)
    x[torch.arange(n).repeat_interleave(80), torch.randint(0, 5000, (80 * n,), generator=g)] = 0.1
    return x


def tfidf_member():
    """03: one member of an Amazon pool, the 4-layer MLP of width 128 over 5,000 TF-IDF features, batch 8; fused
    Adam."""
    from helpers.models import build_model

    g = torch.Generator().manual_seed(1)
    model = build_model("tfidf_mlp", num_classes=2, seed=0)
    x, y = _tfidf(g, 8), torch.randint(0, 2, (8,), generator=g)
    return model, make_adam(model.parameters(), 1e-3), lambda m: F.cross_entropy(m(x), y)


def dann():
    """03: the Amazon DANN h_0, batch 8 source + 8 target rows, class and domain losses; fused Adam."""
    from helpers.models import build_model

    g = torch.Generator().manual_seed(1)
    model = build_model("dann_mlp", num_classes=2, seed=0)
    x, y = _tfidf(g, 16), torch.randint(0, 2, (8,), generator=g)
    dom = torch.cat([torch.zeros(8, dtype=torch.long), torch.ones(8, dtype=torch.long)])

    def loss(m):
        c, d = m.forward_all(x)
        return F.cross_entropy(c[:8], y) + F.cross_entropy(d, dom)

    return model, make_adam(model.parameters(), 1e-3), loss


CASES = {"01 T5 parser": parser, "01 scratch discriminator": scratch_discriminator, "02 LSTM (MiniLM-init)": lstm,
         "03 TF-IDF MLP member": tfidf_member, "03 DANN h_0": dann}  # fmt: skip


def _steps(model, opt, loss_of, n: int) -> float:
    """CPU seconds of ``n`` training steps."""
    t0 = time.process_time()
    for _ in range(n):
        loss = loss_of(model)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return time.process_time() - t0


def measure(name: str, steps: int, repeats: int) -> dict:
    from torch.profiler import ProfilerActivity, profile

    load = os.getloadavg()[0]
    torch.manual_seed(0)
    model, opt, loss_of = CASES[name]()
    model.train()
    warm = _steps(model, opt, loss_of, 3) / 3  # warm-up: Adam's state allocated, kernels chosen
    steps = max(steps, int(MIN_SECONDS / max(warm, 1e-4)))  # a short step is timed over more of them
    step_s = statistics.median(_steps(model, opt, loss_of, steps) / steps for _ in range(repeats))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _steps(model, opt, loss_of, steps)
    self_us = {e.key: e.self_cpu_time_total for e in prof.key_averages() if e.key.startswith(("aten::", "mkldnn"))}
    total = step_s * steps * 1e6

    def share(keys) -> float:
        return sum(v for k, v in self_us.items() if any(s in k for s in keys)) / total

    kernels = sum(self_us.values()) / total
    matrix, rng, optim = share(MATRIX), share(RNG), share(OPTIMIZER)
    return {"unit": name, "steps": steps, "step_ms": round(step_s * 1e3, 2), "matrix_share": round(matrix, 3),
            "rng_share": round(rng, 3), "optimizer_share": round(optim, 3),
            "other_kernels_share": round(max(0.0, kernels - matrix - rng - optim), 3),
            "outside_kernels_share": round(max(0.0, 1 - kernels), 3), "load_1min": round(load, 2)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="runs/studies")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    rows = []
    for name in CASES:
        rows.append(measure(name, args.steps, args.repeats))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "study_unit_kernels.csv", index=False)
    meta = (f"torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}), {platform.machine()}, "
            f"{os.cpu_count()} CPUs, one torch thread; `steps` per measurement (at least {args.steps} and "
            f"{MIN_SECONDS:g} s) after 3 warm-up steps, `step_ms` the median of {args.repeats}; wall "
            f"{time.perf_counter() - t0:.0f} s. Shares of a step's CPU from one profiled measurement each (see "
            "`scripts/unit_kernels.py`): matrix products and attention, random numbers (dropout), Adam's update, "
            "other torch kernels, and outside the kernels (Python and dispatch: a lower bound, clipped at 0).")
    (out / "study_unit_kernels.md").write_text(f"# Where a training step's CPU goes\n\n{meta}\n\n{to_markdown(df)}\n",
                                               encoding="utf-8")  # fmt: skip
    print(meta)


if __name__ == "__main__":
    main()
