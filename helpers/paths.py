"""Where things live: the data directory, the cache, the figures and the run folder.

The data directory is ``$HELPERS_DATA`` when set, else the repository's ``data/`` folder.  Cache and run
folders default to git-ignored folders of the repository and can be moved with ``HELPERS_CACHE`` and
``HELPERS_RUNS``.

Every invocation of the runner writes its own run folder, ``<runs>/<profile>/<run id>/`` (executed notebooks,
``results/``, ``figures/``, ``run_status.json``); no run replaces another's files.  The run id is the start time
(UTC, ``YYYYmmdd-HHMMSS``) plus a label for runs that are not the profile's own (``-custom`` with ``-p``
overrides, ``-byod`` with your data).  ``<runs>/<profile>/latest`` holds the id of the last complete, unlabelled
run: what ``helpers summary`` and ``helpers publish`` read by default.  Outside the runner (JupyterLab, plain
papermill) figures go to ``<runs>/interactive/figures``, or to ``HELPERS_FIGURES``; never to the committed
reference results in ``figures/`` (:func:`published_dir`), which only ``python -m helpers publish`` writes.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
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


#: the pointer file, in a profile's runs folder, to its last complete unlabelled run
LATEST = "latest"


def new_run_dir(profile: str, label: str = "") -> Path:
    """A new, empty run folder ``<runs>/<profile>/<YYYYmmdd-HHMMSS>[-label]`` (``-2``, ``-3``... if taken)."""
    base = runs_dir() / profile
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S") + (f"-{label}" if label else "")
    for i in range(1, 1000):
        path = base / (stamp if i == 1 else f"{stamp}-{i}")
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free run folder name under {base} for {stamp}")


def run_dirs(profile: str) -> list[Path]:
    """The profile's run folders, oldest first (by run id, i.e. start time)."""
    base = runs_dir() / profile
    return sorted(p for p in base.iterdir() if p.is_dir() and p.name[:8].isdigit()) if base.is_dir() else []


def latest_run_dir(profile: str) -> Path | None:
    """The profile's last complete unlabelled run (``<runs>/<profile>/latest``), or None."""
    pointer = runs_dir() / profile / LATEST
    if not pointer.is_file():
        return None
    path = runs_dir() / profile / pointer.read_text(encoding="utf-8").strip()
    return path if path.is_dir() else None


def mark_latest(run_dir: Path) -> None:
    """Point ``<runs>/<profile>/latest`` at ``run_dir`` (atomically: a temp file renamed over the pointer)."""
    run_dir = Path(run_dir)
    tmp = run_dir.parent / f".{LATEST}.{os.getpid()}"
    tmp.write_text(run_dir.name + "\n", encoding="utf-8")
    os.replace(tmp, run_dir.parent / LATEST)


def resolve_run_dir(profile: str, run: str | os.PathLike[str] | None = None) -> Path | None:
    """A run folder from a run id of ``profile``, a path, or (None) the profile's latest complete run."""
    if run is None:
        return latest_run_dir(profile)
    path = Path(run).expanduser()
    if path.is_dir():
        return path.resolve()
    candidate = runs_dir() / profile / str(run)
    return candidate if candidate.is_dir() else None
