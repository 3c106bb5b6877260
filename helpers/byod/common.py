"""Shared pieces of the bring-your-own-data loaders: paths, content hashes, label maps, option checks, packing.

Nothing here trains or predicts; :mod:`helpers.byod.logits`, :mod:`helpers.byod.text` and
:mod:`helpers.byod.images` build on it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from helpers.benchmark.task import LabelledLogits, ShiftTask
from helpers.errors import DataNotFoundError, InputValidationError
from helpers.paths import REPO_ROOT

__all__ = [
    "REFERENCE_SPLITS",
    "resolve_path",
    "sha256_file",
    "sha256_files",
    "label_map",
    "encode_labels",
    "split_role",
    "check_options",
    "pack_sets",
    "unpack_task",
    "meta_subset",
    "progress",
]

_INT_RE = re.compile(r"[+-]?\d+")
#: Split values (case-insensitive) that name the labelled in-distribution reference set.
REFERENCE_SPLITS = ("reference", "val", "validation")
#: Split value of the training rows (text and images).
TRAIN_SPLIT = "train"


def resolve_path(path: str | os.PathLike) -> Path:
    """The existing file or folder ``path`` names.

    A relative path is looked up in the current directory, then in the repository root (papermill runs a
    notebook inside ``notebooks/``, so ``-p byod_path=my_data.csv`` typed in the repository root still works).

    Raises
    ------
    DataNotFoundError
        Empty path, or nothing at any of the places tried (all are listed).
    """
    if path is None or str(path).strip() == "":
        raise DataNotFoundError(
            "byod path is empty; expected a .npz/.npy logits file or folder, a .csv/.jsonl text file, "
            "or a folder of images root/<split>/<class>/*.png"
        )
    p = Path(path).expanduser()
    tried = [p] if p.is_absolute() else [Path.cwd() / p, REPO_ROOT / p]
    for cand in tried:
        if cand.exists():
            return cand.resolve()
    raise DataNotFoundError(
        f"byod path {str(path)!r} not found; looked at: {', '.join(str(t) for t in tried)}"
    )


def sha256_file(path: Path, *, chunk: int = 1 << 20) -> str:
    """sha256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_files(root: Path, files: Iterable[Path]) -> str:
    """One digest over several files: their paths relative to ``root`` (POSIX form) and their bytes, in order."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        h.update(sha256_file(f).encode() + b"\0")
    return h.hexdigest()


def label_map(values: Sequence[Any], *, what: str = "label") -> tuple[list, dict]:
    """Sorted distinct label values and the map value → class index ``0..K-1``.

    Integer-like labels sort numerically (``2 < 10``); anything else sorts as strings.  A missing value (``None``,
    NaN, empty string) is an error naming how many rows lack a label.
    """
    vals = list(values)
    missing = sum(1 for v in vals if v is None or (isinstance(v, float) and np.isnan(v)) or v == "")
    if missing:
        raise InputValidationError(f"{what}: {missing} row(s) have no {what}; expected a value on every row")
    ints: list[int] | None = []
    for v in vals:
        if isinstance(v, (bool, np.bool_)):
            ints = None
        elif isinstance(v, (int, np.integer)) or (
            isinstance(v, (float, np.floating)) and float(v).is_integer()
        ):
            ints.append(int(v))
        elif isinstance(v, str) and _INT_RE.fullmatch(v.strip()):
            ints.append(int(v))
        else:
            ints = None
        if ints is None:
            break
    if ints is not None:
        names: list = sorted(set(ints))
        return names, {n: i for i, n in enumerate(names)}
    names = sorted({str(v) for v in vals})
    return names, {n: i for i, n in enumerate(names)}


def encode_labels(values: Sequence[Any], mapping: Mapping) -> np.ndarray:
    """Class indices of ``values`` under ``mapping`` from :func:`label_map`."""
    str_keys = isinstance(next(iter(mapping)), str)
    return np.asarray([mapping[str(v) if str_keys else int(v)] for v in values], dtype=np.int64)


def split_role(split: str) -> str:
    """``"train"``, ``"reference"`` or ``"target"`` for one split value (case and surrounding blanks ignored).

    Raises
    ------
    InputValidationError
        An empty split value, or a target name starting with ``meta_`` (reserved for the generated meta-set).
    """
    s = str(split).strip().lower()
    if s == TRAIN_SPLIT:
        return "train"
    if s in REFERENCE_SPLITS:
        return "reference"
    if not s:
        raise InputValidationError(
            "split: found an empty split value; expected train, reference (or val) or a name"
        )
    if s.startswith("meta_"):
        raise InputValidationError(
            f"split: {str(split).strip()!r} starts with 'meta_', which is kept for the generated meta-set; rename it"
        )
    return "target"


def check_options(kind: str, options: Mapping[str, Any], accepted: Mapping[str, Any]) -> dict[str, Any]:
    """``accepted`` defaults updated by ``options``; an unknown option is an error listing the accepted ones."""
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InputValidationError(
            f"load_task(kind={kind!r}): unknown option(s) {unknown}; accepted: {', '.join(sorted(accepted))}"
        )
    return {**accepted, **options}


def meta_subset(n: int, meta_n: int | None, seed: int) -> np.ndarray:
    """Indices of the reference examples every meta set is made from: all ``n``, or a seeded sorted subset of
    ``meta_n`` (keeps the meta-set's cost bounded on a large reference set)."""
    if meta_n is None or int(meta_n) >= n:
        return np.arange(n)
    if int(meta_n) < 1:
        raise InputValidationError(f"meta_n: expected a positive number of examples or None, got {meta_n!r}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7]))
    return np.sort(rng.choice(n, size=int(meta_n), replace=False))


def progress(iterable: Iterable, *, enabled: bool, desc: str, total: int | None = None) -> Iterable:
    """``iterable`` wrapped in a tqdm bar when ``enabled``."""
    if not enabled:
        return iterable
    from helpers.progress import tqdm

    return tqdm(iterable, desc=desc, total=total)


def pack_sets(
    sets: Mapping[str, Mapping[str, np.ndarray]], roles: Mapping[str, str]
) -> dict[str, np.ndarray]:
    """Arrays of named sets under index keys (``logits_0``, ``labels_0``, ``features_0`` ...) for the disk cache.

    Set names come from the user's data (split values, file names); keeping them out of the archive's member names
    means no name can clash with another key or be read as a path.
    """
    names = list(sets)
    out: dict[str, np.ndarray] = {
        "set_names": np.asarray(names, dtype=str),
        "set_roles": np.asarray([roles[n] for n in names], dtype=str),
    }
    for i, n in enumerate(names):
        for key, arr in sets[n].items():
            out[f"{key}_{i}"] = np.asarray(arr)
    return out


def unpack_task(arrays: Mapping[str, np.ndarray], *, name: str, info: dict) -> ShiftTask:
    """The :class:`ShiftTask` (family ``"byod"``) of arrays written by :func:`pack_sets`."""
    names = [str(n) for n in arrays["set_names"]]
    roles = [str(r) for r in arrays["set_roles"]]
    groups: dict[str, dict[str, LabelledLogits]] = {"reference": {}, "target": {}, "meta": {}}
    features: dict[str, np.ndarray] = {}
    for i, (n, role) in enumerate(zip(names, roles)):
        groups[role][n] = LabelledLogits(arrays[f"logits_{i}"], arrays[f"labels_{i}"])
        if f"features_{i}" in arrays:
            features["reference" if role == "reference" else n] = arrays[f"features_{i}"]
    (reference,) = groups["reference"].values()
    return ShiftTask(
        name=name,
        family="byod",
        reference=reference,
        targets=groups["target"],
        meta=groups["meta"],
        features=features if len(features) == len(names) else {},
        info=info,
    )
