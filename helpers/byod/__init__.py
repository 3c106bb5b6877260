"""Bring your own data: a user's dataset → a :class:`~helpers.benchmark.task.ShiftTask` for the benchmark.

>>> from helpers.byod import load_task
>>> task = load_task("my_data.csv", seed=0)                       # doctest: +SKIP
>>> from helpers.benchmark import run_benchmark
>>> run_benchmark([task]).to_df()                                 # doctest: +SKIP

Kinds (``kind="auto"`` picks one from the path, see :func:`detect_kind`):

==========  ==========================================  =================================================
kind        input                                       format and what is done
==========  ==========================================  =================================================
``logits``  ``.npz`` file, or folder of ``.npy/.npz``   saved logits and labels, :mod:`helpers.byod.logits`
``text``    ``.csv`` / ``.jsonl`` (text, label, split)  light text model trained, :mod:`helpers.byod.text`
``images``  folder ``root/<split>/<class>/*.png``       small CNN trained, :mod:`helpers.byod.images`
==========  ==========================================  =================================================

Every task has family ``"byod"``, the user's reference set, one target per other split / saved set and
(for text and images, or when saved) a meta-set of synthetic shifts for the regression-based methods.
"""

from __future__ import annotations

import os
from typing import Any

from helpers.benchmark.task import ShiftTask
from helpers.byod.common import resolve_path
from helpers.byod.images import IMAGE_OPTIONS, IMAGE_SUFFIXES, load_image_task
from helpers.byod.logits import load_logits_task, task_from_arrays
from helpers.byod.text import TEXT_OPTIONS, load_text_task
from helpers.errors import InputValidationError, UnknownNameError

__all__ = [
    "KINDS",
    "TEXT_OPTIONS",
    "IMAGE_OPTIONS",
    "detect_kind",
    "load_task",
    "task_from_arrays",
]

KINDS = ("auto", "logits", "text", "images")
_ACCEPTED = (
    "a .npz file or a folder of .npy/.npz files (kind='logits'), a .csv or .jsonl file with columns text, label, "
    "split (kind='text'), or a folder root/<split>/<class>/<images> (kind='images')"
)


def detect_kind(path: str | os.PathLike) -> str:
    """``"logits"``, ``"text"`` or ``"images"`` for an existing ``path``.

    ``.npz`` → logits; ``.csv``/``.jsonl``/``.ndjson`` → text; a folder with ``.npy``/``.npz`` files at its top →
    logits; a folder with images two levels down (``root/<split>/<class>/``) → images.

    Raises
    ------
    InputValidationError
        Anything else; the message lists what is accepted.
    """
    p = resolve_path(path)
    if p.is_file():
        suffix = p.suffix.lower()
        if suffix == ".npz":
            return "logits"
        if suffix in (".csv", ".jsonl", ".ndjson"):
            return "text"
        raise InputValidationError(
            f"{p.name}: cannot tell the kind of a {suffix or 'suffix-less'} file; expected {_ACCEPTED}"
        )
    if any(f.suffix in (".npy", ".npz") for f in p.iterdir() if f.is_file()):
        return "logits"
    for split_dir in (d for d in p.iterdir() if d.is_dir()):
        for class_dir in (d for d in split_dir.iterdir() if d.is_dir()):
            if any(f.suffix.lower() in IMAGE_SUFFIXES for f in class_dir.iterdir() if f.is_file()):
                return "images"
    raise InputValidationError(
        f"{p}: found no logits arrays and no images in the expected layout; expected {_ACCEPTED}"
    )


def load_task(path: str | os.PathLike, *, kind: str = "auto", seed: int = 0, **options: Any) -> ShiftTask:
    """Load a user's dataset as a ``"byod"`` :class:`ShiftTask`.

    Parameters
    ----------
    path : str or path-like
        File or folder (see the module table).  A relative path is looked up in the current directory, then in
        the repository root.
    kind : {"auto", "logits", "text", "images"}, keyword-only
        ``"auto"`` decides from the path with :func:`detect_kind`.
    seed : int, keyword-only
        Seed of model initialisation, training order and meta-set perturbations (text and images); part of the
        cache key.  Ignored for saved logits.
    **options
        Kind-specific options: :data:`~helpers.byod.text.TEXT_OPTIONS`, :data:`~helpers.byod.images.IMAGE_OPTIONS`;
        ``name`` (task name, default ``"byod/<stem>"``) for every kind.  An unknown option is an error.

    Raises
    ------
    DataNotFoundError
        ``path`` is empty or does not exist, or a folder holds nothing usable.
    UnknownNameError
        ``kind`` is not one of :data:`KINDS`.
    InputValidationError
        The data breaks its format; the message names what was expected.
    """
    if kind not in KINDS:
        raise UnknownNameError("byod kind", str(kind), list(KINDS))
    p = resolve_path(path)
    if kind == "auto":
        kind = detect_kind(p)
    if kind == "logits":
        unknown = sorted(set(options) - {"name"})
        if unknown:
            raise InputValidationError(
                f"load_task(kind='logits'): unknown option(s) {unknown}; accepted: name"
            )
        return load_logits_task(p, name=options.get("name"))
    if kind == "text":
        if not p.is_file():
            raise InputValidationError(f"{p}: kind='text' expects a .csv or .jsonl file, got a folder")
        return load_text_task(p, seed=seed, **options)
    if not p.is_dir():
        raise InputValidationError(
            f"{p}: kind='images' expects a folder root/<split>/<class>/<images>, got a file"
        )
    return load_image_task(p, seed=seed, **options)
