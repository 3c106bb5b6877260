"""The original CIFAR-10 test batch read without unpickling (helpers.data.cifar_batch), on batches built here."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from helpers.data.cifar_batch import build_cifar_original_npz, read_test_batch
from helpers.errors import InputValidationError


def _py2_pickle(labels, data: bytes) -> bytes:
    """A batch as Python 2 wrote it: the rows are one BINSTRING (opcode T, 4-byte length, raw bytes)."""
    out = bytearray(b"\x80\x02}q\x00(U\x06labelsq\x01]q\x02(")
    for v in labels:
        out += b"K" + bytes([v])
    out += b"eU\x04dataq\x03T" + len(data).to_bytes(4, "little") + data + b"q\x04u."
    return bytes(out)


def _batch(tmp_path, n=12, protocol=2):
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
    labels = [int(v) for v in rng.integers(0, 10, n)]
    path = tmp_path / "test_batch"
    if protocol == 2:
        path.write_bytes(_py2_pickle(labels, rows.tobytes()))
    else:
        obj = {"batch_label": "testing batch 1 of 1", "labels": labels, "data": rows.tobytes()}
        path.write_bytes(pickle.dumps(obj, protocol=protocol))
    return path, rows, labels


@pytest.mark.parametrize("protocol", [2, 4])
def test_reads_labels_and_rows_as_rgb_hwc(tmp_path, protocol):
    path, rows, labels = _batch(tmp_path, protocol=protocol)
    out = read_test_batch(path, n=5)
    assert out["x"].shape == (5, 32, 32, 3) and out["x"].dtype == np.uint8
    # row layout: 1024 R, then 1024 G, then 1024 B; pixel (i, j) of channel c is row[c * 1024 + 32 * i + j]
    assert out["x"][2, 3, 4, 1] == rows[2, 1024 + 32 * 3 + 4]
    assert out["y"].tolist() == labels[:5] and out["test_index"].tolist() == [0, 1, 2, 3, 4]
    assert len(read_test_batch(path)["y"]) == 12
    with pytest.raises(InputValidationError, match="n: the file holds 12 complete images"):
        read_test_batch(path, n=13)


def test_a_prefix_of_the_batch_gives_its_complete_rows(tmp_path):
    path, rows, labels = _batch(tmp_path, n=1000, protocol=2)
    raw = path.read_bytes()
    cut = raw.find(b"data") + 10 + 7 * 3072 + 1000  # 7 complete rows (and part of the 8th) after the header
    prefix = tmp_path / "prefix"
    prefix.write_bytes(raw[:cut])
    out = read_test_batch(prefix)
    assert len(out["y"]) == 7
    np.testing.assert_array_equal(out["x"].transpose(0, 3, 1, 2).reshape(len(out["y"]), -1), rows[: len(out["y"])])
    dst = tmp_path / "first.npz"
    assert build_cifar_original_npz(prefix, dst, n=6) == 6
    with np.load(dst) as d:
        assert sorted(d.files) == ["test_index", "x", "y"] and d["y"].tolist() == labels[:6]


def test_not_a_batch(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(pickle.dumps({"rows": b"x" * 10}, protocol=2))
    with pytest.raises(InputValidationError, match="not a CIFAR-10 python batch"):
        read_test_batch(bad)


def test_loader_of_the_original_images_in_test_order():
    from conftest import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("real data not found: set HELPERS_DATA")
    from helpers.data import load

    orig = load("cifar10_original")
    assert orig.x.shape == (1017, 32, 32, 3) and orig.x.dtype == np.uint8 and orig.y.dtype == np.int64
    assert orig.y[:10].tolist() == [3, 8, 8, 0, 6, 6, 1, 6, 3, 1]  # the official test set's first labels


def test_loader_of_the_original_images_fails_clearly(tmp_path, monkeypatch):
    """A data directory without the file: an error naming the file and the fetch command; a file that does not
    match the manifest's sha256: a checksum error (the loader never reads unverified images)."""
    from helpers.data import load
    from helpers.errors import ChecksumError, DataNotFoundError

    monkeypatch.setenv("HELPERS_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="cifar10_test_original_first1017.npz.*missing"):
        load("cifar10_original")
    (tmp_path / "vision").mkdir()
    np.savez(tmp_path / "vision" / "cifar10_test_original_first1017.npz", x=np.zeros((1, 32, 32, 3), np.uint8),
             y=np.zeros(1), test_index=np.zeros(1))  # fmt: skip
    with pytest.raises(ChecksumError):
        load("cifar10_original")
