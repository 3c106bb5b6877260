"""Disk cache for predictions and other arrays, keyed by model + data + parameters.

>>> from helpers.cache import cached_arrays
>>> out = cached_arrays("logits", {"model": "resnet20", "data": "cifar10-test", "shift": "fog-3"},
...                     lambda: {"logits": compute()})   # doctest: +SKIP

The key is the sha256 of a canonical JSON rendering of the key parts (numpy arrays are hashed by their bytes,
shape and dtype).  Pass ``code=`` (module names) to key an entry also by the source of the code that computes it
(:func:`code_version`), so that an edit of that code recomputes instead of reading back what the old code wrote.
Files are written atomically (temporary file, then rename), so an interrupted run never
leaves a half-written entry behind, and by one writer per key (``<entry>.lock``): units running side by side on the
executor's workers (:mod:`helpers.parallel`), on one machine or on a shared filesystem, compute an entry once and
never read a partial one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from helpers.paths import cache_dir

__all__ = ["cache_key", "cached_arrays", "cache_path", "code_version", "source_fingerprint"]


def _canonical(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()
        return {"__ndarray__": digest, "shape": list(obj.shape), "dtype": str(obj.dtype)}
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"cache key parts must be JSON-like or numpy arrays, got {type(obj).__name__}")


def cache_key(parts: Any) -> str:
    """sha256 hex digest of the canonical rendering of ``parts``."""
    text = json.dumps(_canonical(parts), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def source_fingerprint(*modules: str) -> str:
    """sha256 hex digest of the source code of the named modules (a package: every ``.py`` file under it).

    Put it in a cache key whose entry is computed by that code, so that an entry written by an earlier version of
    the code is not read back after the code changed under unchanged parameters (a stale cache).

    Raises
    ------
    InputValidationError
        A name that is not an importable module with a source file.
    """
    import importlib.util

    from helpers.errors import InputValidationError

    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            raise InputValidationError(f"modules: {name!r} is not an importable module with a .py source file")
        origin = Path(spec.origin)
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            digest.update(f"{name}:{f.relative_to(origin.parent).as_posix()}\n".encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()


@functools.cache
def code_version(*modules: str) -> str:
    """16-hex-digit :func:`source_fingerprint` of ``modules``, computed once per process.

    Once per process on purpose: a running session computes with the code it imported, so its entries are keyed by
    that code even if the files are edited while it runs.  Use it in cache keys and checkpoint folder names.
    """
    if not modules:
        from helpers.errors import InputValidationError

        raise InputValidationError("modules: expected at least one module name")
    return source_fingerprint(*modules)[:16]


def cache_path(namespace: str, parts: Any) -> Path:
    """Path of the cache entry for ``parts`` under ``<cache>/<namespace>/``."""
    return cache_dir() / namespace / f"{cache_key(parts)[:32]}.npz"


def cached_arrays(
    namespace: str,
    parts: Any,
    compute: Callable[[], Mapping[str, np.ndarray]],
    *,
    refresh: bool = False,
    code: Sequence[str] = (),
) -> dict[str, np.ndarray]:
    """Return the arrays cached for ``parts``, computing and storing them on a miss.

    Parameters
    ----------
    namespace : str
        Sub-folder of the cache (e.g. ``"logits"``).
    parts : JSON-like
        Everything the result depends on: model identity, data identity, parameters.
    compute : callable
        Returns a mapping of array name to array; called only on a miss (or when ``refresh``).
    refresh : bool, keyword-only
        Recompute and overwrite even if an entry exists.
    code : sequence of str, keyword-only
        Modules (or packages) whose code computes the entry: their :func:`code_version` joins the key.
    """
    if code:
        parts = {"parts": parts, "code": code_version(*code)}
    path = cache_path(namespace, parts)
    if path.exists() and not refresh:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    with _KeyLock(path) as lock:
        if lock.found_entry and not refresh:  # another writer finished it while this one waited
            with np.load(path, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        arrays = {k: np.asarray(v) for k, v in compute().items()}
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
        os.close(fd)
        try:
            np.savez(tmp, **arrays)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return arrays


class _KeyLock:
    """One writer per cache entry, on one machine or a shared filesystem: ``<entry>.lock`` created with
    ``O_EXCL``.  A second writer waits until the first has renamed its entry into place (then reads it:
    ``found_entry``) or has given up (then computes itself).  A lock whose process is gone (same host) or that is
    older than :attr:`STALE_S` (another host, which cannot be asked) is taken over."""

    STALE_S = 24 * 3600.0
    POLL_S = 0.2

    def __init__(self, path: Path):
        self.entry, self.path, self.found_entry = path, path.with_name(path.name + ".lock"), False

    def __enter__(self) -> _KeyLock:
        import socket
        import time

        self.entry.parent.mkdir(parents=True, exist_ok=True)
        me = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
        waited = False
        while True:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if self._stale():
                    self.path.unlink(missing_ok=True)
                    continue
                waited = True
                time.sleep(self.POLL_S)
                continue
            with os.fdopen(fd, "w") as f:
                f.write(me)
            self.found_entry = waited and self.entry.exists()
            return self

    def __exit__(self, *exc: Any) -> None:
        self.path.unlink(missing_ok=True)

    def _stale(self) -> bool:
        import socket
        import time

        try:
            holder = json.loads(self.path.read_text(encoding="utf-8") or "{}")
            age = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return False  # released meanwhile: try again
        except (OSError, json.JSONDecodeError):
            return False  # being written right now
        if not holder:
            return age > 60.0  # created but never filled: its writer died between open and write
        if holder.get("host") != socket.gethostname():
            return age > self.STALE_S
        try:
            os.kill(int(holder["pid"]), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, KeyError, ValueError):
            return False
        return False
