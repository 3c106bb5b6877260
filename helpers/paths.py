"""Where things live: the data directory, the cache, the figures and the run folder.

The data directory is ``$HELPERS_DATA`` when set, else the repository's ``data/`` folder.  Cache and run
folders default to git-ignored folders of the repository and can be moved with ``HELPERS_CACHE`` and
``HELPERS_RUNS``.  A run's figures and tables go to ``<runs>/<profile>/figures`` (``interactive`` outside the
runner, e.g. JupyterLab or plain papermill), or to ``HELPERS_FIGURES``; never to the committed reference results
in ``figures/`` (:func:`published_dir`), which only ``python -m helpers publish`` writes.
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
    """Where notebooks write figures and tables: ``$HELPERS_FIGURES``, else ``<runs>/<profile>/figures`` with the
    profile from ``$HELPERS_PROFILE`` (set by the runner; ``interactive`` when unset)."""
    return run_figures_dir(os.environ.get("HELPERS_PROFILE") or "interactive")


def run_figures_dir(profile: str) -> Path:
    """A profile's run figures: ``$HELPERS_FIGURES``, else ``<runs>/<profile>/figures`` (created)."""
    path = _env_path("HELPERS_FIGURES", runs_dir() / profile / "figures")
    path.mkdir(parents=True, exist_ok=True)
    return path


def published_dir() -> Path:
    """The project's committed reference results (``<repo>/figures``), written only by ``helpers publish``."""
    return REPO_ROOT / "figures"


def runs_dir() -> Path:
    """Git-ignored folder for executed notebooks and recorded results (``$HELPERS_RUNS`` or ``<repo>/runs``)."""
    path = _env_path("HELPERS_RUNS", REPO_ROOT / "runs")
    path.mkdir(parents=True, exist_ok=True)
    return path
