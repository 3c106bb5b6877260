"""fetch: safe archive extraction, the pure conversion functions, and the download -> convert -> verify driver.

All archives are built by the tests in ``tmp_path``; nothing touches the network.
"""

from __future__ import annotations

import argparse
import gzip
import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers.data import fetch as F
from helpers.data.cli import cmd_fetch
from helpers.data.files import sha256_file
from helpers.data.manifest import DATASETS, FILES
from helpers.data.text import parse_amazon_reviews
from helpers.paths import data_dir

SHARED = data_dir()
needs_data = pytest.mark.skipif(
    not (SHARED / "scan" / "tasks.txt.gz").is_file(),
    reason=f"data directory {SHARED} has no data; set HELPERS_DATA (CI: ../shared/data)",
)


# ------------------------------------------------------------------------------------------ safe extraction


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _tar(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_safe_extract_ok(tmp_path):
    z = _zip(tmp_path / "a.zip", {"top/x.txt": b"x", "top/sub/y.txt": b"y"})
    t = _tar(tmp_path / "a.tar.gz", {"top/x.txt": b"x"})
    out = F.safe_extract(z, tmp_path / "oz")
    assert sorted(p.name for p in out) == ["x.txt", "y.txt"]
    assert (tmp_path / "oz" / "top" / "sub" / "y.txt").read_bytes() == b"y"
    assert F.safe_extract(t, tmp_path / "ot")[0].read_bytes() == b"x"


@pytest.mark.parametrize("bad", ["../evil.txt", "ok/../../evil.txt", "/abs/evil.txt", "C:/evil.txt"])
@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_safe_extract_rejects_traversal(tmp_path, bad, kind):
    members = {"fine.txt": b"ok", bad: b"evil"}
    arc = _zip(tmp_path / "a.zip", members) if kind == "zip" else _tar(tmp_path / "a.tar", members, "w")
    dest = tmp_path / "dest"
    with pytest.raises(F.FetchError, match="refusing"):
        F.safe_extract(arc, dest)
    assert not (tmp_path / "evil.txt").exists()
    assert not (dest / "fine.txt").exists()  # checked before anything is written


def test_safe_extract_rejects_links(tmp_path):
    arc = tmp_path / "l.tar"
    with tarfile.open(arc, "w") as tf:
        info = tarfile.TarInfo("link")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
    with pytest.raises(F.FetchError, match="link"):
        F.safe_extract(arc, tmp_path / "d")
    (tmp_path / "plain").write_bytes(b"not an archive")
    with pytest.raises(F.FetchError, match="neither"):
        F.safe_extract(tmp_path / "plain", tmp_path / "d2")


# ------------------------------------------------------------------------------------------- conversions


@pytest.mark.parametrize("system_gzip", [True, False])
def test_gzip_reproducible(tmp_path, monkeypatch, system_gzip):
    if not system_gzip:
        monkeypatch.setattr(F.shutil, "which", lambda name: None)
    data = b"IN: jump OUT: I_JUMP\n" * 100
    a = F.gzip_reproducible(data, tmp_path / "a.gz")
    (tmp_path / "src").write_bytes(data)
    b = F.gzip_reproducible(tmp_path / "src", tmp_path / "b.gz")
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()) == data
    assert a.read_bytes()[4:8] == b"\0\0\0\0"  # no timestamp


def _acl_imdb(root: Path, splits=("train", "val", "test")) -> Path:
    for split in splits:
        for pol, texts in (("neg", ["bad, really", 'said "awful"']), ("pos", ["great<br />film", "ok"])):
            folder = root / "aclImdb" / split / pol
            folder.mkdir(parents=True)
            for i, text in enumerate(texts):
                (folder / f"{10 - 9 * i}_{3 if pol == 'neg' else 8}.txt").write_text(text, encoding="utf-8")
            (folder / "urls.txt").write_text("ignored")
    return root / "aclImdb"


def test_build_imdb_csv(tmp_path):
    root = _acl_imdb(tmp_path)
    n = F.build_imdb_csv(root, tmp_path / "imdb.csv.gz")
    assert n == 12
    df = pd.read_csv(tmp_path / "imdb.csv.gz")
    assert list(df.columns) == ["text", "label", "split", "source_file"]
    assert df["split"].tolist() == ["train"] * 4 + ["val"] * 4 + ["test"] * 4
    assert df["source_file"].iloc[0] == "train/neg/1_3.txt"  # numeric id order: 1 before 10
    assert (
        df["text"].iloc[0] == 'said "awful"'
        and df["text"].iloc[1] == "bad, really"
        and df["label"].tolist()[:4] == [0, 0, 1, 1]
    )
    raw = gzip.decompress((tmp_path / "imdb.csv.gz").read_bytes())
    assert b"\r\n" not in raw and raw.startswith(b"text,label,split,source_file\n")
    F.build_imdb_csv(root, tmp_path / "again.csv.gz")
    assert sha256_file(tmp_path / "again.csv.gz") == sha256_file(tmp_path / "imdb.csv.gz")  # reproducible
    # the original Stanford layout has no val split
    assert F.build_imdb_csv(_acl_imdb(tmp_path / "stanford", ("train", "test")), tmp_path / "s.csv.gz") == 8
    with pytest.raises(F.FetchError):
        F.build_imdb_csv(tmp_path / "empty", tmp_path / "e.csv.gz")


def test_build_amazon_renames_kitchen(tmp_path):
    acl = tmp_path / "sorted_data_acl"
    review = "<review>\n<rating>\n5.0\n</rating>\n<review_text>\nNice & cheap\n</review_text>\n</review>\n"
    for folder in ("books", "dvd", "electronics", "kitchen_&_housewares"):
        (acl / folder).mkdir(parents=True)
        for pol in ("positive", "negative"):
            (acl / folder / f"{pol}.review").write_text(review)
    out = F.build_amazon(acl, tmp_path / "amazon")
    assert sorted(p.name for p in out) == sorted(
        f"{d}_{p}.review.gz"
        for d in ("books", "dvd", "electronics", "kitchen")
        for p in ("positive", "negative")
    )
    text = gzip.decompress((tmp_path / "amazon" / "kitchen_negative.review.gz").read_bytes()).decode()
    assert parse_amazon_reviews(text)[0]["review_text"] == "Nice & cheap"
    shutil.rmtree(acl / "dvd")
    with pytest.raises(F.FetchError, match="dvd"):
        F.build_amazon(acl, tmp_path / "amazon2")


def test_build_cifar_npz(tmp_path):
    from PIL import Image

    classes = ("cat", "dog")
    rng = np.random.default_rng(0)
    for cls in classes:
        (tmp_path / "test" / cls).mkdir(parents=True)
        for i in (10, 2, 1):
            arr = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
            Image.fromarray(arr).save(tmp_path / "test" / cls / f"{i:d}.jpg", quality=75)
    n = F.build_cifar_npz(tmp_path / "test", tmp_path / "c.npz", classes=classes)
    assert n == 6
    with np.load(tmp_path / "c.npz") as z:
        assert z["x"].shape == (6, 32, 32, 3) and z["x"].dtype == np.uint8
        assert z["y"].tolist() == [0, 0, 0, 1, 1, 1] and z["y"].dtype == np.int64
        with Image.open(tmp_path / "test" / "cat" / "2.jpg") as im:
            np.testing.assert_array_equal(z["x"][1], np.asarray(im.convert("RGB")))  # 1, 2, 10 numeric order


def test_find_folder(tmp_path):
    (tmp_path / "AMLM-abc" / "data" / "aclImdb").mkdir(parents=True)
    (tmp_path / "AMLM-abc" / "x" / "y" / "aclImdb").mkdir(parents=True)
    assert F.find_folder(tmp_path, "aclImdb") == tmp_path / "AMLM-abc" / "data" / "aclImdb"
    with pytest.raises(F.FetchError):
        F.find_folder(tmp_path, "sorted_data_acl")


# ------------------------------------------------------------------------------------------------- driver


def test_download_without_network_fails_clearly(tmp_path):
    with pytest.raises(F.FetchError, match="internet"):
        F.download("http://127.0.0.1:9/none.txt", tmp_path / "x", timeout=5)
    with pytest.raises(F.FetchError, match="only http"):
        F.download("ftp://example.org/x", tmp_path / "x")


def test_cmd_fetch_reports_failure_without_traceback(tmp_path):
    def offline(url, dst):
        raise F.FetchError(f"could not download {url}: no network")

    out = io.StringIO()
    args = argparse.Namespace(
        names=["scan_tasks", "nope"], dest=tmp_path, no_verify=False, downloader=offline
    )
    assert cmd_fetch(args, out=out) == 1
    text = out.getvalue()
    assert "fetch scan_tasks: failed: could not download" in text and "unknown" in text
    assert not (tmp_path / "scan").exists()


def _serve_from(mapping: dict[str, Path]):
    def downloader(url: str, dst: Path) -> Path:
        shutil.copyfile(mapping[url], dst)
        return dst

    return downloader


@needs_data
def test_fetch_gzip_source_end_to_end(tmp_path):
    (tmp_path / "origin").mkdir()
    raw = tmp_path / "origin" / "tasks.txt"
    raw.write_bytes(gzip.decompress((SHARED / "scan" / "tasks.txt.gz").read_bytes()))
    url = DATASETS["scan_tasks"].sources[0].url
    paths = F.fetch_dataset("scan_tasks", dest=tmp_path / "data", downloader=_serve_from({url: raw}))
    assert paths == [tmp_path / "data" / "scan" / "tasks.txt.gz"]
    entry = FILES["scan/tasks.txt.gz"]
    assert gzip.decompress(paths[0].read_bytes()) == raw.read_bytes()
    if shutil.which("gzip"):
        assert sha256_file(paths[0]) == entry.sha256  # byte-identical to the mirror with system gzip -9 -n
    # a changed source is refused and nothing is installed
    raw.write_bytes(raw.read_bytes()[:-50])
    with pytest.raises(F.ChecksumError):
        F.fetch_dataset("scan_tasks", dest=tmp_path / "data2", downloader=_serve_from({url: raw}))
    assert not (tmp_path / "data2").exists()


@needs_data
def test_fetch_amazon_archive_end_to_end(tmp_path):
    acl = {}
    for d, folder in (
        ("books", "books"),
        ("dvd", "dvd"),
        ("electronics", "electronics"),
        ("kitchen", "kitchen_&_housewares"),
    ):
        for pol in ("positive", "negative"):
            data = gzip.decompress((SHARED / "sentiment" / "amazon" / f"{d}_{pol}.review.gz").read_bytes())
            acl[f"domainadaption-f35a754/sorted_data_acl/{folder}/{pol}.review"] = data
    tarball = _tar(tmp_path / "repo.tar.gz", acl)
    url = DATASETS["amazon"].sources[0].url
    paths = F.fetch_dataset("amazon", dest=tmp_path / "data", downloader=_serve_from({url: tarball}))
    assert len(paths) == 8 and all(p.is_file() for p in paths)
