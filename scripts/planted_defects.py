"""Does the smoke check still catch bugs with bands wide enough for every CPU? (a script, not a test):
``python scripts/planted_defects.py [--out figures]``.

Runs the smoke profile of notebooks 00, 05 and 07 once from an empty cache (07 reads 05's predictions), then each
defect of ``tests/planted_defects.py`` alone, planted into the kernel on a copy of that warm cache, and compares the
planted run's records with the bands of ``tests/expected/smoke_metrics.csv`` as the smoke test does.  Writes
``study_planted_defects.{csv,md}``: per defect, the records outside their bands (of the notebook's pinned records)
and the first of them; ``caught`` is whether any moved; for a defect the bands cannot see
(``SMOKE_MISSES``), whether its hand-computed unit test fails with it planted (the tests assert both).  Wall time on 2
CPU cores: a few minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import pandas as pd  # noqa: E402
from planted_defects import PLANTS, SMOKE_MISSES, run_planted, unit_tests_fail  # noqa: E402

from helpers.run import runner  # noqa: E402
from helpers.run.bands import read_pins, values_outside  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "runs" / "studies"))
    args = parser.parse_args()
    pins = read_pins(ROOT / "tests/expected/smoke_metrics.csv")
    data = Path(os.environ["HELPERS_DATA"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ.update(HELPERS_CACHE=str(base / "cache"), HELPERS_RUNS=str(base / "runs"),
                          HELPERS_FIGURES=str(base / "figures"))  # fmt: skip
        clean = runner.run_notebooks(profile="smoke", only=["00_example", "05_mde", "07_monitoring"], workers=1,
                                     output_dir=base / "clean", echo=False)  # fmt: skip
        assert all(r.status == "ok" for r in clean), [(r.notebook, r.error) for r in clean]
        for nb in ("00_example", "07_monitoring"):
            outside = values_outside(pins, base / "clean" / "results", nb)
            rows.append({"defect": "none (the clean run)", "notebook": nb, "pinned": int((pins.notebook == nb).sum()),
                         "outside_band": len(outside), "caught": bool(outside),
                         "first_outside": outside[0] if outside else "", "load_1min": os.getloadavg()[0]})  # fmt: skip
        for plant in sorted(PLANTS):
            notebook, defect, _ = PLANTS[plant]
            start = time.time()
            run, results = run_planted(plant, cache=base / "cache", data=data, work=base / plant)
            outside = values_outside(pins, results, notebook) if run.status == "ok" else [f"failed: {run.error}"]
            unit = SMOKE_MISSES.get(plant)
            rows.append({"defect": f"{plant}: {defect}", "notebook": notebook,
                         "pinned": int((pins.notebook == notebook).sum()), "outside_band": len(outside),
                         "caught": bool(outside), "first_outside": outside[0] if outside else "",
                         "unit_test_fails": f"{unit}: {unit_tests_fail(plant, unit, base / (plant + '-unit'))}"
                         if unit else "", "load_1min": os.getloadavg()[0],
                         "seconds": round(time.time() - start, 1)})  # fmt: skip
    table = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "study_planted_defects.csv", index=False)
    planted = table[table.defect != "none (the clean run)"]
    text = (f"# Planted defects against the smoke bands\n\n{to_markdown(table.astype(object).fillna(''))}\n\n"
            f"Caught by the smoke comparison: {int(planted.caught.sum())} of {len(planted)} planted defects; the "
            f"others by the unit test named beside them (unit_test_fails); the clean runs' records "
            f"outside their bands: {int(table[table.defect.str.startswith('none')].outside_band.sum())}.\n")  # fmt: skip
    (out / "study_planted_defects.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
