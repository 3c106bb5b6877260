"""Write the values tests/test_notebooks.py expects from each notebook's smoke run.

Usage: ``python tests/expected/make_smoke_expected.py runs/smoke/<run id> [--cpu-kind]`` after a complete smoke
run of the current code (``python -m helpers run --profile smoke``); review the diff before committing: a moved
value is a changed computation, which the commit message must explain.

The trained smoke models give the same bits on one kind of CPU only (:func:`helpers.run.provenance.cpu_kind`):
another vendor or vector width can take other kernel paths, and training carries their rounding far beyond the
tolerances.  ``smoke_metrics.csv`` holds the values of the machine kind the project was first pinned on;
``--cpu-kind`` writes ``smoke_metrics.<kind>.csv`` for the run's own kind (read from its ``run_status.json``),
which the test then reads on machines of that kind.  Pin a new kind only from a run of unchanged code, after the
existing pins' kind reproduces them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from helpers.run.results import collect  # noqa: E402

#: tolerance by unit: (absolute, relative, reason)
TOLERANCES = {
    "fraction": (0.02, 0.0, "accuracies, AUCs, rates: tiny smoke models trained for 1-4 epochs on a few hundred "
                 "examples; another CPU's float reductions can move them by a point, a broken metric by more"),  # fmt: skip
    "%": (2.0, 0.0, "as fraction, in percent"),
    "pp": (2.0, 0.0, "as fraction, in percentage points"),
    "bool": (0.0, 0.0, "a yes/no reading must not flip"),
}
DEFAULT = (1e-6, 0.10, "scores, correlations, ranks and counts of smoke models: 10 % of the value")
SKIPPED_UNITS = {"s"}  # seconds are the machine's, not the code's


def expected_table(results: Path):
    frame = collect(results)
    frame = frame[~frame["unit"].isin(SKIPPED_UNITS) & frame["value"].map(lambda v: isinstance(v, (int, float)))]
    rows = []
    for r in frame.itertuples():
        abs_tol, rel_tol, reason = TOLERANCES.get(r.unit, DEFAULT)
        rows.append({"notebook": r.notebook, "name": r.name, "labels": r.labels, "unit": r.unit,
                     "value": float(r.value), "abs_tol": abs_tol, "rel_tol": rel_tol, "reason": reason})  # fmt: skip
    import pandas as pd

    return pd.DataFrame(rows).sort_values(["notebook", "name", "labels"], kind="stable")


def pins_file(kind: str | None = None) -> Path:
    """The pins of CPU kind ``kind``: ``smoke_metrics.<kind>.csv`` where it exists, else ``smoke_metrics.csv``."""
    own = Path(__file__).with_name(f"smoke_metrics.{kind}.csv") if kind else None
    return own if own is not None and own.exists() else Path(__file__).with_name("smoke_metrics.csv")


if __name__ == "__main__":
    import json

    run = Path(sys.argv[1])
    table = expected_table(run / "results")
    out = Path(__file__).with_name("smoke_metrics.csv")
    if "--cpu-kind" in sys.argv[2:]:
        kind = json.loads((run / "run_status.json").read_text())["_run"].get("cpu_kind")
        if not kind:
            sys.exit(f"{run}: its run_status.json records no cpu_kind (a run of older code); run the smoke again")
        out = out.with_name(f"smoke_metrics.{kind}.csv")
    table.to_csv(out, index=False)
    print(f"{len(table)} expected values of {table['notebook'].nunique()} notebooks -> {out}")
