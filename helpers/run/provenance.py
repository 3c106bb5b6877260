"""Where a run came from, recorded in its ``run_status.json`` (key ``_run``) when it starts.

* ``code_commit`` / ``code_dirty``: the git commit of the repository the ``helpers`` package was imported from and
  whether its tracked files differed from it (``None`` outside a git checkout);
* ``cache_files_at_start`` / ``cache_bytes_at_start``: what the disk cache (``$HELPERS_CACHE``) held, so that a
  time can say whether it was measured from an empty cache (every model trained, every prediction computed) or
  with a warm one;
* ``cpu_kind``: the processor's vendor and the instruction set torch's CPU kernels use (:func:`cpu_kind`).  The
  same code on the same data trains to the same bits on one kind of CPU; another kind can take other kernel paths
  (a BLAS's code for another vendor or vector width), whose rounding training carries into every record, so two
  runs' numbers are comparable to the bit only on the same kind;
* ``kernel_env``: the settings that choose the CPU kernels (``ATEN_CPU_CAPABILITY``, ``MKL_ENABLE_INSTRUCTIONS``,
  ``MKL_CBWR``, ``OPENBLAS_CORETYPE``) where set;
* ``packages``: the exact version of every package installed in the environment (:func:`installed_versions`), the
  environment ``make install`` laid from the lock ``requirements-<system>-<machine>.lock`` (:func:`lock_versions`)
  when the run used it.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path

from helpers.paths import REPO_ROOT, cache_dir

__all__ = ["code_version", "cache_state", "cpu_kind", "installed_versions", "lock_file", "lock_versions",
           "run_provenance"]


def code_version(root: Path = REPO_ROOT) -> dict:
    """``{"code_commit": sha or None, "code_dirty": bool or None}`` of the git checkout at ``root``."""
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=20, check=True).stdout.strip()  # fmt: skip
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=60, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {"code_commit": None, "code_dirty": None}
    return {"code_commit": sha or None, "code_dirty": bool(changed)}


def cache_state(folder: Path | None = None) -> dict:
    """``{"cache_files_at_start": n, "cache_bytes_at_start": bytes}`` of the cache folder (files counted
    recursively; lock files included)."""
    folder = Path(folder) if folder is not None else cache_dir()
    files = size = 0
    for base, _, names in os.walk(folder):
        for name in names:
            try:
                size += os.stat(os.path.join(base, name)).st_size
            except OSError:
                continue
            files += 1
    return {"cache_files_at_start": files, "cache_bytes_at_start": size}


def cpu_kind() -> str:
    """``"<vendor>-<instruction set>"`` of this machine, e.g. ``"AuthenticAMD-AVX2"``: the CPU vendor
    (``vendor_id`` of ``/proc/cpuinfo``, else :func:`platform.processor`) and the vector instruction set torch's CPU
    kernels dispatch to (``torch.backends.cpu.get_cpu_capability()``)."""
    import torch

    vendor = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            vendor = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("vendor_id")), "")
    except OSError:
        pass
    vendor = vendor or platform.processor() or platform.machine() or "unknown"
    return f"{vendor}-{torch.backends.cpu.get_cpu_capability()}".replace(" ", "_")


def canonical_name(name: str) -> str:
    """A distribution's name as PEP 503 compares them: lower case, runs of ``-``, ``_`` and ``.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_versions() -> dict[str, str]:
    """``{canonical name: version}`` of every distribution installed beside ``helpers`` (``helpers`` itself
    excluded: its version is the commit), sorted by name."""
    from importlib import metadata

    found = {canonical_name(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    found.pop("helpers", None)
    return dict(sorted(found.items()))


def lock_file(root: Path = REPO_ROOT) -> Path:
    """This platform's lock, ``requirements-<system>-<machine>.lock`` (``uname -s``, ``uname -m``, lower case), as
    the Makefile names it: ``requirements-linux-x86_64.lock``, ``requirements-darwin-arm64.lock``."""
    return root / f"requirements-{platform.system().lower()}-{platform.machine()}.lock"


def lock_versions(path: Path) -> dict[str, str]:
    """``{canonical name: version}`` of the ``name==version`` lines of a lock written by ``uv pip compile``
    (comments, ``# via`` lines and options skipped)."""
    pins = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==", 1)
            pins[canonical_name(name.split("[", 1)[0].strip())] = version.split(";", 1)[0].strip()
    return pins


KERNEL_SETTINGS = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "OPENBLAS_CORETYPE")


def kernel_env() -> dict[str, str]:
    """The environment variables of :data:`KERNEL_SETTINGS` that are set, with their values."""
    return {k: os.environ[k] for k in KERNEL_SETTINGS if os.environ.get(k)}


def run_provenance() -> dict:
    """The code's version, the cache's state, the kind of CPU and the installed packages now: what a run records
    as it starts."""
    return {**code_version(), **cache_state(), "cpu_kind": cpu_kind(), "kernel_env": kernel_env(),
            "packages": installed_versions()}
