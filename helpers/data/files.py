"""Locate and verify data files: existence, size and sha256 against :mod:`helpers.data.manifest`.

The data directory is :func:`helpers.paths.data_dir` (``$HELPERS_DATA``, else the repository's ``data/``).
Loaders call :func:`require`, which raises :class:`~helpers.errors.DataNotFoundError` (naming the dataset, the
expected path, the data directory in use and the fetch command) when a file is missing, and verifies the sha256
once per process: the verified status is cached under the key (path, size, mtime), so a second load costs one
``stat`` call, and a file replaced on disk is verified again.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

from helpers.data.manifest import DATASETS, FETCH_COMMAND, FILES
from helpers.errors import ChecksumError, DataNotFoundError, UnknownNameError
from helpers.paths import data_dir

__all__ = [
    "sha256_file",
    "content_sha256",
    "require",
    "verify_file",
    "describe_data_dir",
    "clear_verified_cache",
]

_VERIFIED: dict[tuple[str, int, int], str] = {}


def sha256_file(path: str | os.PathLike[str], *, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk_size):
            h.update(block)
    return h.hexdigest()


def content_sha256(path: str | os.PathLike[str]) -> str | None:
    """sha256 of a file's content: decompressed bytes of a ``.gz``, array bytes (key order) of an ``.npz``.

    ``None`` for other file types.
    """
    name = str(path)
    h = hashlib.sha256()
    if name.endswith(".gz"):
        with gzip.open(name, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
        return h.hexdigest()
    if name.endswith(".npz"):
        import numpy as np

        with np.load(name) as npz:
            for key in sorted(npz.files):
                h.update(np.ascontiguousarray(npz[key]).tobytes())
        return h.hexdigest()
    return None


def clear_verified_cache() -> None:
    """Forget which files were verified in this process (the next :func:`require` hashes again)."""
    _VERIFIED.clear()


def describe_data_dir(root: Path | None = None) -> str:
    """One phrase saying which data directory is in use and why (for error messages)."""
    root = data_dir() if root is None else root
    source = (
        "from $HELPERS_DATA"
        if os.environ.get("HELPERS_DATA")
        else "repository default; $HELPERS_DATA is unset"
    )
    exists = "" if root.is_dir() else ", which does not exist"
    return f"{root} ({source}{exists})"


def verify_file(path: Path, rel: str, *, use_cache: bool = True) -> None:
    """Check size and sha256 of ``path`` against the manifest entry ``rel``.

    Raises
    ------
    ChecksumError
        If the size or the sha256 differs; the message names the file, the expected and the actual value.
    """
    entry = FILES[rel]
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if use_cache and _VERIFIED.get(key) == entry.sha256:
        return
    actual = sha256_file(path) if st.st_size == entry.size or entry.raw_sha256 is None else None
    if actual != entry.sha256:
        # A re-fetched .gz/.npz may differ byte-wise (other gzip/zip writer) yet hold the same content.
        content = _safe_content_sha256(path) if entry.raw_sha256 else None
        if content is None or content != entry.raw_sha256:
            actual = actual or sha256_file(path)
            detail = (
                f"content sha256 expected {entry.raw_sha256}, actual {content}; " if entry.raw_sha256 else ""
            )
            raise ChecksumError(
                f"{path}: sha256 mismatch: expected {entry.sha256}, actual {actual} "
                f"(size {st.st_size} bytes, expected {entry.size}); {detail}"
                "the file is corrupted or a different version; fetch it again"
            )
    _VERIFIED[key] = entry.sha256


def _safe_content_sha256(path: Path) -> str | None:
    try:
        return content_sha256(path)
    except Exception:  # a corrupted archive cannot be decompressed: treat as "no matching content"
        return None


def require(dataset: str, rel: str, *, verify: bool = True) -> Path:
    """Absolute path of the data file ``rel`` needed by ``dataset``, checked to exist (and verified).

    Parameters
    ----------
    dataset : str
        Dataset name, used in the error message and the fetch command.
    rel : str
        Path relative to the data directory, as listed in :data:`helpers.data.manifest.FILES`.
    verify : bool, keyword-only
        Verify size and sha256 (once per process per (path, size, mtime)).

    Raises
    ------
    DataNotFoundError
        The file (or the whole data directory) is missing.
    ChecksumError
        The file does not match the manifest.
    """
    if dataset not in DATASETS:
        raise UnknownNameError("dataset", dataset, list(DATASETS))
    if rel not in FILES:
        raise KeyError(f"{rel!r} is not a file of the manifest")
    root = data_dir()
    path = root / rel
    if not path.is_file():
        raise DataNotFoundError(
            f"dataset {dataset!r} needs {rel}, expected at {path}, but it is missing. "
            f"Data directory in use: {describe_data_dir(root)}. "
            f"Point $HELPERS_DATA at a data directory that holds it, or fetch it with: "
            f"{FETCH_COMMAND.format(name=dataset)}"
        )
    if verify:
        verify_file(path, rel)
    return path
