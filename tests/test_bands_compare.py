"""Bands measured from a record's own spread (helpers.run.bands) and a run compared with the reference
(helpers.publish.compare, ``python -m helpers compare``), on hand-made run folders."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from helpers.errors import InputValidationError
from helpers.publish.compare import compare_run, format_comparison
from helpers.run.bands import band_table, match_labels, spread_table, values_outside


def _write(folder: Path, records: list[tuple]) -> Path:
    """A results folder of notebook ``nb``: ``(name, value, unit, labels)`` records."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "nb.jsonl", "w") as fh:
        for i, (name, value, unit, labels) in enumerate(records):
            fh.write(json.dumps({"notebook": "nb", "name": name, "value": value, "unit": unit, "labels": labels,
                                 "time": i, "profile": "smoke", "paper": None, "source": None, "claim": None,
                                 "passed": None}) + "\n")  # fmt: skip
    return folder


def _two_runs(tmp_path: Path) -> dict[str, Path]:
    a = _write(tmp_path / "a", [("acc", 0.50, "fraction", {}), ("n_sets", 4, "sets", {}),
                                ("best_mae", 1.0, "pp", {"set": "x", "method": "mde"}), ("rho", 0.8, "Spearman", {}),
                                ("sometimes", 1.0, "fraction", {}), ("gap", float("nan"), "fraction", {}),
                                ("seconds", 9.0, "s", {})])  # fmt: skip
    b = _write(tmp_path / "b", [("acc", 0.60, "fraction", {}), ("n_sets", 4, "sets", {}),
                                ("best_mae", 2.0, "pp", {"set": "x", "method": "atc"}), ("rho", 0.8, "Spearman", {}),
                                ("gap", 0.1, "fraction", {}), ("seconds", 3.0, "s", {})])  # fmt: skip
    return {"a": a, "b": b}


def test_bands_by_hand(tmp_path):
    runs = _two_runs(tmp_path)
    pins = band_table(spread_table(runs), list(runs)).set_index("name")
    assert "seconds" not in pins.index  # times are the machine's
    # acc: centre 0.55, half-range 0.05, 3 x 0.05 = 0.15 > the fraction floor 0.02
    assert pins.loc["acc", "value"] == pytest.approx(0.55) and pins.loc["acc", "abs_tol"] == pytest.approx(0.15)
    assert pins.loc["acc", "kind"] == "trained" and pins.loc["acc", "required"]
    # equal in every run: tight
    assert pins.loc["n_sets", "kind"] == "stable" and pins.loc["n_sets", "abs_tol"] == pytest.approx(1e-9 + 4e-6)
    assert pins.loc["rho", "kind"] == "stable"
    # the winner's label is free: one row, both values banded; pp floor 2.0 > 3 x 0.5
    assert pins.loc["best_mae", "labels"] == "set=x" and pins.loc["best_mae", "free_labels"] == "method"
    assert pins.loc["best_mae", "abs_tol"] == pytest.approx(2.0)
    # recorded by one run only: not required; NaN in one run: allowed
    assert not pins.loc["sometimes", "required"]
    assert pins.loc["gap", "allow_nan"] and pins.loc["gap", "value"] == pytest.approx(0.1)
    # one finite value and a NaN: a draw, not a stable number (the floor, not the tight band)
    assert pins.loc["gap", "kind"] == "trained" and pins.loc["gap", "abs_tol"] == pytest.approx(0.02)


def test_values_outside_names_moved_missing_and_flipped_records(tmp_path):
    runs = _two_runs(tmp_path)
    pins = band_table(spread_table(runs), list(runs))
    same = _write(tmp_path / "c", [("acc", 0.69, "fraction", {}), ("n_sets", 4, "sets", {}),
                                   ("best_mae", 0.5, "pp", {"set": "x", "method": "cot"}), ("rho", 0.8, "Spearman", {}),
                                   ("gap", float("nan"), "fraction", {})])  # fmt: skip
    assert values_outside(pins, same) == []
    moved = _write(tmp_path / "d", [("acc", 0.71, "fraction", {}), ("n_sets", 5, "sets", {}),
                                    ("rho", 0.80001, "Spearman", {}), ("gap", 0.1, "fraction", {})])  # fmt: skip
    out = values_outside(pins, moved)
    assert [line.split(" [")[0] for line in out] == ["acc", "best_mae", "n_sets", "rho"]
    assert "not recorded" in out[1]


def test_only_best_records_have_free_labels():
    assert match_labels("best_mae_pp", "method=mde, set=x") == ("set=x", "method")
    assert match_labels("mae_pp", "method=mde, set=x") == ("method=mde, set=x", "")
    assert match_labels("mae_unseen_pp", "best=MDE, measure=MDE") == ("measure=MDE", "best")


def _claim(cid: str, estimate: float, verdict: str) -> dict:
    return {"paper": "P9", "id": cid, "estimate": estimate, "low": estimate - 0.1, "high": estimate + 0.1,
            "verdict": verdict}  # fmt: skip


def _run_folder(tmp_path: Path, profile: str, claims: list[dict]) -> Path:
    run = tmp_path / "runs" / profile / "20260101-000000"
    (run / "results" / "claims").mkdir(parents=True)
    (run / "run_status.json").write_text(json.dumps({"_run": {"status": "ok"}}))
    (run / "results" / "claims" / "nb.jsonl").write_text("\n".join(json.dumps(c) for c in claims) + "\n")
    return run


def test_compare_a_default_run_with_the_published_seeds(tmp_path):
    """Seeds 0.30 / 0.40 / 0.35: band 0.35 +- max(0.035, 3 x 0.05) = [0.20, 0.50]; a one-run claim is banded by the
    10 % floor around its one estimate; a verdict outside the seeds' is named."""
    figures = tmp_path / "figures"
    figures.mkdir()
    pd.DataFrame({"id": ["a.seeded", "a.one_run"], "run_estimate": [0.3, 2.0],
                  "run_verdict": ["holds", "fails"]}).to_csv(figures / "claims.csv", index=False)  # fmt: skip
    pd.DataFrame({"paper": ["P9"], "id": ["a.seeded"], "verdicts": ["seed 0: holds; seed 1: undecided; seed 2: holds"],
                  "seed 0": ["0.3 [0.2, 0.4]"], "seed 1": ["0.4 [0.3, 0.5]"],
                  "seed 2": ["0.35 [0.2, 0.5]"]}).to_csv(figures / "claims_seeds.csv", index=False)  # fmt: skip
    run = _run_folder(tmp_path, "default", [_claim("a.seeded", 0.49, "undecided"), _claim("a.one_run", 2.3, "fails")])
    table = compare_run(run, root=tmp_path).set_index("id")
    assert table.loc["a.seeded", "band_low"] == pytest.approx(0.20) and table.loc["a.seeded", "within"]
    assert not table.loc["a.one_run", "within"] and "outside the band" in table.loc["a.one_run", "note"]
    assert "no seed spread" in table.loc["a.one_run", "note"]
    run2 = _run_folder(tmp_path / "2", "default", [_claim("a.seeded", 0.51, "fails")])
    row = compare_run(run2, root=tmp_path).iloc[0]
    assert not row["within"] and "verdict not among" in row["note"] and "outside the band" in row["note"]
    assert "0 of 1 claims within" in format_comparison(compare_run(run2, root=tmp_path))


def test_compare_refuses_a_folder_that_is_no_run(tmp_path):
    with pytest.raises(InputValidationError, match="run: expected a run folder"):
        compare_run(tmp_path)


def test_band_arithmetic_is_the_documented_one():
    from helpers.publish.compare import _band

    low, high = _band([1.0, 3.0])
    assert (low, high) == (pytest.approx(2 - 3.0), pytest.approx(2 + 3.0))
    assert all(math.isnan(x) for x in _band([float("nan")]))
