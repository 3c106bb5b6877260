"""A user's run never writes the committed results; every run writes its own folder and a failed or overridden run
never replaces the last good one; one runner per run folder; publishing is the explicit step that refreshes
figures/ and the README."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import write_notebook

from helpers.errors import HelpersError, ProfileError
from helpers.paths import REPO_ROOT, figures_dir, latest_run_dir, published_dir, run_dirs
from helpers.publish import publish
from helpers.run import runner


@pytest.fixture()
def nb_dir(tmp_path, monkeypatch):
    d = tmp_path / "notebooks"
    (d / "profiles").mkdir(parents=True)
    write_notebook(
        d / "07_toy.ipynb",
        "n = 2\nfail = False\nprofile = 'smoke'",
        [
            "import pandas as pd\nfrom helpers.plotting import save_table\nfrom helpers.run.results import record",
            "save_table(pd.DataFrame({'n': [n]}), '07_toy_table')\nprint('n squared:', n * n)\nrecord('n_squared', n * n)",
            "assert not fail, 'failing on purpose'",
        ],
    )
    monkeypatch.setenv("HELPERS_NOTEBOOKS", str(d))
    monkeypatch.delenv("HELPERS_FIGURES")  # as for a user: no figures folder configured
    return d


def _tracked_digest() -> str:
    h = hashlib.sha256()
    for f in sorted(published_dir().iterdir()):
        if f.is_file():
            h.update(f.name.encode() + f.read_bytes())
    h.update((REPO_ROOT / "README.md").read_bytes())
    return h.hexdigest()


def test_figures_default_to_the_run_folder(monkeypatch):
    monkeypatch.delenv("HELPERS_FIGURES")
    monkeypatch.delenv("HELPERS_PROFILE", raising=False)
    assert figures_dir() == runner.runs_dir() / "interactive" / "figures"
    assert published_dir() == REPO_ROOT / "figures" != figures_dir()


def test_a_run_and_its_summary_leave_the_committed_results_alone(nb_dir):
    from helpers.__main__ import main

    before = _tracked_digest()
    assert main(["run", "--profile", "smoke"]) == 0
    assert _tracked_digest() == before
    run_figs = latest_run_dir("smoke") / "figures"
    assert (run_figs / "07_toy_table.csv").exists() and (run_figs / "summary.md").exists()
    assert not (published_dir() / "07_toy_table.csv").exists()
    if (REPO_ROOT / ".git").exists():
        out = subprocess.run(["git", "status", "--porcelain", "figures", "README.md"], cwd=REPO_ROOT,
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
        assert "07_toy" not in out


def _folder_digest(folder) -> dict[str, str]:
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}  # fmt: skip


def test_runs_never_mix_a_good_run_then_user_data_then_a_failing_run(nb_dir):
    from helpers.__main__ import main

    assert main(["run", "--profile", "smoke", "--workers", "1"]) == 0
    (first,) = run_dirs("smoke")
    assert latest_run_dir("smoke") == first
    kept = _folder_digest(first)
    assert main(["run", "--profile", "smoke", "--workers", "1", "-p", "n=3"]) == 0  # like a byod run: -p overrides
    assert main(["run", "--profile", "smoke", "--workers", "1", "-p", "fail=true"]) == 1
    folders = run_dirs("smoke")
    assert len(folders) == 3 and folders[0] == first
    # two runs started within one second get "-custom" and "-custom-2": never the same folder
    assert all(re.search(r"-custom(-\d+)?$", f.name) for f in folders[1:]), [f.name for f in folders]
    assert _folder_digest(first) == kept  # the first run intact: records, figures, executed notebook, status
    assert latest_run_dir("smoke") == first  # overridden and failed runs are never the profile's reference
    status = json.loads((folders[1] / "run_status.json").read_text())["_run"]
    assert status["label"] == "custom" and status["parameters"] == {"n": 3}
    with pytest.raises(HelpersError, match="labelled 'custom'"):
        publish("smoke", run_folder=folders[1].name, destination=folders[1] / "pub", readme=None)


def test_a_failed_notebook_resumed_in_its_folder_keeps_the_last_good_records(nb_dir):
    from helpers.publish.summary import load_summary, render_summary, write_report
    from helpers.run.results import collect

    (ok,) = runner.run_notebooks(profile="smoke", echo=False)
    folder = latest_run_dir("smoke")
    results = folder / "results"
    (nb_dir / "profiles" / "07_toy.yaml").write_text("smoke: {n: 5, fail: true}\n")  # the profile now fails
    (failed,) = runner.run_notebooks(profile="smoke", resume=True, echo=False)  # same folder, inputs changed
    assert failed.status == "failed" and Path(failed.output).parent == folder
    kept = collect(results)
    assert kept.loc[kept.name == "n_squared", "value"].item() == 4.0  # the good run's record
    assert "25" in (results / "failed" / "07_toy.jsonl").read_text()  # the failed run's, set apart
    figs = folder / "figures"
    write_report("smoke", readme=None, figures=figs, run_folder=folder)
    frame, times = load_summary(figs)
    assert "**Stale:** the latest run of 07_toy failed" in render_summary(frame, times, profile="smoke")
    with pytest.raises(HelpersError, match="stale"):
        publish("smoke", run_folder=folder, destination=figs.parent / "published", readme=None)


def test_a_second_runner_on_the_same_folder_is_refused(nb_dir):
    runner.run_notebooks(profile="smoke", echo=False)
    folder = latest_run_dir("smoke")
    with runner.RunFolderLock(folder):
        with pytest.raises(ProfileError, match=f"in use by another runner \\(pid {os.getpid()}"):
            runner.run_notebooks(profile="smoke", resume=True, echo=False)  # --resume continues this folder
    assert not (folder / ".lock").exists()
    # a lock left by a process that is gone is taken over
    holder = {
        "pid": 999_999_999,
        "host": socket.gethostname(),
        "since": "x",
    }  # above any pid_max: not running
    (folder / ".lock").write_text(json.dumps(holder))
    (nb_dir / "profiles" / "07_toy.yaml").write_text("smoke: {n: 4}\n")  # changed inputs: resume re-runs it
    (run,) = runner.run_notebooks(profile="smoke", resume=True, echo=False)
    assert run.status == "ok" and not (folder / ".lock").exists()


def test_publish_splices_one_notebook_into_the_reference_results(nb_dir, tmp_path):
    (nb_dir / "profiles" / "07_toy.yaml").write_text("default: {n: 3}\n")
    runner.run_notebooks(profile="default", echo=False)
    dest = tmp_path / "published"
    dest.mkdir()
    pd.DataFrame(
        {"notebook": ["00_other"], "name": ["m"], "value": [1.0], "paper": [None], "unit": [""], "source": [""],
         "claim": [""], "passed": [""], "profile": ["default"], "labels": [""]}
    ).to_csv(dest / "summary.csv", index=False)  # fmt: skip
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:begin -->\nSTALE SECTION\n<!-- results:end -->\n")
    assert publish("default", only=["07"], destination=dest, readme=readme) == ["07_toy"]
    summary = pd.read_csv(dest / "summary.csv")
    assert set(summary.notebook) == {"00_other", "07_toy"}
    assert summary.loc[summary.notebook == "07_toy", "value"].item() == 9.0
    assert (dest / "07_toy_table.csv").exists() and (dest / "summary.md").exists()
    assert "STALE SECTION" not in readme.read_text() and "07_toy" in readme.read_text()
    with pytest.raises(HelpersError, match="none of the run's notebooks"):
        publish("default", only=["99"], destination=dest, readme=None)


def test_publish_can_keep_the_published_run_times(nb_dir, tmp_path):
    (nb_dir / "profiles" / "07_toy.yaml").write_text("default: {n: 3}\n")
    runner.run_notebooks(profile="default", echo=False)
    dest = tmp_path / "published"
    dest.mkdir()
    pd.DataFrame(
        {"notebook": ["07_toy"], "status": ["ok"], "wall_s": [900.0], "finished_at": ["cold"], "load_avg": [1.0]}
    ).to_csv(dest / "run_times.csv", index=False)
    cols = {"paper": [None, None], "source": ["", ""], "claim": ["", ""], "passed": ["", ""], "profile": ["default"] * 2,
            "labels": ["", ""]}  # fmt: skip
    pd.DataFrame(
        {"notebook": ["07_toy"] * 2, "name": ["n_squared", "wall_time_s"], "value": [1.0, 900.0], "unit": ["", "s"], **cols}
    ).to_csv(dest / "summary.csv", index=False)  # a published cold run: a metric and its wall time
    publish("default", only=["07"], destination=dest, readme=None, keep_run_times=True)
    kept = pd.read_csv(dest / "run_times.csv")
    assert kept.wall_s.tolist() == [900.0] and kept.finished_at.tolist() == ["cold"]
    summary = pd.read_csv(dest / "summary.csv").set_index("name")
    assert summary.loc["n_squared", "value"] == 9.0  # the records are the run's ...
    assert summary.loc["wall_time_s", "value"] == 900.0  # ... but its seconds stay the published cold run's
    publish("default", only=["07"], destination=dest, readme=None)
    assert pd.read_csv(dest / "run_times.csv").finished_at.tolist() != ["cold"]


def test_publish_splices_the_reports_and_publishes_the_executed_notebook(nb_dir, tmp_path):
    (nb_dir / "profiles" / "07_toy.yaml").write_text("default: {n: 3}\n")
    runner.run_notebooks(profile="default", echo=False)
    docs = tmp_path / "docs"
    (docs / "reproductions").mkdir(parents=True)
    report = docs / "reproductions" / "toy.md"
    report.write_text("# Toy\n\nprose kept\n\n<!-- numbers:begin 07_toy -->\nOLD NUMBERS\n<!-- numbers:end -->\n\nmore prose\n")
    publish("default", destination=tmp_path / "published", readme=None, docs=docs)
    text = report.read_text()
    assert "OLD NUMBERS" not in text and "prose kept" in text and "more prose" in text
    assert "Run `ok` in" in text and "<!-- numbers:end -->" in text
    nb = json.loads((docs / "notebooks" / "07_toy.ipynb").read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert outputs and nb["metadata"]["helpers"]["published"]["run_id"] == latest_run_dir("default").name


def test_published_notebooks_lose_widgets_progress_bars_and_warnings(tmp_path):
    from helpers.publish.reports import publish_notebook

    keep = {"output_type": "stream", "name": "stdout", "text": ["accuracy 0.81\n"]}
    bar = {"output_type": "stream", "name": "stderr", "text": ["fit:  40%|####      | 4/10 [00:01<00:01, 3.1it/s]\r"]}
    widget = {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "x"}},
              "metadata": {}}  # fmt: skip
    warning = {"output_type": "stream", "name": "stderr", "text": ["UserWarning: something real\n"]}
    nb = {"cells": [{"cell_type": "code", "source": "x", "metadata": {}, "outputs": [keep, bar, widget, warning]}],
          "metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    src = tmp_path / "in.ipynb"
    src.write_text(json.dumps(nb))
    out = json.loads(publish_notebook(src, tmp_path / "out.ipynb", run_id="r1", headline=0.5).read_text())
    assert out["cells"][0]["outputs"] == [keep] and "widgets" not in out["metadata"]
    assert warning  # a warning's place is the run's log, not the published reading
    assert out["metadata"]["helpers"]["published"] == {"run_id": "r1", "headline": 0.5}


def test_resume_continues_the_last_run_of_the_same_kind(nb_dir):
    (nb_dir / "profiles" / "07_toy.yaml").write_text("smoke: {n: 2}\n")
    (own,) = runner.run_notebooks(profile="smoke", echo=False)
    runner.run_notebooks(profile="smoke", parameters={"n": 3}, echo=False)  # a labelled run after it
    (again,) = runner.run_notebooks(profile="smoke", resume=True, echo=False)
    assert again.status == "skipped" and Path(again.output).parent == Path(own.output).parent
    assert json.loads((Path(own.output).parent / "calibration.json").read_text())["total_s"] > 0  # every run is timed
