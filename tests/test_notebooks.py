"""Every notebook executes through papermill on the `smoke` profile (the harness a user's batch run uses)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from helpers.claims import VERDICTS
from helpers.run import runner
from helpers.run.runner import list_notebooks, load_profile

NOTEBOOKS = [p.stem for p in list_notebooks()]
EXPECTED = Path(__file__).with_name("expected") / "smoke_metrics.csv"
EMBEDDED_ONLY = {"00_example"}  # notebooks that need no file from the data directory
#: data files a notebook's smoke profile must not need (hidden from its smoke test): 06's smoke leaves out the
#: cifar-jpeg block, so a machine without the 28 MB JPEG-decoded CIFAR-10 set (an offline GPU check) can run it
NOT_NEEDED_IN_SMOKE = {"06_benchmark": ["vision/cifar10_test_jpeg.npz"]}


def _data_present() -> bool:
    from helpers.data.manifest import FILES
    from helpers.paths import data_dir

    root = data_dir()
    return all((root / rel).is_file() for rel in FILES)


def _data_without(folder: Path, hidden: list[str]) -> Path:
    """A copy of the data directory made of symbolic links, without the files of ``hidden``."""
    from helpers.paths import data_dir

    root = data_dir()
    for f in root.rglob("*"):
        rel = f.relative_to(root).as_posix()
        if f.is_file() and rel not in hidden:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).symlink_to(f)
    return folder


def test_there_is_at_least_one_notebook():
    assert "00_example" in NOTEBOOKS


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> tuple[dict, Path] | None:
    """Every notebook's smoke profile once, in this process in dependency order, from an empty cache and with the
    data files no smoke profile needs hidden: the run each notebook's smoke test checks and the two-worker cluster
    test compares with (it used to repeat five of these notebooks serially).  ``None`` without the real data."""
    import os

    if not _data_present():
        return None
    base = tmp_path_factory.mktemp("smoke_session")
    hidden = sorted({f for files in NOT_NEEDED_IN_SMOKE.values() for f in files})
    env = {"HELPERS_CACHE": base / "cache", "HELPERS_RUNS": base / "runs", "HELPERS_FIGURES": base / "figures",
           "HELPERS_DATA": _data_without(base / "data", hidden)}  # fmt: skip
    before = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        runs = runner.run_notebooks(profile="smoke", workers=1, output_dir=base / "out", echo=False)
    finally:
        for k, v in before.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return {r.notebook: r for r in runs}, base / "out"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_smoke(name, smoke_run):
    if smoke_run is None:
        if name not in EMBEDDED_ONLY:
            pytest.skip("real data not found: set HELPERS_DATA to the data directory (see data/README.md)")
        run, folder = runner.run_notebooks(profile="smoke", only=[name], echo=False)[0], None
        folder = Path(run.output).parent
    else:
        runs, folder = smoke_run
        run = runs[name]
    assert run.status == "ok", f"{name} failed at cell {run.failed_cell}: {run.error}"
    results = folder / "results" / f"{name}.jsonl"
    assert results.exists() and results.read_text().strip(), f"{name} recorded no headline metric"
    assert all(json.loads(line)["profile"] == "smoke" for line in results.read_text().splitlines())
    moved = smoke_values_moved(name, folder / "results")
    assert not moved, (f"{name}: smoke values outside their bands (tests/expected/smoke_metrics.csv, "
                       f"CPU kind {_cpu_kind()}):\n" + "\n".join(moved))  # fmt: skip
    if name not in ("00_example", "07_monitoring"):  # every other notebook decides its registered claims
        claims = folder / "results" / "claims" / f"{name}.jsonl"
        assert claims.exists() and all(json.loads(x)["verdict"] in VERDICTS
                                       for x in claims.read_text().splitlines()), f"{name} decided no claim"  # fmt: skip


def test_committed_notebooks_have_no_outputs():
    for path in list_notebooks():
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and not cell.get("execution_count"), (
                    f"{path.name} holds outputs"
                )


@pytest.mark.parametrize("profile", runner.PROFILES)
def test_profiles_only_set_declared_parameters(profile):
    declared = {p.stem: set(runner.declared_parameters(p)) for p in list_notebooks()}
    for notebook, params in load_profile(profile).items():
        assert notebook in declared, f"profile {profile} names unknown notebook {notebook}"
        assert set(params) <= declared[notebook], set(params) - declared[notebook]


def test_every_assignment_of_a_parameters_cell_is_a_declared_parameter():
    """papermill's parser skips a line it cannot read (e.g. ``"all" = ...`` inside a comment) with a warning only;
    the parameter would then be unknown to profiles, ``-p`` and other notebooks."""
    import ast

    for path in list_notebooks():
        nb = json.loads(path.read_text())
        cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
        tree = ast.parse("".join(cell["source"]))
        assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets}
        assert assigned == set(runner.declared_parameters(path)), (path.name, assigned ^ set(runner.declared_parameters(path)))


@pytest.mark.slow
def test_smoke_on_a_two_worker_cluster_records_what_one_process_records(smoke_run, tmp_path, monkeypatch):
    """The five notebooks that map units side by side on a local cluster (01's tasks, 02's models, 03's training
    jobs, 05's setups and 06's self-training sources as units on the workers; 06 after 01, 03 and 05) give the same
    records as the session's smoke run of every notebook in one process: each kernel and unit runs on one torch
    thread in both (the notebooks' default thread parameters are 1, as the executor's), and each unit seeds itself.
    The claims' estimates, intervals and verdicts agree too."""
    from helpers.claims import collect_claims
    from helpers.run.results import comparable_records

    if smoke_run is None:
        pytest.skip("real data not found: set HELPERS_DATA to the data directory (see data/README.md)")
    # 04 maps no unit (its kernel on a worker is the path every notebook here takes): left out, it would add a
    # quarter of this test's CPU to the suite's critical path and check nothing the others do not
    chosen = ["01_discriminator_bounds", "02_selective_answering", "03_self_training", "05_mde", "06_benchmark"]
    serial_runs, serial = smoke_run
    assert all(serial_runs[nb].status == "ok" for nb in chosen)
    out = tmp_path / "workers2"
    monkeypatch.setenv("HELPERS_CACHE", str(tmp_path / "cache2"))  # the cluster run computes everything itself
    runs = runner.run_notebooks(profile="smoke", only=chosen, workers=2, output_dir=out, echo=False)
    assert [r.status for r in runs] == ["ok"] * len(chosen), [(r.notebook, r.failed_cell, r.error) for r in runs]
    status = json.loads((out / "run_status.json").read_text())["_run"]
    assert status["workers"] == 2 and status["status"] == "ok"
    cluster = comparable_records(out / "results")
    alone = {k: v for k, v in comparable_records(serial / "results").items() if k[0] in chosen}
    assert cluster.keys() == alone.keys() and len(alone) > 20

    def same(a, b) -> bool:
        return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)  # nan == nan here

    differ = {k: (cluster[k], v) for k, v in alone.items() if not same(cluster[k], v)}
    assert not differ, differ
    columns = ["estimate", "low", "high", "verdict"]
    claims_cluster = collect_claims(out / "results").set_index("id")[columns].sort_index()
    claims_alone = collect_claims(serial / "results").set_index("id")[columns].loc[claims_cluster.index]
    assert len(claims_cluster) > 10
    pd.testing.assert_frame_equal(claims_cluster, claims_alone)


def _make_expected():
    """tests/expected/make_smoke_expected.py as a module (it lives beside the pins it writes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_smoke_expected", EXPECTED.with_name("make_smoke_expected.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _expected() -> pd.DataFrame:
    from helpers.run.bands import read_pins

    return read_pins(EXPECTED)


def smoke_values_moved(name: str, results: Path) -> list[str]:
    """The expected smoke values of notebook ``name`` (``tests/expected/smoke_metrics.csv``: bands measured over
    seeds and CPU-kernel variants) that the run's records miss or leave."""
    from helpers.run.bands import values_outside

    return values_outside(_expected(), results, name)


def _cpu_kind() -> str:
    from helpers.run.provenance import cpu_kind

    return cpu_kind()


def test_every_notebook_has_pinned_smoke_values():
    """A notebook whose smoke run checks nothing would pass its smoke test by running at all: every notebook has
    expected values, and one pins file serves every kind of CPU (no file per kind, no fallback)."""
    table = _expected()
    unpinned = sorted(p.stem for p in list_notebooks() if p.stem not in set(table["notebook"]))
    assert not unpinned, f"notebooks without pinned smoke values: {unpinned}"
    assert len(table) > 200
    assert sorted(EXPECTED.parent.glob("smoke_metrics*.csv")) == [EXPECTED]


def test_the_pins_are_the_bands_of_the_committed_spread():
    """smoke_metrics.csv is exactly what make_smoke_expected.py makes of smoke_spread.csv (no hand-edited band),
    and the spread holds runs over at least three seeds and two CPU-kernel settings."""
    from helpers.run.bands import read_pins

    tool = _make_expected()
    spread = read_pins(tool.SPREAD)
    runs = tool.spread_runs(spread)
    header = [line for line in tool.SPREAD.read_text().splitlines() if line.startswith("# ") and ": seed" in line]
    assert len({line.split("seed ", 1)[1].split(",")[0] for line in header}) >= 3
    assert len({line.split("kernels ", 1)[1].split(", commit")[0] for line in header}) >= 2
    assert len(runs) == len(header) >= 6
    made = tool.pins_from_spread(spread)
    pd.testing.assert_frame_equal(made.reset_index(drop=True), _expected(), check_dtype=False, rtol=1e-12)


def test_the_smoke_value_check_catches_a_moved_value(tmp_path, monkeypatch):
    """A record inside its band passes; one beyond it, and one that disappears, are reported."""
    from helpers.run.results import record

    expected = _expected()
    rows = expected[(expected["notebook"] == "00_example") & expected["required"]].head(2)
    assert len(rows) == 2, "the expected values must cover the example notebook"
    (first, second) = list(rows.itertuples())
    monkeypatch.setenv("HELPERS_RESULTS", str(tmp_path))
    labels = dict(kv.split("=", 1) for kv in first.labels.split(", ")) if first.labels else {}
    record(first.name, first.value + 0.9 * first.abs_tol, unit=first.unit, notebook="00_example", **labels)
    moved = smoke_values_moved("00_example", tmp_path)
    assert moved[0].startswith(f"{second.name}") and "not recorded" in moved[0]  # the second is missing
    assert not any(m.startswith(f"{first.name} [{first.labels}]") for m in moved)
    record(first.name, first.value + 1.1 * first.abs_tol, unit=first.unit, notebook="00_example", **labels)
    assert any(m.startswith(f"{first.name} [{first.labels}]") for m in smoke_values_moved("00_example", tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["estimator_fed_shuffled_labels", "metric_sign_flipped", "record_dropped",
                                   "window_off_by_one", "ranking_read_upside_down"])
def test_a_planted_defect_fails_the_smoke_comparison(plant, smoke_run, tmp_path, monkeypatch):
    """The notebook re-run on a copy of the session's warm cache with one defect planted (as ``sitecustomize`` on
    the kernel's path, so the library stays untouched) gives records outside their bands: the bands, measured
    from seeds and CPU kernels, are still narrow enough to catch it."""
    from planted_defects import PLANTS, run_planted

    if smoke_run is None:
        pytest.skip("real data not found: set HELPERS_DATA to the data directory (see data/README.md)")
    base = smoke_run[1].parent
    run, results = run_planted(plant, cache=base / "cache", data=base / "data", work=tmp_path)
    assert run.status == "ok", (run.failed_cell, run.error)
    notebook, defect, _ = PLANTS[plant]
    moved = smoke_values_moved(notebook, results)
    assert moved, f"planted '{plant}' ({defect}) left every smoke value of {notebook} in its band"


def test_every_planted_defect_is_caught_by_the_smoke_check_or_a_named_unit_test(tmp_path):
    """The plants the smoke bands cannot see (``SMOKE_MISSES``) make their hand-computed unit test fail; every
    other plant is one of the smoke comparison's parameters above."""
    from planted_defects import PLANTS, SMOKE_MISSES, unit_tests_fail

    smoke_checked = {"estimator_fed_shuffled_labels", "metric_sign_flipped", "record_dropped", "window_off_by_one",
                     "ranking_read_upside_down"}
    assert smoke_checked | set(SMOKE_MISSES) == set(PLANTS) and not smoke_checked & set(SMOKE_MISSES)
    for plant, test_file in SMOKE_MISSES.items():
        assert unit_tests_fail(plant, test_file, tmp_path / plant), f"{test_file} passes with '{plant}' planted"
