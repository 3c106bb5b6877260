"""Profiles and the notebooks they parameterise: ``notebooks/profiles/<stem>.yaml`` per notebook, one mapping per
profile (``smoke``, ``default``, ``full``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from helpers.errors import ProfileError, UnknownNameError
from helpers.paths import REPO_ROOT

__all__ = ["PROFILES", "notebooks_dir", "list_notebooks", "select_notebooks", "load_profile"]

PROFILES = ("smoke", "default", "full")


def notebooks_dir() -> Path:
    """``$HELPERS_NOTEBOOKS`` or ``<repo>/notebooks``."""
    value = os.environ.get("HELPERS_NOTEBOOKS")
    return Path(value) if value else REPO_ROOT / "notebooks"


def list_notebooks(directory: Path | None = None) -> list[Path]:
    """The notebooks to run, in name order (checkpoint copies excluded)."""
    directory = directory or notebooks_dir()
    return sorted(p for p in directory.glob("*.ipynb") if not p.name.startswith("."))


def select_notebooks(notebooks: list[Path], only: Iterable[str] | None) -> list[Path]:
    """The notebooks named by ``only`` (stems or prefixes; all when empty), in the order named."""
    if not only:
        return notebooks
    chosen = []
    for name in only:
        stem = Path(name).stem
        matches = [p for p in notebooks if p.stem == stem] or [
            p for p in notebooks if p.stem.startswith(stem)
        ]
        if not matches:
            raise UnknownNameError("notebook", name, [p.stem for p in notebooks])
        chosen.extend(m for m in matches if m not in chosen)
    return chosen


def load_profile(profile: str, directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """Parameters per notebook stem for ``profile``.

    Each notebook owns ``notebooks/profiles/<stem>.yaml`` (parsed with ``yaml.safe_load``), a mapping from profile
    name to that notebook's parameters::

        smoke:   {epochs: 3}
        default: {epochs: 15}
        full:    {epochs: 30}

    A notebook without a file, or without an entry for ``profile``, runs with its own defaults.
    """
    if profile not in PROFILES:
        raise ProfileError(f"unknown profile {profile!r}; expected one of: {', '.join(PROFILES)}")
    folder = (directory or notebooks_dir()) / "profiles"
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict) or not all(isinstance(v, dict) or v is None for v in data.values()):
            raise ProfileError(f"{path.name}: expected a mapping of profile name -> mapping of parameters")
        unknown = sorted(set(data) - set(PROFILES))
        if unknown:
            raise ProfileError(
                f"{path.name}: unknown profile(s) {', '.join(unknown)}; expected {', '.join(PROFILES)}"
            )
        out[path.stem] = dict(data.get(profile) or {})
    return out
