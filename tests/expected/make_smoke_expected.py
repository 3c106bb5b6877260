"""Write the values tests/test_notebooks.py expects from each notebook's smoke run, with bands measured from their
own spread over seeds and CPU-kernel variants (:mod:`helpers.run.bands`).

Two steps, each reviewed as a diff before committing (a moved value is a changed computation, which the commit
message must explain):

1. ``python tests/expected/make_smoke_expected.py spread LABEL=RUN[+RUN] ...`` reads complete smoke runs of
   the current code (``python -m helpers run --profile smoke [-p seed=N]``, each from an empty cache, one per
   variant; ``RUN+RUN``: a notebook re-run alone on the same seed and kernels replaces its records) into
   ``smoke_spread.csv``: one row per record, one column per variant.  The variants used for the
   committed file: seeds 0, 1, 2 natively; seed 0 and 1 with ``ATEN_CPU_CAPABILITY=default`` (torch's scalar
   kernels); seed 0 with that and ``MKL_ENABLE_INSTRUCTIONS=SSE4_2`` (MKL's oldest code path); seed 2 with
   ``MKL_ENABLE_INSTRUCTIONS=AVX``.  Each run's seed, CPU kind, kernel settings and commit go in the header;
   every claim's estimate and verdict in each run go to ``smoke_claims.csv`` (``python -m helpers compare``).
2. ``python tests/expected/make_smoke_expected.py pins`` turns ``smoke_spread.csv`` into ``smoke_metrics.csv``:
   centre ``(max + min) / 2``, half-width ``max(floor(unit), c * (max - min) / 2)`` with ``c`` =
   ``helpers.run.bands.BAND_C``; a value equal in every run is tight (``1e-9 + 1e-6 * |value|``).  One file for
   every kind of CPU; tests/test_notebooks.py checks that it is exactly what this step makes of the spread.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pandas as pd  # noqa: E402

from helpers.claims import collect_claims  # noqa: E402
from helpers.run.bands import BAND_C, DEFAULT_FLOOR, FLOORS, band_table, read_pins, spread_table  # noqa: E402

HERE = Path(__file__).parent
SPREAD = HERE / "smoke_spread.csv"
PINS = HERE / "smoke_metrics.csv"
CLAIMS = HERE / "smoke_claims.csv"  # every smoke claim's estimate and verdict in each spread run (the compare command)
HEADER = f"""\
# Expected smoke values of every notebook, one file for every kind of CPU: value +- abs_tol.
# Made by tests/expected/make_smoke_expected.py pins from smoke_spread.csv (its runs: seeds and CPU-kernel variants).
# value = (max + min) / 2 over the runs; abs_tol = max(floor, c * (max - min) / 2), c = {BAND_C};
# floors by unit: {", ".join(f"{u} {a:g}" for u, (a, _) in FLOORS.items())}, others {DEFAULT_FLOOR[1]:.0%} of |value|.
# kind stable: equal in every run, seeds included, never NaN: abs_tol = 1e-9 + 1e-6 |value|.
# A bool that differs between runs takes either value. free_labels: labels that name a winner, not matched.
# allow_nan: some run gave NaN; required: every run recorded it (else a missing record is not an error).
"""


def spread_runs(spread: pd.DataFrame) -> list[str]:
    """The run columns of a spread table."""
    return [c for c in spread.columns if c not in ("notebook", "name", "labels", "free_labels", "unit", "missing_in", "absent_in")]


def _merged(folders: list[Path], into: Path) -> Path:
    """One results folder of several runs of one variant: a later run's notebooks replace an earlier's (a notebook
    re-run alone after a fix, on the same seed and kernels)."""
    import shutil

    (into / "claims").mkdir(parents=True)
    for folder in folders:
        for f in (folder / "results").glob("*.jsonl"):
            shutil.copy2(f, into / f.name)
            claims = folder / "results" / "claims" / f.name
            if claims.exists():
                shutil.copy2(claims, into / "claims" / f.name)
    return into


def write_spread(pairs: list[str]) -> None:
    import tempfile

    runs = {label: [Path(p) for p in folders.split("+")] for label, folders in (p.split("=", 1) for p in pairs)}
    lines = ["# Smoke records of the current code over seeds and CPU-kernel variants, a column per run:"]
    for label, folders in runs.items():
        metas = [json.loads((f / "run_status.json").read_text()) for f in folders]
        meta = metas[0]["_run"]
        ok = {nb for m in metas for nb, v in m.items() if nb != "_run" and isinstance(v, dict) and v.get("status") == "ok"}
        failed = sorted({nb for m in metas for nb in m if nb != "_run"} - ok)
        commits = "+".join(str(m["_run"].get("code_commit"))[:12] + ("(dirty)" if m["_run"].get("code_dirty") else "")
                           for m in metas)  # fmt: skip
        lines.append(f"# {label}: seed {meta.get('parameters', {}).get('seed', 0)}, cpu_kind {meta.get('cpu_kind')}, "
                     f"kernels {meta.get('kernel_env') or 'native (none set)'}, commit {commits}, "
                     f"failed {', '.join(failed) or 'none'}")  # fmt: skip
    tmp = Path(tempfile.mkdtemp())
    runs = {label: _merged(folders, tmp / label) if len(folders) > 1 else folders[0] / "results"
            for label, folders in runs.items()}  # fmt: skip
    table = spread_table(runs)
    SPREAD.write_text("\n".join(lines) + "\n" + table.to_csv(index=False), encoding="utf-8")
    print(f"{len(table)} records of {table['notebook'].nunique()} notebooks over {len(runs)} runs -> {SPREAD}")
    claims = pd.concat([collect_claims(folder)[["id", "estimate", "low", "high", "verdict"]]
                        .assign(run=label) for label, folder in runs.items()])  # fmt: skip
    claims.to_csv(CLAIMS, index=False)
    print(f"{claims['id'].nunique()} claims over {len(runs)} runs -> {CLAIMS}")


def pins_from_spread(spread: pd.DataFrame) -> pd.DataFrame:
    """The pins table this script writes from a spread table."""
    return band_table(spread, spread_runs(spread))


def write_pins() -> None:
    pins = pins_from_spread(read_pins(SPREAD))
    PINS.write_text(HEADER + pins.to_csv(index=False), encoding="utf-8")
    kinds = pins["kind"].value_counts().to_dict()
    print(f"{len(pins)} expected values ({kinds}) of {pins['notebook'].nunique()} notebooks -> {PINS}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["spread"]:
        write_spread(sys.argv[2:])
    elif sys.argv[1:2] == ["pins"]:
        write_pins()
    else:
        sys.exit(__doc__)
