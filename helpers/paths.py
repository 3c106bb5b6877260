"""Where things live: the data directory, the cache, the figures and the run folder.

The data directory is ``$HELPERS_DATA`` when set, else the repository's ``data/`` folder.  Cache, run and
figure folders default to folders of the repository and can be moved with ``HELPERS_CACHE``,
``HELPERS_RUNS`` and ``HELPERS_FIGURES``.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _env_path(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value).expanduser().resolve() if value else default


def data_dir() -> Path:
    """The data directory: ``$HELPERS_DATA`` if set, else ``<repo>/data``."""
    return _env_path("HELPERS_DATA", REPO_ROOT / "data")


def cache_dir() -> Path:
    """Disk cache for predictions, checkpoints and attributions (``$HELPERS_CACHE`` or ``<repo>/cache``)."""
    path = _env_path("HELPERS_CACHE", REPO_ROOT / "cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


def figures_dir() -> Path:
    """Where notebooks write figures and tables (``$HELPERS_FIGURES`` or ``<repo>/figures``)."""
    path = _env_path("HELPERS_FIGURES", REPO_ROOT / "figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_dir() -> Path:
    """Git-ignored folder for executed notebooks and recorded results (``$HELPERS_RUNS`` or ``<repo>/runs``)."""
    path = _env_path("HELPERS_RUNS", REPO_ROOT / "runs")
    path.mkdir(parents=True, exist_ok=True)
    return path
