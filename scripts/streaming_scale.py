"""Out-of-core estimates at scale: time and peak memory per estimator on Zarr stores of 10^6 to 10^8 logits.

Each store holds ``n x 10`` float32 logits (N(0, 2^2) plus 3 on one random class per row, as scripts/estimators.py)
in blocks of 10^6 rows, written block by block.  Every (size, estimator) is measured in a fresh child process:
``estimate(logits=<store path>)`` (helpers.estimators.streaming, Dask's threaded scheduler, one thread per core),
its wall time, and the child's own peak resident memory (``ru_maxrss``, reported by the child).  With ``--scheduler`` the
same runs go to a Dask cluster by address instead (here: a ``dask scheduler`` and two ``dask worker`` processes
started by this script), and the workers' peak memory is read from them.

Writes figures/study_streaming.{csv,md,png}; ``--quick`` checks the script on small stores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BLOCK = 1_000_000
K = 10
METHODS = ("average_confidence", "atc_mc", "cbpe", "confusion_matrix_shift", "mde_normalized", "nuclear_norm",
           "softmax_corr", "mano")  # fmt: skip
LABELLED = {"atc_mc", "cbpe", "confusion_matrix_shift"}


def _logits(rng: np.random.Generator, n: int) -> np.ndarray:
    z = rng.standard_normal((n, K), dtype=np.float32)
    z *= 2.0
    z[np.arange(n), rng.integers(0, K, n)] += 3.0
    return z


def make_store(path: Path, n: int) -> float:
    """Write ``n`` rows block by block (memory: one block); returns seconds."""
    import zarr

    t = time.perf_counter()
    arr = zarr.create_array(store=str(path), shape=(n, K), chunks=(min(BLOCK, n), K), dtype="float32",
                            overwrite=True)  # fmt: skip
    for i, lo in enumerate(range(0, n, BLOCK)):
        arr[lo : min(lo + BLOCK, n)] = _logits(np.random.default_rng(1000 + i), min(BLOCK, n - lo))
    return time.perf_counter() - t


def child(store: str, method: str, scheduler: str | None) -> None:
    """One measurement, printed as JSON (run in its own process)."""
    from helpers.estimators import get_estimator

    client = None
    if scheduler:
        from distributed import Client

        client = Client(scheduler)
    rng = np.random.default_rng(0)
    ref, labels = _logits(rng, 100_000), rng.integers(0, K, 100_000)
    est = get_estimator(method)
    est.fit(logits=ref, labels=labels) if method in LABELLED else est.fit(logits=ref)
    t = time.perf_counter()
    e = est.measure(logits=store)
    secs = time.perf_counter() - t
    out = {"seconds": secs, "value": e.score if e.score is not None else e.accuracy, "n": e.n,
           "blocks": e.details.get("n_blocks"),
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip
    if client is not None:
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        out["worker_peak_mb"] = max(peaks.values()) / 1024
        client.close()
    print(json.dumps(out))


def measure(store: Path, method: str, scheduler: str | None) -> dict:
    cmd = [sys.executable, __file__, "--child", str(store), method] + (["--scheduler", scheduler] if scheduler else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    out, err = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"{method} on {store}: {err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def _cluster(n_workers: int = 2):
    """A ``dask scheduler`` and ``n_workers`` ``dask worker`` processes (one thread each); returns address, procs."""
    port = 8786 + os.getpid() % 1000
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", str(port),
                               "--dashboard-address", ":0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]  # fmt: skip
    time.sleep(3)
    address = f"tcp://127.0.0.1:{port}"
    for _ in range(n_workers):
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                       "--dashboard-address", ":0"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)}))  # fmt: skip
    time.sleep(5)
    return address, procs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("STORE", "METHOD"))
    ap.add_argument("--scheduler")
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 1e8])
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--cluster-methods", nargs="*", default=["average_confidence", "nuclear_norm", "mano"])
    ap.add_argument("--append", action="store_true", help="add to the rows already in the output CSV")
    ap.add_argument("--stores", default=str(ROOT / "cache" / "streaming_stores"))
    ap.add_argument("--out", default=str(ROOT / "figures"))
    ap.add_argument("--quick", action="store_true", help="stores of 10^5 and 3 x 10^5 rows, to check the script")
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.scheduler)
        return
    import pandas as pd

    sizes = [100_000, 300_000] if args.quick else [int(s) for s in args.sizes]
    stores = Path(args.stores)
    stores.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        path = stores / f"logits_{n}.zarr"
        if args.methods or not path.exists():
            write_s = make_store(path, n)
            print(f"store {n:,} x {K}: {write_s:.1f} s", flush=True)
        for m in args.methods:
            r = measure(path, m, None)
            rows.append({"mode": "local threads", "n": n, "method": m, **r, "load_1min": round(os.getloadavg()[0], 2)})
            print(f"  {m:24s} {r['seconds']:8.2f} s  peak {r['peak_mb']:7.0f} MB", flush=True)
    address, procs = _cluster() if args.cluster_methods else (None, [])
    try:
        for m in args.cluster_methods:
            n = sizes[-1]
            r = measure(stores / f"logits_{n}.zarr", m, address)
            rows.append({"mode": "scheduler + 2 workers", "n": n, "method": m, **r,
                         "load_1min": round(os.getloadavg()[0], 2)})  # fmt: skip
            print(f"  cluster {m:16s} {r['seconds']:8.2f} s  worker peak {r['worker_peak_mb']:7.0f} MB", flush=True)
    finally:
        for p in procs[::-1]:
            p.terminate()
    df = pd.DataFrame(rows)
    out = Path(args.out)
    stem = "study_streaming" + ("_quick" if args.quick else "")
    if args.append and (out / f"{stem}.csv").exists():
        df = pd.concat([pd.read_csv(out / f"{stem}.csv"), df], ignore_index=True)
    df.to_csv(out / f"{stem}.csv", index=False)
    meta = (f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores; float32 logits x {K} classes in Zarr blocks of "
            f"{BLOCK:,} rows; peak = the measuring process's maximum resident memory (MB), with the 100,000-row "
            "reference it fits on; cluster: the workers' maximum.")  # fmt: skip
    cols = ["mode", "n", "method", "seconds", "peak_mb", "worker_peak_mb", "load_1min"]
    table = df[[c for c in cols if c in df]].round(2)
    md = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    md += ["| " + " | ".join("" if pd.isna(v) else f"{v:,}" if isinstance(v, (int, np.integer)) else str(v)
                             for v in r) + " |" for r in table.itertuples(index=False)]  # fmt: skip
    (out / f"{stem}.md").write_text(f"# Out-of-core estimates at scale\n\n{meta}\n\n" + "\n".join(md) + "\n")
    _plot(df[df["mode"] == "local threads"], out / f"{stem}.png")
    print(f"wrote {out / stem}.csv/.md/.png")


def _plot(df, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for m, g in df.groupby("method"):
        ax.loglog(g["n"], g["seconds"], "o-", label=m)
    ax.set_xlabel("rows (x 10 classes, float32, Zarr)")
    ax.set_ylabel("seconds (one estimate)")
    ax.set_title("out-of-core estimate time against set size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
