from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.run.results import collect, comparable_records, record, write_summary


def test_record_appends_lines_and_collect_keeps_last(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path))
    record("acc", 0.5, notebook="nb", dataset="a")
    record("acc", np.float32(0.75), notebook="nb", dataset="a")  # re-run of the same cell replaces
    record("acc", 0.25, notebook="nb", dataset="b", paper=0.3, source="paper 1, Table 2")
    lines = (tmp_path / "nb.jsonl").read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["value"] == 0.75
    df = collect(tmp_path)
    assert len(df) == 2
    assert df.set_index("labels").loc["dataset=a", "value"] == 0.75
    assert df.set_index("labels").loc["dataset=b", "paper"] == 0.3


def test_comparable_records_leave_out_times_and_key_by_notebook_name_and_labels(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path))
    record("mae", 0.125, notebook="nb", method="atc", set="b")
    record("mae", float("nan"), notebook="nb", method="doc")
    record("train_seconds", 3.5, notebook="nb", unit="s")
    record("fit_time", 2.0, notebook="nb")
    record("wall_clock", 9.0, notebook="other", unit="min")
    got = comparable_records(tmp_path)
    assert list(got) == [("nb", "mae", '{"method": "atc", "set": "b"}'), ("nb", "mae", '{"method": "doc"}')]
    assert got[("nb", "mae", '{"method": "atc", "set": "b"}')] == 0.125 and np.isnan(got[("nb", "mae", '{"method": "doc"}')])


def test_notebook_name_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path))
    monkeypatch.setenv("HELPERS_NOTEBOOK", "03_mde")
    record("rho", 0.9)
    assert (tmp_path / "03_mde.jsonl").exists()


def test_collect_skips_a_truncated_line(tmp_path):
    (tmp_path / "nb.jsonl").write_text(
        json.dumps(
            {
                "notebook": "nb",
                "name": "x",
                "value": 1.0,
                "unit": "",
                "paper": None,
                "source": None,
                "claim": None,
                "passed": None,
                "profile": "",
                "labels": {},
                "time": 1.0,
            }
        )
        + '\n{"notebook": "nb", "na'
    )
    assert len(collect(tmp_path)) == 1


def test_write_summary_has_paper_difference(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path / "r"))
    record("rho", 0.95, notebook="nb", paper=0.992, passed=False, claim="MDE beats ConfScore")
    csv_path, md_path = write_summary(directory=tmp_path / "fig")
    text = md_path.read_text()
    assert "rho" in text and "fail" in text and "-0.042" in text
    assert csv_path.exists()


@pytest.mark.parametrize("bad", ["high", None, [1.0], True])
def test_record_rejects_non_numbers(bad, tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path))
    with pytest.raises(InputValidationError, match="value"):
        record("x", bad)
