"""``make gpu-check`` is prepared on a machine without a GPU: its plan is valid and it exits 0 here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from helpers.paths import REPO_ROOT
from helpers.run.notebook_params import check_parameters
from helpers.run.profiles import load_profile, notebooks_dir

SPEC = importlib.util.spec_from_file_location("gpu_check", REPO_ROOT / "benchmarks" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gpu_check)


@pytest.mark.parametrize("stem", sorted(gpu_check.FULL_UNITS))
def test_every_full_unit_is_a_valid_parameter_set_of_its_notebook(stem):
    """A renamed parameter fails here, not after a GPU machine's minutes are spent."""
    check_parameters(notebooks_dir() / f"{stem}.ipynb", {**load_profile("full").get(stem, {}), **gpu_check.FULL_UNITS[stem]})


def test_a_planted_bad_unit_is_refused():
    from helpers.errors import ProfileError

    with pytest.raises(ProfileError, match="no_such_parameter"):
        check_parameters(notebooks_dir() / "05_mde.ipynb", {"no_such_parameter": 1})


@pytest.mark.skipif(gpu_check.cuda_device() is not None, reason="this machine has CUDA")
def test_without_cuda_it_says_so_and_exits_0():
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "gpu_check.py")], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0 and "no CUDA device" in proc.stdout


def test_the_record_names_the_device_and_every_row(tmp_path):
    rows = [{"stage": "smoke", "notebook": "05_mde", "status": "ok", "wall_s": 12.5, "peak_gpu_mib": 2048.0,
             "load_1min": 3.1, "error": ""},
            {"stage": "full-unit", "notebook": "05_mde", "status": "failed", "wall_s": 60.0, "peak_gpu_mib": None,
             "load_1min": 4.0, "error": "CellTimeoutError | cell 7"}]  # fmt: skip
    path = gpu_check.write_record(rows, device="NVIDIA H100 80GB HBM3", folder=tmp_path,
                                  started=datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc))  # fmt: skip
    text = path.read_text()
    assert path.name == "2026-11-26-nvidia-h100-80gb-hbm3.md" and "NVIDIA H100" in text
    assert "| smoke | 05_mde | ok | 12.5 | 2048.0 |" in text and "CellTimeoutError / cell 7" in text
