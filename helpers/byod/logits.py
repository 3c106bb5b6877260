"""Saved logits and labels → :class:`~helpers.benchmark.task.ShiftTask` (``kind="logits"``).

File format
-----------
One ``.npz`` archive (``numpy.savez``), or a folder of ``.npy`` files (each file's stem is its key) and/or ``.npz``
archives (their members are the keys), holding numeric arrays under these keys:

=================================  =====================================================================
key                                meaning
=================================  =====================================================================
``reference_logits``, ``_labels``  required: labelled in-distribution held-out set, ``(n, K)`` and ``(n,)``
``<set>_logits``, ``<set>_labels`` one pair per target (shifted) set, at least one; ``<set>`` is any name
``meta_<name>_logits``, ``_labels`` optional meta-set of synthetic shifts (0 or >= 3 sets), kept as ``meta_<name>``
``<set>_features``                 optional penultimate features ``(n, d)``: all sets or none
``<set>_partner``                  optional logits ``(n, K)`` of a second model: all sets or none
=================================  =====================================================================

Labels are integers in ``[0, K)``; logits are finite floats with ``K >= 2`` columns, the same ``K`` in every set.
Archives are read with ``allow_pickle=False``: object arrays are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from helpers.benchmark.task import LabelledLogits, ShiftTask
from helpers.byod.common import sha256_file, sha256_files
from helpers.errors import DataNotFoundError, InputValidationError
from helpers.validation import check_labels, check_logits, check_matrix

__all__ = ["SUFFIXES", "read_arrays", "task_from_arrays", "load_logits_task"]

SUFFIXES = ("_logits", "_labels", "_features", "_partner")


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except ValueError as exc:
        raise InputValidationError(
            f"{path.name}: could not read the archive without pickle ({exc}); save numeric arrays only"
        ) from exc
    except Exception as exc:  # zipfile.BadZipFile, OSError
        raise InputValidationError(
            f"{path.name}: not a readable .npz archive ({type(exc).__name__}: {exc})"
        ) from exc


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise InputValidationError(
            f"{path.name}: could not read the array without pickle ({exc}); save numeric arrays only"
        ) from exc


def read_arrays(path: Path) -> tuple[dict[str, np.ndarray], str]:
    """The arrays of a ``.npz``/``.npy`` file or folder of them, and a sha256 of their files' bytes."""
    if path.is_file():
        if path.suffix == ".npz":
            return _load_npz(path), sha256_file(path)
        if path.suffix == ".npy":
            raise InputValidationError(
                f"{path.name}: a single .npy holds one array; expected a .npz archive or a folder of .npy files "
                "named reference_logits.npy, reference_labels.npy, <set>_logits.npy, <set>_labels.npy"
            )
        raise InputValidationError(f"{path.name}: expected a .npz archive or a folder of .npy/.npz files")
    files = sorted(
        p
        for p in path.iterdir()
        if p.is_file() and p.suffix in (".npy", ".npz") and not p.name.startswith(".")
    )
    if not files:
        raise DataNotFoundError(f"{path}: no .npy or .npz files in this folder")
    arrays: dict[str, np.ndarray] = {}
    origin: dict[str, str] = {}
    for f in files:
        found = _load_npz(f) if f.suffix == ".npz" else {f.stem: _load_npy(f)}
        for key, arr in found.items():
            if key in arrays:
                raise InputValidationError(f"key {key!r} is defined twice: in {origin[key]} and in {f.name}")
            arrays[key], origin[key] = arr, f.name
    return arrays, sha256_files(path, files)


def _group(arrays: Mapping[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    sets: dict[str, dict[str, np.ndarray]] = {}
    bad = []
    for key, arr in arrays.items():
        suffix = next((s for s in SUFFIXES if key.endswith(s) and len(key) > len(s)), None)
        if suffix is None:
            bad.append(key)
            continue
        sets.setdefault(key[: -len(suffix)], {})[suffix[1:]] = arr
    if bad:
        raise InputValidationError(
            f"unexpected key(s) {sorted(bad)}; every key must be <set>_logits, <set>_labels, <set>_features or "
            "<set>_partner (e.g. reference_logits, reference_labels, fog_logits, fog_labels)"
        )
    return sets


def _labelled(set_name: str, parts: Mapping[str, np.ndarray], n_classes: int | None) -> LabelledLogits:
    missing = [k for k in ("logits", "labels") if k not in parts]
    if missing:
        have = ", ".join(f"{set_name}_{k}" for k in parts)
        raise InputValidationError(
            f"set {set_name!r}: missing {', '.join(f'{set_name}_{k}' for k in missing)} (found {have})"
        )
    z = check_logits(parts["logits"], f"{set_name}_logits")
    if n_classes is not None and z.shape[1] != n_classes:
        raise InputValidationError(
            f"{set_name}_logits: expected {n_classes} columns (classes) like reference_logits, got shape {z.shape}"
        )
    y = check_labels(parts["labels"], f"{set_name}_labels", n_classes=z.shape[1], n=z.shape[0])
    return LabelledLogits(z, y)


def task_from_arrays(
    arrays: Mapping[str, np.ndarray], *, name: str = "byod", info: dict | None = None
) -> ShiftTask:
    """A ``"byod"`` :class:`ShiftTask` from arrays keyed as in the module docstring (e.g. ``dict(np.load(f))``).

    Raises
    ------
    InputValidationError
        Missing reference or target sets, a logits/labels pair incomplete, shapes that disagree, NaN/inf logits,
        fewer than 2 classes, labels outside ``[0, K)``, a meta-set of 1 or 2 sets, features/partner on only
        some sets.  Each message names the offending key.
    """
    sets = _group(arrays)
    if "reference" not in sets:
        raise InputValidationError(
            f"missing the labelled reference set: expected keys reference_logits and reference_labels "
            f"(found sets {sorted(sets)})"
        )
    reference = _labelled("reference", sets["reference"], None)
    k = reference.n_classes
    targets, meta = {}, {}
    for set_name in sorted(set(sets) - {"reference"}):
        ll = _labelled(set_name, sets[set_name], k)
        (meta if set_name.startswith("meta_") else targets)[set_name] = ll
    if not targets:
        raise InputValidationError(
            "no target set: expected at least one pair <set>_logits, <set>_labels besides the reference "
            "(and the meta_* sets)"
        )
    if meta and len(meta) < 3:
        raise InputValidationError(
            f"meta-set: expected none or at least 3 meta_<name>_logits/labels sets, got {len(meta)} ({sorted(meta)})"
        )
    all_sets = {"reference": reference, **targets, **meta}
    extras: dict[str, dict[str, np.ndarray]] = {"features": {}, "partner": {}}
    for what in extras:
        have = {s for s, parts in sets.items() if what in parts}
        if not have:
            continue
        missing = sorted(set(all_sets) - have)
        if missing:
            raise InputValidationError(
                f"{what}: given for some sets but missing for {missing}; give all or none"
            )
        for s, ll in all_sets.items():
            arr = check_matrix(arrays[f"{s}_{what}"], f"{s}_{what}")
            if arr.shape[0] != ll.n or (what == "partner" and arr.shape[1] != k):
                want = f"({ll.n}, {k})" if what == "partner" else f"({ll.n}, d)"
                raise InputValidationError(f"{s}_{what}: expected shape {want}, got {arr.shape}")
            extras[what][s] = arr
    try:
        return ShiftTask(
            name=name,
            family="byod",
            reference=reference,
            targets=targets,
            meta=meta,
            partner=extras["partner"],
            features=extras["features"],
            info=dict(info or {}),
        )
    except InputValidationError as exc:
        raise InputValidationError(f"saved logits: {exc}") from exc


def load_logits_task(path: Path, *, name: str | None = None) -> ShiftTask:
    """Read saved logits from ``path`` (``.npz`` or folder) into a ``"byod"`` task named ``byod/<stem>``."""
    arrays, digest = read_arrays(path)
    info = {"kind": "logits", "source": str(path), "sha256": digest}
    return task_from_arrays(arrays, name=name or f"byod/{path.stem}", info=info)
