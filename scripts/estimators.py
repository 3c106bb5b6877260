"""Benchmark of the label-free estimators (a script, not a test): ``python scripts/estimators.py``.

Times ``estimate`` of every registered estimator on float32 logits of shape 1,000,000 x 10 and 100,000 x 1,000
(fitted once on a 100,000-row reference of the same K), COT's cost against n (and K), and the bootstrap's cost
(``interval=True`` minus the point estimate, n_boot = 200) against n.  Medians over repeats (5 for estimates,
3 for bootstrap runs, whose single runs take seconds).  Writes ``figures/study_estimators.csv`` and ``.md``.
Wall time on 2 CPU cores: about 6-8 minutes; peak memory about 3 GB.
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

from helpers.estimators import get_estimator, list_estimators  # noqa: E402

FIT_REFERENCE = {"atc_mc", "atc_ne", "doc", "cbpe", "confusion_matrix_shift", "cott"}
FIT_LABELS_ONLY = {"cot"}
FIT_FEATURES = {"frechet"}


def _logits(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """float32 logits with a planted signal, so predictions are neither uniform nor one-hot."""
    z = rng.standard_normal((n, k), dtype=np.float32)
    z *= 2.0
    z[np.arange(n), rng.integers(0, k, n)] += 3.0
    return z


def _fit(name: str, est, ref: np.ndarray, labels: np.ndarray):
    if name in FIT_REFERENCE:
        est.fit(logits=ref, labels=labels)
    elif name in FIT_LABELS_ONLY:
        est.fit(labels=labels, logits=ref)
    elif name in FIT_FEATURES:
        est.fit(logits=ref)
    return est


#: width of the penultimate features given to Dispersion (a small CNN's; the ResNets' is 64 too)
FEATURE_DIM = 64


def _target(name: str, z: np.ndarray) -> dict:
    kw = {"logits": z}
    if name == "agreement":
        kw["other_logits"] = z[::-1]  # a second "model": same outputs in another order (a view, no copy)
    if name == "dispersion":  # penultimate features of the same rows
        kw["features"] = np.random.default_rng(1).standard_normal((z.shape[0], FEATURE_DIM), dtype=np.float32)
    return kw


def _time(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _threads() -> int:
    """Threads of the BLAS behind numpy (threadpoolctl, installed with scikit-learn); os.cpu_count() if unknown."""
    try:
        from threadpoolctl import threadpool_info

        return max(
            (p.get("num_threads", 0) for p in threadpool_info() if p.get("user_api") == "blas"), default=0
        )
    except ImportError:  # pragma: no cover
        return os.cpu_count() or 0


def _row(section: str, estimator: str, n: int, k: int, times: list[float], **extra) -> dict:
    return {
        "section": section,
        "estimator": estimator,
        "n": n,
        "K": k,
        "repeats": len(times),
        "median_s": statistics.median(times),
        "min_s": min(times),
        "load_1min": round(
            os.getloadavg()[0], 2
        ),  # right after the repeats: timings on 2 shared cores depend on it
        "blas_threads": _threads(),
        **extra,
    }


def _load_note(part: pd.DataFrame) -> str:
    return (
        f"1-minute load average after each measurement: {part.load_1min.min():.2f}-{part.load_1min.max():.2f}; "
        f"BLAS threads: {int(part.blas_threads.iloc[0])}."
    )


def bench_estimates(rows: list[dict], rng, n: int, k: int, n_ref: int, repeats: int, only=None) -> None:
    ref = _logits(rng, n_ref, k)
    labels = rng.integers(0, k, n_ref)
    z = _logits(rng, n, k)
    for name in list_estimators():
        if only and name not in only:
            continue
        if name == "cot" or (name == "cott" and k > 100):
            continue  # measured separately (an LP solve, not closed form); COTT's N x K plan at K = 1,000 likewise
        if name.startswith("stacked"):
            continue  # learns from labelled shifted sets; its estimate costs the sum of its base estimators
        est = get_estimator(name)
        t0 = time.perf_counter()
        _fit(name, est, ref, labels)
        fit_s = time.perf_counter() - t0
        target = _target(name, z)  # made once: the features' draw is not the estimator's cost
        times = _time(lambda est=est, target=target: est.measure(**target), repeats)
        rows.append(_row("estimate", name, n, k, times, fit_s=fit_s))
        print(f"  estimate {name:26s} n={n:>9,} K={k:>5}  median {rows[-1]['median_s']:.3f}s", flush=True)


def bench_cot(rows: list[dict], rng) -> None:
    for k, ns in ((10, (1_000, 10_000, 100_000, 1_000_000)), (1000, (1_000, 10_000))):
        ref_labels = rng.integers(0, k, 100_000)
        for n in ns:
            z = _logits(rng, n, k)
            est = get_estimator("cot").fit(labels=ref_labels)
            repeats = 5 if n * k <= 10_000_000 else 3
            res = est.estimate(logits=z)
            times = _time(lambda est=est, z=z: est.estimate(logits=z), repeats)
            if not res.details["exact"]:
                mode = f"batched x{res.details['n_batches']}"
            elif res.details.get("solver") == "certified":
                mode = f"exact, certified ({res.details['simplex_rows']:,} rows by simplex)"
            else:
                mode = "exact (simplex)"
            rows.append(_row("cot_scaling", "cot", n, k, times, notes=mode))
            print(f"  cot n={n:>9,} K={k:>5} {mode:12s} median {rows[-1]['median_s']:.3f}s", flush=True)
    # accuracy of the batched solve against the exact one at n = 100k, K = 10
    z = _logits(rng, 100_000, 10)
    lab = rng.integers(0, 10, 100_000)
    exact = get_estimator("cot", batch_size=None).fit(labels=lab).estimate(logits=z).accuracy
    batched = get_estimator("cot", batch_size=20_000).fit(labels=lab).estimate(logits=z).accuracy
    rows.append(
        {
            "section": "cot_batch_gap",
            "estimator": "cot",
            "n": 100_000,
            "K": 10,
            "notes": f"exact acc {exact:.6f}, batches of 20k {batched:.6f}, gap {exact - batched:.2e}",
        }
    )


def bench_bootstrap(rows: list[dict], rng, n_boot: int, repeats: int) -> None:
    k = 10
    ref = _logits(rng, 100_000, k)
    labels = rng.integers(0, k, 100_000)
    plan = {
        "average_confidence": (10_000, 100_000, 1_000_000),
        "atc_mc": (10_000, 100_000, 1_000_000),
        "mde": (10_000, 100_000, 1_000_000),
        "nuclear_norm": (10_000, 100_000, 1_000_000),
        "frechet": (10_000, 100_000, 1_000_000),
        "cot": (1_000, 10_000),
    }
    for name, ns in plan.items():
        for n in ns:
            z = _logits(rng, n, k)
            est = _fit(name, get_estimator(name, n_boot=n_boot), ref, labels)
            point = statistics.median(
                _time(lambda est=est, z=z, name=name: est.measure(**_target(name, z)), repeats)
            )
            with_int = _time(
                lambda est=est, z=z, name=name: est.measure(**_target(name, z), interval=True), repeats
            )
            boot = [t - point for t in with_int]
            rows.append(
                _row("bootstrap", name, n, k, boot, n_boot=n_boot, notes="interval=True minus point estimate")
            )
            print(f"  bootstrap {name:20s} n={n:>9,} median {rows[-1]['median_s']:.3f}s", flush=True)


def _md_table(df: pd.DataFrame, index: bool = True) -> str:
    """Minimal Markdown table (no optional dependency)."""
    d = df.reset_index() if index else df

    def fmt(v) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return f"{v:,}" if isinstance(v, (int, np.integer)) else str(v)

    head = "| " + " | ".join(map(str, d.columns)) + " |"
    sep = "|" + "|".join("---" for _ in d.columns) + "|"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in d.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def _markdown(df: pd.DataFrame, meta: str) -> str:
    lines = ["# Estimator benchmark", "", meta, ""]
    est = df[df.section == "estimate"]
    if len(est):
        wide = est.pivot_table(index="estimator", columns=["n", "K"], values="median_s")
        wide.columns = [f"{n:,} x {k:,} (s)" for n, k in wide.columns]
        fit = est.pivot_table(index="estimator", columns=["n", "K"], values="fit_s")
        fit.columns = [f"fit on 100,000 x {k:,} ref (s)" for n, k in fit.columns]
        lines += ["## `estimate` on float32 logits (median of 5)", "", _load_note(est), "", _md_table(wide.join(fit)),
                  ""]  # fmt: skip
    cot = df[df.section == "cot_scaling"]
    if len(cot):
        lines += [
            "## COT cost vs n (median)",
            "",
            _load_note(cot),
            "",
            _md_table(cot[["n", "K", "repeats", "median_s", "load_1min", "notes"]], index=False),
            "",
        ]
    gap = df[df.section == "cot_batch_gap"]
    if len(gap):
        lines += ["COT batching check: " + "; ".join(gap.notes), ""]
    boot = df[df.section == "bootstrap"]
    if len(boot):
        wide = boot.pivot_table(index="estimator", columns="n", values="median_s")
        wide.columns = [f"n={n:,} (s)" for n in wide.columns]
        load = boot.pivot_table(index="estimator", columns="n", values="load_1min")
        load.columns = [f"load n={n:,}" for n in load.columns]
        wide = wide.join(load)
        lines += [
            f"## Bootstrap cost (n_boot = {int(boot.n_boot.iloc[0])}, K = 10; interval=True minus point; median of "
            f"{int(boot.repeats.iloc[0])})",
            "",
            _load_note(boot),
            "",
            _md_table(wide),
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "figures"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--boot-repeats", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="small shapes, for checking the script itself")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="re-measure these estimators' estimate rows only, replacing theirs in the existing table")  # fmt: skip
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows: list[dict] = []
    t0 = time.perf_counter()
    if args.quick:
        bench_estimates(rows, rng, 10_000, 10, 5_000, 2)
    else:
        print("estimate, 1,000,000 x 10", flush=True)
        bench_estimates(rows, rng, 1_000_000, 10, 100_000, args.repeats, args.only)
        print("estimate, 100,000 x 1,000", flush=True)
        bench_estimates(rows, rng, 100_000, 1000, 100_000, args.repeats, args.only)
    if args.only:  # splice the re-measured rows into the committed table
        old = pd.read_csv(Path(args.out) / "study_estimators.csv")
        keep = old[~((old.section == "estimate") & old.estimator.isin(args.only))]
        rows = keep.to_dict("records") + rows
    elif not args.quick:
        print("COT scaling", flush=True)
        bench_cot(rows, rng)
        print("bootstrap", flush=True)
        bench_bootstrap(rows, rng, args.n_boot, args.boot_repeats)
    wall = time.perf_counter() - t0
    df = pd.DataFrame(rows)
    meta = (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, numpy "
        f"{np.__version__}; total wall time {wall:.0f} s" + (f" (re-measured: {', '.join(args.only)})" if args.only else "")
        + ".  Inputs: float32 logits (N(0, 2^2) plus 3 on one random "
        "class per row); references of 100,000 rows with the same K."
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "study_estimators" + ("_quick" if args.quick else "")
    df.to_csv(out / f"{stem}.csv", index=False)
    (out / f"{stem}.md").write_text(_markdown(df, meta) + "\n")
    print(f"wrote {out / stem}.csv/.md in {wall:.0f} s")


if __name__ == "__main__":
    main()
