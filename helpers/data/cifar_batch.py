"""The original CIFAR-10 test images from the official python batch, read without unpickling.

The python version of CIFAR-10 (``cifar-10-batches-py/test_batch``, Krizhevsky 2009) is a pickle of a dict with
``labels`` (10,000 ints) and ``data`` (a 10,000 x 3,072 uint8 array, each row 1,024 R, 1,024 G, 1,024 B values).
Unpickling runs code named by the file, so it is never done here: :func:`read_test_batch` walks the pickle's
opcodes with :func:`pickletools.genops` (which only decodes them) and takes the integers after the ``labels`` key and
the one byte string long enough to hold the image rows.  It also reads a *prefix* of the file (the data directory's
``cifar10_test_original_first1017.npz`` was built from a 3 MiB prefix holding all labels and the first 1,017 rows).
"""

from __future__ import annotations

import io
import os
import pickletools
from pathlib import Path

import numpy as np

from helpers.errors import InputValidationError

__all__ = ["read_test_batch", "build_cifar_original_npz"]

ROW = 3 * 32 * 32


def read_test_batch(path: str | os.PathLike[str], *, n: int | None = None) -> dict[str, np.ndarray]:
    """``x`` uint8 (n, 32, 32, 3) RGB HWC, ``y`` int64 (n,) and ``test_index`` (0..n-1) of the first ``n`` images.

    ``n=None``: every complete image row the file holds.  A truncated file (a prefix) yields the complete rows in it.
    """
    raw = Path(path).read_bytes()
    labels: list[int] | None = None
    in_labels, data = False, b""
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(raw)):
            if isinstance(arg, (str, bytes)) and len(arg) < 64:
                key = arg.decode("latin-1") if isinstance(arg, bytes) else arg
                in_labels = key == "labels"
                if in_labels:
                    labels = []
                continue
            if in_labels and isinstance(arg, int) and op.name.startswith("BININT"):
                labels.append(int(arg))
            elif isinstance(arg, (str, bytes)) and len(arg) >= ROW:
                data = arg.encode("latin-1") if isinstance(arg, str) else arg
                break
    except ValueError:  # a prefix ends inside the data string: take the bytes that are there
        start = raw.find(b"labels")
        if labels is None or start < 0:
            raise InputValidationError(f"path: {path} is not a CIFAR-10 python batch (no 'labels' found)") from None
    if not data:  # the data string was cut off: its payload runs from after its length header to the end
        marker = _data_start(raw)
        data = raw[marker:]
    if not labels:
        raise InputValidationError(f"path: {path} is not a CIFAR-10 python batch (no labels found)")
    rows = len(data) // ROW
    n = min(rows, len(labels)) if n is None else int(n)
    if n > rows or n > len(labels):
        raise InputValidationError(f"n: the file holds {rows} complete images, {n} asked for")
    x = np.frombuffer(data[: n * ROW], dtype=np.uint8).reshape(n, 3, 32, 32).transpose(0, 2, 3, 1)
    return {"x": np.ascontiguousarray(x), "y": np.asarray(labels[:n], dtype=np.int64), "test_index": np.arange(n)}


def _data_start(raw: bytes) -> int:
    """Offset of the first byte of the image rows in a (possibly truncated) batch: after the length header of the
    string that follows the ``data`` key (BINSTRING / BINBYTES: opcode + 4-byte length; BINBYTES8: + 8 bytes)."""
    key = raw.find(b"data")
    if key < 0:
        raise InputValidationError("path: not a CIFAR-10 python batch (no 'data' key)")
    for op, width in ((b"T", 4), (b"B", 4), (b"\x8e", 8)):
        at = raw.find(op, key + 4)
        while at >= 0:
            length = int.from_bytes(raw[at + 1 : at + 1 + width], "little")
            if length >= ROW * 1000:  # the image rows of a batch: 10,000 x 3,072 bytes
                return at + 1 + width
            at = raw.find(op, at + 1)
    raise InputValidationError("path: no image data found after the 'data' key")


def build_cifar_original_npz(batch: str | os.PathLike[str], dst: str | os.PathLike[str], *, n: int = 1017) -> int:
    """Write ``x``, ``y``, ``test_index`` of the first ``n`` original test images to ``dst`` (compressed npz)."""
    arrays = read_test_batch(batch, n=n)
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    return n
