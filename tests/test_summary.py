"""The results summary and the README section generated from it."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from helpers.claims import Claim, Decision, record_claim
from helpers.errors import HelpersError
from helpers.paths import REPO_ROOT
from helpers.publish import summary
from helpers.run.results import record


@pytest.fixture()
def recorded(monkeypatch, tmp_path):
    """Three records of a fake default run and its run_status.json, under the isolated runs folder."""
    from helpers.paths import mark_latest, runs_dir

    run = runs_dir() / "default" / "20260101-000000"
    results = run / "results"
    monkeypatch.setenv("HELPERS_RESULTS", str(results))
    record("rho", 0.95, notebook="05_x", paper=0.992, source="paper 5, Table 1")
    record("gain", 0.2, notebook="03_x", pair="a")
    record("acc", 0.8, notebook="03_x")
    for nb, cid, (est, lo, hi) in [("05_x", "p5.mde_high", (0.1, 0.05, 0.2)), ("03_x", "p3.helps", (0.6, 0.55, 0.7))]:
        record_claim(Claim(id=cid, paper=cid[:2].upper(), statement="s", source=f"paper {cid[1]}, Table 1",
                           quantity="q", threshold=0.5, direction=">", criterion_source="paper", rationale="r",
                           decide=lambda: None), Decision(est, lo, hi), notebook=nb)  # fmt: skip
    status = {
        "03_x": {"notebook": "03_x", "status": "ok", "wall_s": 90.0, "finished_at": "t1", "load_avg": 1.5},
        "05_x": {"notebook": "05_x", "status": "failed", "wall_s": 30.0, "finished_at": "t2", "load_avg": 0.5},
    }
    (run / "run_status.json").write_text(json.dumps(status))
    mark_latest(run)  # the profile's latest complete run, as the runner marks it
    return results


def test_claims_table_shows_each_claim_with_its_interval_and_verdict(recorded):
    from helpers.claims import collect_claims

    claims = summary.claims_table(collect_claims(recorded.parent / "results"))
    assert list(claims["id"]) == ["p3.helps", "p5.mde_high"]
    assert list(claims["verdict"]) == ["holds", "fails"]
    assert list(claims["estimate [95 % interval]"]) == ["0.6 [0.55, 0.7]", "0.1 [0.05, 0.2]"]
    assert list(claims["kind"]) == ["paper", "paper"]


def test_paper_comparison_difference(recorded):
    from helpers.run.results import collect

    comp = summary.paper_comparison(collect(recorded))
    assert len(comp) == 1 and comp.loc[0, "metric"] == "rho"
    assert comp.loc[0, "ours - paper"] == pytest.approx(0.95 - 0.992)


def test_run_times_total_counts_finished_notebooks_only(recorded):
    times = summary.run_times("default")
    assert list(times["notebook"]) == ["03_x", "05_x"]
    text = summary._times_markdown(times)
    assert "**Total: 1.5 min** (90 s) over 2 notebook(s), 1 failed." in text


def test_write_report_and_readme_roundtrip(recorded, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n\n{summary.README_BEGIN}\nold text\n{summary.README_END}\n\nafter\n")
    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "05_x_scatter.png").write_bytes(b"png")
    csv_path, md_path, updated = summary.write_report("default", readme=readme, figures=figs)
    assert updated
    text = readme.read_text()
    assert "old text" not in text and text.startswith("# title") and text.rstrip().endswith("after")
    assert "Paper claims: 2 distinct, 1 hold, 1 fail, 0 undecided" in text
    # per notebook: holds / fails / undecided / underpowered / indistinguishable / untested, and how they were decided
    assert "| `03_x` |" in text and "| 1 / 0 / 0 / 0 / 0 / 0; all decided on one run |" in text
    assert (figs / "claims.csv").exists()
    md = md_path.read_text()
    assert "## Run times" in md and "| 05_x | rho |" in md and "-0.042" in md
    # the README section is a function of the written files alone
    frame, times = summary.load_summary(figs)
    again = summary.render_readme_section(frame, times, claims=summary.load_claims(figs), figures=figs,
                                          readme_dir=tmp_path)  # fmt: skip
    assert again in text
    # idempotent
    before = readme.read_text()
    summary.write_report("default", readme=readme, figures=figs)
    assert readme.read_text() == before


def test_update_readme_without_markers_changes_nothing(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    assert summary.update_readme(readme, "x") is False
    assert readme.read_text() == "no markers\n"


def test_write_report_refuses_an_empty_run(tmp_path):
    with pytest.raises(HelpersError, match="run the notebooks first"):
        summary.write_report("default", readme=None, figures=tmp_path)


def test_smoke_summary_leaves_readme_alone(recorded, tmp_path):
    from helpers.paths import mark_latest, runs_dir

    smoke = runs_dir() / "smoke" / "20260101-000000" / "results"
    smoke.mkdir(parents=True)
    (smoke / "03_x.jsonl").write_text((recorded / "03_x.jsonl").read_text())
    mark_latest(smoke.parent)
    before = (REPO_ROOT / "README.md").read_text()
    out = subprocess.run(
        [sys.executable, "-m", "helpers", "summary", "--profile", "smoke"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "summary.md" in out.stdout and "README" not in out.stdout
    assert (REPO_ROOT / "README.md").read_text() == before


def test_committed_readme_section_is_generated_from_committed_summary():
    """The README's results section equals what `python -m helpers summary` renders from figures/."""
    figs = REPO_ROOT / "figures"
    if not (figs / "summary.csv").exists():
        pytest.skip("no committed summary")
    frame, times = summary.load_summary(figs)
    section = summary.render_readme_section(frame, times, claims=summary.load_claims(figs), figures=figs,
                                            readme_dir=REPO_ROOT)  # fmt: skip
    assert section in (REPO_ROOT / "README.md").read_text(), (
        "README results section is stale or edited by hand: run `python -m helpers publish`"
    )


def test_summary_csv_reads_back_with_verdicts():
    figs = REPO_ROOT / "figures"
    if not (figs / "summary.csv").exists():
        pytest.skip("no committed summary")
    frame, _ = summary.load_summary(figs)
    claims = summary.load_claims(figs)
    assert set(claims["verdict"]) <= {"holds", "fails", "undecided", "underpowered", "indistinguishable", "untested"}
    weak = claims["verdict"] == "underpowered"  # a rule that cannot decide says why, with the interval's verdict kept
    assert claims.loc[weak, "interval_verdict"].isin(["holds", "fails", "undecided"]).all()
    assert claims["source"].astype(str).str.strip().ne("").all()  # no claim without its source
    assert pd.api.types.is_numeric_dtype(frame["value"])


def test_compare_runs_counts_moved_metrics_and_flipped_verdicts():
    import pandas as pd

    from helpers.publish.summary import compare_runs

    def frame(values, passed):
        return pd.DataFrame({
            "notebook": ["01", "01", "01", "02", "02"], "name": ["a", "b", "claim", "c", "wall"],
            "labels": [{"set": "x"}, {"set": "y"}, {}, {}, {}], "value": values, "unit": ["", "", "", "", "s"],
            "passed": passed, "claim": ["", "", "holds", "", ""],
        })  # fmt: skip

    before = frame([1.0, 2.0, 0.6, 5.0, 10.0], [None, None, True, None, None])
    after = frame([1.0, 2.5, 0.4, 5.0, 99.0], [None, None, False, None, None])
    out = compare_runs(before, after).set_index("notebook")
    assert out.loc["01", "metrics"] == 3 and out.loc["01", "moved"] == 2
    assert out.loc["01", "max_abs_change"] == pytest.approx(0.5)
    assert out.loc["01", "max_rel_change"] == pytest.approx(1 / 3)  # 0.2 / 0.6
    assert out.loc["01", "claims"] == 1 and out.loc["01", "verdicts_flipped"] == 1
    assert out.loc["01", "flipped"] == "claim (pass -> fail)"
    assert out.loc["02", "metrics"] == 1 and out.loc["02", "moved"] == 0  # run times (unit s) are left out


def test_the_run_times_block_shows_side_by_side_cpu_the_whole_run_calibration_smoke_and_tests(tmp_path):
    import pandas as pd

    from helpers.publish.times import TIMES_BEGIN, TIMES_END, splice_times

    times = pd.DataFrame({
        "notebook": ["01_a", "02_b", "(whole run)"], "status": ["ok", "ok", "ok"], "wall_s": [600.0, 120.0, 660.0],
        "cpu_s": [540.0, None, 700.0], "finished_at": ["t1", "t2", "t3"], "load_avg": [2.5, 2.0, 2.2],
    })  # fmt: skip
    page = tmp_path / "running.md"
    page.write_text(f"# Run\n\n{TIMES_BEGIN}\nold\n{TIMES_END}\n\nafter\n", encoding="utf-8")
    calibration = {"total_s": 0.38, "machine": "x86_64", "cpus": 2, "load_1min": 0.1}
    reference = {"smoke": {"wall_s": 90.0, "load_avg_mean": 1.2, "finished_at": "s"},
                 "tests": {"wall_s": 800.0, "load_1min": 1.9, "finished_at": "u"}}  # fmt: skip
    assert splice_times(page, times, calibration, reference)
    text = page.read_text(encoding="utf-8")
    assert "old" not in text and text.endswith("after\n")
    assert "| `01_a` | 10.0 min | 9.0 min | 2.5 |" in text and "| `02_b` | 2.0 min |  | 2 |" in text
    assert "**11.0 min wall clock**, 11.7 min of CPU" in text and "0.38 s" in text
    assert "smoke profile" in text and "1.5 min" in text and "`make test`" in text and "13.3 min" in text
    assert not splice_times(page, times, calibration, reference)  # unchanged the second time
    (tmp_path / "none.md").write_text("no markers\n", encoding="utf-8")
    assert not splice_times(tmp_path / "none.md", times, None, None)


def test_a_notebook_s_cpu_note_is_written_under_the_runner_and_read_once(tmp_path, monkeypatch):
    from helpers.parallel import cpu_seconds, note_cpu
    from helpers.run.runner import _read_cpu_note

    monkeypatch.delenv("HELPERS_RESULTS", raising=False)
    note_cpu()  # outside the runner: nothing written
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path))
    monkeypatch.setenv("HELPERS_NOTEBOOK", "07_x")
    sum(i * i for i in range(200_000))
    note_cpu()
    seconds = cpu_seconds()
    cpu = _read_cpu_note(tmp_path / "07_x.cpu.json")
    assert 0 < cpu <= seconds["process_cpu_s"] + seconds["unit_cpu_s"] + 0.1
    assert not (tmp_path / "07_x.cpu.json").exists() and _read_cpu_note(tmp_path / "07_x.cpu.json") is None


def test_units_record_their_cpu_and_the_profile_ranks_them(tmp_path, monkeypatch):
    """map_units writes one line per unit under the runner's results; cpu_profile sums them per notebook."""
    import json

    import helpers.parallel as parallel
    from helpers.parallel import map_units
    from helpers.publish.times import cpu_profile

    monkeypatch.setattr(parallel, "_notebook_executor", lambda: None)  # in process: no cluster for this test
    staging = tmp_path / "staging"
    staging.mkdir()
    monkeypatch.setenv("HELPERS_RESULTS", str(staging))
    monkeypatch.setenv("HELPERS_NOTEBOOK", "01_x")

    def work(n):
        return sum(i * i for i in range(n))

    assert map_units(work, [200_000, 10], names=["big", "small"], desc="squares", progress=False) == [
        work(200_000), work(10)]
    lines = [json.loads(x) for x in (staging / "units" / "01_x.jsonl").read_text().splitlines()]
    assert [x["unit"] for x in lines] == ["big", "small"] and lines[0]["map"] == "squares"
    assert lines[0]["cpu_s"] > lines[1]["cpu_s"] >= 0
    run = tmp_path / "run"
    (run / "results" / "units").mkdir(parents=True)
    (staging / "units" / "01_x.jsonl").rename(run / "results" / "units" / "01_x.jsonl")
    (run / "run_status.json").write_text(json.dumps({"_run": {}, "01_x": {"cpu_s": 10.0, "wall_s": 12.0},
                                                     "02_y": {"cpu_s": 30.0, "wall_s": 20.0}}))  # fmt: skip
    per_nb, top = cpu_profile(run, top=1)
    assert list(per_nb["notebook"]) == ["02_y", "01_x"] and per_nb.loc[0, "share"] == 0.75
    assert per_nb.loc[1, "units"] == 2 and pd.isna(per_nb.loc[0, "units"])
    assert list(top["unit"]) == ["big"] and top.loc[0, "share"] == pytest.approx(lines[0]["cpu_s"] / 40, abs=1e-4)


def test_a_run_records_its_code_version_and_the_cache_it_started_with(tmp_path, monkeypatch):
    import subprocess

    from helpers.run.provenance import cache_state, code_version

    assert code_version(tmp_path) == {"code_commit": None, "code_dirty": None}  # not a git checkout
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.txt").write_text("1")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    clean = code_version(tmp_path)
    assert len(clean["code_commit"]) == 40 and clean["code_dirty"] is False
    (tmp_path / "a.txt").write_text("2")
    assert code_version(tmp_path) == {**clean, "code_dirty": True}
    cache = tmp_path / "cache"
    cache.mkdir()
    assert cache_state(cache) == {"cache_files_at_start": 0, "cache_bytes_at_start": 0}
    (cache / "sub").mkdir()
    (cache / "sub" / "x.npy").write_bytes(b"12345")
    assert cache_state(cache) == {"cache_files_at_start": 1, "cache_bytes_at_start": 5}


def test_the_smoke_times_say_whether_the_cache_was_empty(tmp_path, monkeypatch):
    import json

    import pandas as pd

    from helpers.publish.times import reference_times, render_times
    from helpers.run.profiles import list_notebooks

    every = [p.stem for p in list_notebooks()]

    def smoke_run(run_id: str, files: int | None, wall: float, notebooks=every) -> None:
        folder = tmp_path / "runs" / "smoke" / run_id
        folder.mkdir(parents=True)
        run = {"status": "ok", "notebooks": notebooks, "wall_s": wall, "cpu_s": 2 * wall, "load_avg_mean": 1.5,
               "finished_at": run_id, "cache_files_at_start": files}  # fmt: skip
        (folder / "run_status.json").write_text(json.dumps({"_run": run}))
        (folder / "calibration.json").write_text(json.dumps({"total_s": 0.44}))

    monkeypatch.setenv("HELPERS_RUNS", str(tmp_path / "runs"))
    smoke_run("20260101-000000", None, 60.0)
    assert set(reference_times()) == {"smoke"}  # before runs recorded their cache
    smoke_run("20260101-010000", 0, 300.0)
    smoke_run("20260101-020000", 12, 180.0)
    smoke_run("20260101-030000", 0, 30.0, notebooks=every[:1])  # one notebook alone is not the smoke profile
    ref = reference_times()
    assert set(ref) == {"smoke_cold", "smoke_warm"}
    assert ref["smoke_cold"]["wall_s"] == 300.0 and ref["smoke_warm"]["wall_s"] == 180.0
    assert ref["smoke_cold"]["calibration_s"] == 0.44
    times = pd.DataFrame({"notebook": ["01_a", "(whole run)"], "status": ["ok", "ok"], "wall_s": [60.0, 60.0],
                          "cpu_s": [50.0, 50.0], "finished_at": ["t", "t"], "load_avg": [1.0, 1.0],
                          "cache_files_at_start": [None, 0]})  # fmt: skip
    text = render_times(times, None, ref)
    assert "The whole run from an empty cache: **1.0 min wall clock**" in text
    assert "from an empty cache (a newcomer's first run" in text and ": 5.0 min wall clock, 10.0 min of CPU" in text
    assert "with a warm cache (a second run): 3.0 min wall clock, 6.0 min of CPU (load 1.5, calibration 0.44 s" in text
