"""The papermill runner on tiny notebooks built by the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import write_notebook

from helpers.errors import ProfileError, UnknownNameError
from helpers.paths import latest_run_dir
from helpers.run import runner


@pytest.fixture()
def nb_dir(tmp_path, monkeypatch):
    d = tmp_path / "notebooks"
    (d / "profiles").mkdir(parents=True)
    write_notebook(
        d / "01_ok.ipynb",
        "n = 1\nprofile = 'default'",
        [
            "from helpers.run.results import record\nrecord('n_squared', n * n)",
            "assert profile in ('smoke', 'default')",
        ],
    )
    write_notebook(
        d / "02_fails.ipynb", "x = 0", ["y = 1", "raise ValueError('broken on purpose')", "z = 2"]
    )
    (d / "profiles" / "01_ok.yaml").write_text("smoke:\n  n: 3\ndefault: {n: 2}\n")
    monkeypatch.setenv("HELPERS_NOTEBOOKS", str(d))
    return d


def test_runs_all_continues_past_failure_and_reports_cell(nb_dir):
    runs = runner.run_notebooks(profile="smoke", echo=False)
    by_name = {r.notebook: r for r in runs}
    assert by_name["01_ok"].status == "ok"
    assert by_name["02_fails"].status == "failed"
    assert by_name["02_fails"].failed_cell == 3  # "In [3]" of the executed copy: parameters, y = 1, raise
    assert "broken on purpose" in by_name["02_fails"].error
    executed = nbformat.read(by_name["01_ok"].output, as_version=4)
    assert any("n = 3" in c.source for c in executed.cells)  # the profile's parameter was injected
    results = (Path(by_name["01_ok"].output).parent / "results" / "01_ok.jsonl").read_text()
    assert json.loads(results)["value"] == 9.0
    table = runner.format_runs(runs)
    assert "02_fails" in table and "cell 3" in table and "1 failed" in table


def test_resume_skips_finished_notebooks(nb_dir):
    runner.run_notebooks(profile="smoke", only=["01_ok"], echo=False)
    again = runner.run_notebooks(profile="smoke", only=["01_ok"], resume=True, echo=False)
    assert again[0].status == "skipped"
    changed = runner.run_notebooks(
        profile="smoke", only=["01_ok"], parameters={"n": 4}, resume=True, echo=False
    )
    assert changed[0].status == "ok"  # different parameters: run again


def test_undeclared_parameter_is_refused(nb_dir):
    with pytest.raises(ProfileError, match="epochs.*not declared"):
        runner.run_notebooks(profile="smoke", only=["01_ok"], parameters={"epochs": 2}, echo=False)


def test_unknown_profile_and_notebook(nb_dir):
    with pytest.raises(ProfileError, match="unknown profile 'fast'"):
        runner.run_notebooks(profile="fast", echo=False)
    with pytest.raises(UnknownNameError, match="unknown notebook '99_nope'"):
        runner.run_notebooks(profile="smoke", only=["99_nope"], echo=False)


def test_profile_naming_a_missing_notebook(nb_dir):
    (nb_dir / "profiles" / "07_missing.yaml").write_text("default: {a: 1}\n")
    with pytest.raises(ProfileError, match="07_missing"):
        runner.run_notebooks(profile="default", echo=False)


def test_profile_file_with_unknown_profile_key(nb_dir):
    (nb_dir / "profiles" / "01_ok.yaml").write_text("smoke: {n: 2}\nfast: {n: 1}\n")
    with pytest.raises(ProfileError, match="unknown profile.*fast"):
        runner.load_profile("smoke")


def test_cli_exit_codes(nb_dir, capsys):
    """``python -m helpers run``'s exit codes and messages, through its ``main`` in this process (a subprocess
    and a local cluster per call added minutes and tested nothing more; the interpreter path of the publish hint
    is tested with a real subprocess below)."""
    from helpers.__main__ import main

    assert main(["run", "--profile", "smoke", "--only", "01_ok", "--workers", "1"]) == 0
    out = capsys.readouterr()
    assert "01_ok" in out.out and "0 failed" in out.out, out.err
    assert "helpers publish" not in out.out  # a smoke run of one notebook is no reference run
    assert main(["run", "--profile", "smoke", "--only", "01_ok,02_fails", "--workers", "1"]) == 1
    out = capsys.readouterr()
    assert "02_fails" in out.out and "01_ok" in out.out
    assert "helpers publish" not in out.out  # nor is a failed run
    assert main(["run", "--profile", "smok"]) == 2
    err = capsys.readouterr().err
    assert "unknown profile 'smok'" in err and "Traceback" not in err


def test_publish_hint_only_after_a_complete_default_run_with_this_interpreter(tmp_path, monkeypatch):
    d = tmp_path / "notebooks"
    (d / "profiles").mkdir(parents=True)
    write_notebook(d / "01_ok.ipynb", "n = 1\nprofile = 'default'", ["from helpers.run.results import record\nrecord('n', n)"])
    monkeypatch.setenv("HELPERS_NOTEBOOKS", str(d))
    cmd = [sys.executable, "-m", "helpers", "run", "--workers", "1", "--profile"]
    done = subprocess.run([*cmd, "default"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{sys.executable} -m helpers publish --profile default" in done.stdout
    changed = subprocess.run([*cmd, "default", "-p", "n=2"], capture_output=True, text=True)
    assert changed.returncode == 0 and "helpers publish" not in changed.stdout  # overridden parameters


def test_relative_data_dir_is_made_absolute_for_the_kernel(nb_dir, tmp_path, monkeypatch):
    data = tmp_path / "mydata"
    data.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HELPERS_DATA", "mydata")
    write_notebook(
        nb_dir / "03_env.ipynb",
        "expected = ''",
        ["from helpers.paths import data_dir\nassert data_dir().is_dir(), data_dir()"],
    )
    run = runner.run_notebooks(profile="smoke", only=["03_env"], echo=False)[0]
    assert run.status == "ok", run.error


def test_every_run_writes_its_own_folder(nb_dir):
    (first,) = runner.run_notebooks(profile="smoke", only=["01_ok"], echo=False)
    (second,) = runner.run_notebooks(profile="smoke", only=["02_fails"], echo=False)
    a, b = Path(first.output).parent, Path(second.output).parent
    assert a != b and a.parent == b.parent == runner.runs_dir() / "smoke"
    assert set(json.loads((a / "run_status.json").read_text())) == {"01_ok", "_run"}
    status = json.loads((b / "run_status.json").read_text())
    assert set(status) == {"02_fails", "_run"} and status["02_fails"]["status"] == "failed"
    assert status["_run"]["run_id"] == b.name and status["_run"]["label"] == ""
    assert latest_run_dir("smoke") == a  # the failed run is not the profile's latest complete run
    # where it came from: the code's commit (this checkout's, when it is one), the cache it started with, the CPU
    for key in ("code_commit", "code_dirty", "cache_files_at_start", "cache_bytes_at_start", "cpu_kind"):
        assert key in status["_run"], key
    assert isinstance(status["_run"]["cache_files_at_start"], int)
    from helpers.run.provenance import cpu_kind

    assert status["_run"]["cpu_kind"] == cpu_kind() and "-" in cpu_kind() and " " not in cpu_kind()
    first_status = json.loads((a / "run_status.json").read_text())["01_ok"]
    assert first_status["finished_at"] and first_status["load_avg"] is not None


def test_parameters_are_checked_for_every_notebook_before_any_runs(nb_dir):
    # 01_ok declares n, 02_fails does not: nothing may run (01_ok would take its time first otherwise)
    with pytest.raises(ProfileError, match="02_fails.*n.*not declared"):
        runner.run_notebooks(profile="smoke", parameters={"n": 2}, echo=False)
    assert not (runner.runs_dir() / "smoke").exists()  # no run folder either


def test_resume_reruns_when_helpers_code_or_data_change(nb_dir, monkeypatch):
    runner.run_notebooks(profile="smoke", only=["01_ok"], echo=False)
    assert runner.run_notebooks(profile="smoke", only=["01_ok"], resume=True, echo=False)[0].status == "skipped"
    real = runner.inputs_fingerprint()
    monkeypatch.setattr(runner, "inputs_fingerprint", lambda: {**real, "data_sha256": "changed"})
    assert runner.run_notebooks(profile="smoke", only=["01_ok"], resume=True, echo=False)[0].status == "ok"


def test_data_fingerprint_follows_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_DATA", str(tmp_path))
    (tmp_path / "a.csv").write_text("1\n")
    first = runner.inputs_fingerprint()
    (tmp_path / "a.csv").write_text("1\n2\n")
    second = runner.inputs_fingerprint()
    assert first["code_sha256"] == second["code_sha256"] and first["data_sha256"] != second["data_sha256"]


def test_ctrl_c_prints_one_line_with_the_resume_command(monkeypatch, capsys):
    from helpers import __main__ as cli

    def interrupted(**kwargs):
        runner.CURRENT.update(notebook="01_ok")
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_notebooks", interrupted)
    assert cli.main(["run", "--profile", "smoke"]) == 130
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "01_ok" in err and "--profile smoke --resume" in err
    runner.CURRENT.clear()


def test_relative_path_parameters_resolve_against_the_callers_directory(tmp_path, monkeypatch):
    from helpers.__main__ import _absolute_paths

    (tmp_path / "mine.csv").write_text("text,label,split\n")
    monkeypatch.chdir(tmp_path)
    out = _absolute_paths(
        {"byod_path": "mine.csv", "extra_test_sets": ["a.tsv", "sub/b.conllu"], "label": "mine.csv", "k": 3,
         "model": "embsum", "url": "https://x/y.csv"}
    )  # fmt: skip
    assert out["byod_path"] == str(tmp_path / "mine.csv")
    assert out["extra_test_sets"] == [str(tmp_path / "a.tsv"), str(tmp_path / "sub" / "b.conllu")]
    assert out["label"] == str(tmp_path / "mine.csv")  # an existing file, whatever the parameter's name
    assert out["k"] == 3 and out["model"] == "embsum" and out["url"] == "https://x/y.csv"


def test_kernels_use_ipc_on_posix_so_no_tcp_warning(nb_dir, capfd):
    import os

    runner.run_notebooks(profile="smoke", only=["01_ok"], echo=False)
    err = capfd.readouterr().err
    if os.name == "posix":
        assert "without encryption" not in err


def test_executed_notebooks_show_their_figures_inline(nb_dir, monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)  # as for a user (the tests' Agg would hide them)
    write_notebook(nb_dir / "04_plot.ipynb", "x = 1", ["import matplotlib.pyplot as plt\nplt.plot([0, 1], [0, x])"])
    (run,) = runner.run_notebooks(profile="smoke", only=["04_plot"], echo=False)
    assert run.status == "ok", run.error
    outputs = [o for c in nbformat.read(run.output, as_version=4).cells if c.cell_type == "code" for o in c.outputs]
    assert any("image/png" in o.get("data", {}) for o in outputs)


def test_a_fractional_cell_timeout_reaches_papermill_as_whole_seconds(tmp_path):
    """papermill refuses a float timeout (TraitError before any cell runs, as the first GPU check met with a
    budget divided by the number of notebooks): it is rounded up."""
    nb = write_notebook(tmp_path / "t.ipynb", "n = 1", ["x = n + 1"])
    run = runner.run_notebook(nb, profile="smoke", output_dir=tmp_path / "out", timeout=34.29)
    assert run.status == "ok", run.error
