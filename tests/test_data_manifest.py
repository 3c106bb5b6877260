"""The project-side manifest, file verification (ChecksumError), missing data (DataNotFoundError) and the CLI."""

from __future__ import annotations

import argparse
import gzip
import io
import re
import shutil

import pytest

import helpers.data as hd
from helpers.data import files as files_mod
from helpers.data.cli import add_data_parser, cmd_check, cmd_list
from helpers.data.manifest import DATASETS, FILES, datasets_using
from helpers.errors import ChecksumError, DataNotFoundError, UnknownNameError
from helpers.paths import data_dir

SHARED = data_dir()
HAVE_DATA = (SHARED / "pos" / "universal_tagset.zip").is_file()
needs_data = pytest.mark.skipif(
    not HAVE_DATA, reason=f"data directory {SHARED} has no data; set HELPERS_DATA (CI: ../shared/data)"
)
SMALL = "pos/universal_tagset.zip"  # 15 KB


@pytest.fixture(autouse=True)
def _fresh_cache():
    files_mod.clear_verified_cache()
    yield
    files_mod.clear_verified_cache()


def test_manifest_is_consistent():
    assert len(FILES) == 49
    used = {f for e in DATASETS.values() for f in e.files}
    assert used == set(FILES)
    for rel, entry in FILES.items():
        assert re.fullmatch(r"[0-9a-f]{64}", entry.sha256) and entry.size > 0
        assert datasets_using(rel)
        if rel.endswith(".gz"):
            assert entry.raw_sha256, rel
    for entry in DATASETS.values():
        assert entry.sources and entry.license and entry.origin
        assert all(s.url.startswith("https://") for s in entry.sources)
    assert "/work" not in repr(FILES) + repr(DATASETS)


@pytest.mark.skipif(not (SHARED / "MANIFEST.md").is_file(), reason="no MANIFEST.md in the data directory")
def test_manifest_matches_manifest_md():
    text = (SHARED / "MANIFEST.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\S+) \| (\d+) \| .*? \| `([0-9a-f]{64})` \|", text, flags=re.M)
    table = {path: (int(size), sha) for path, size, sha in rows}
    assert table == {rel: (e.size, e.sha256) for rel, e in FILES.items()}


@needs_data
def test_real_files_verify_and_cache(monkeypatch):
    path = hd.require("universal_tagset", SMALL)
    assert path == SHARED / SMALL
    calls = []
    real = files_mod.sha256_file
    monkeypatch.setattr(files_mod, "sha256_file", lambda p, **k: calls.append(p) or real(p, **k))
    hd.require("universal_tagset", SMALL)
    assert calls == []  # verified once per process (path, size, mtime)


def _tmp_data(tmp_path, monkeypatch, *rels):
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / rel, tmp_path / rel)
    monkeypatch.setenv("HELPERS_DATA", str(tmp_path))
    return tmp_path


@needs_data
def test_corrupted_file_raises_checksum_error(tmp_path, monkeypatch):
    root = _tmp_data(tmp_path, monkeypatch, SMALL)
    data = bytearray((root / SMALL).read_bytes())
    data[100] ^= 0xFF
    (root / SMALL).write_bytes(bytes(data))
    with pytest.raises(ChecksumError) as err:
        hd.load("universal_tagset")
    msg = str(err.value)
    assert str(root / SMALL) in msg and FILES[SMALL].sha256 in msg
    assert files_mod.sha256_file(root / SMALL) in msg
    args = argparse.Namespace(names=["universal_tagset"])
    out = io.StringIO()
    assert cmd_check(args, out=out) == 1
    assert "MISMATCH" in out.getvalue() and "python -m helpers data fetch universal_tagset" in out.getvalue()


@needs_data
def test_file_replaced_after_verification_is_checked_again(tmp_path, monkeypatch):
    root = _tmp_data(tmp_path, monkeypatch, SMALL)
    hd.load("universal_tagset")
    (root / SMALL).write_bytes(b"not a zip")
    with pytest.raises(ChecksumError):
        hd.load("universal_tagset")


@needs_data
def test_recompressed_gzip_is_accepted_by_content(tmp_path, monkeypatch):
    rel = "scan/simple_split/tasks_test_simple.txt.gz"
    root = _tmp_data(tmp_path, monkeypatch, rel)
    raw = gzip.decompress((root / rel).read_bytes())
    (root / rel).write_bytes(gzip.compress(raw, compresslevel=1, mtime=0))  # other bytes, same content
    assert len(hd.load("scan_simple", part="test")) == 4182
    (root / rel).write_bytes(gzip.compress(raw[:-10], mtime=0))
    files_mod.clear_verified_cache()
    with pytest.raises(ChecksumError, match="content sha256"):
        hd.load("scan_simple", part="test")


def test_missing_file_names_dataset_path_dir_and_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError) as err:
        hd.load("scan_length")
    msg = str(err.value)
    assert "'scan_length'" in msg and "scan/length_split/tasks_train_length.txt.gz" in msg
    assert str(tmp_path) in msg and "python -m helpers data fetch scan_length" in msg
    assert isinstance(err.value, FileNotFoundError)


def test_missing_data_dir(tmp_path, monkeypatch):
    missing = tmp_path / "nope"
    monkeypatch.setenv("HELPERS_DATA", str(missing))
    with pytest.raises(DataNotFoundError, match="does not exist") as err:
        hd.load("imdb")
    assert "python -m helpers data fetch imdb" in str(err.value)
    out = io.StringIO()
    assert cmd_check(argparse.Namespace(names=[]), out=out) == 1
    assert "does not exist" in out.getvalue() and "HELPERS_DATA" in out.getvalue()


def test_require_unknown_dataset():
    with pytest.raises(UnknownNameError):
        hd.require("nope", SMALL)


def test_cli_parser_wiring(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HELPERS_DATA", str(tmp_path))
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_data_parser(sub)
    args = parser.parse_args(["data", "list"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "imdb" in out and "missing" in out and "digits" in out
    args = parser.parse_args(["data", "check"])
    assert args.func(args) == 1
    assert "python -m helpers data fetch" in capsys.readouterr().out
    args = parser.parse_args(["data", "fetch", "digits"])
    assert args.func(args) == 1
    assert "embedded" in capsys.readouterr().out


def test_cli_check_unset_env_is_clean(monkeypatch, tmp_path):
    import helpers.data.cli as cli

    monkeypatch.delenv("HELPERS_DATA", raising=False)
    monkeypatch.setattr(cli, "data_dir", lambda: tmp_path / "absent")
    out = io.StringIO()
    assert cmd_check(argparse.Namespace(names=[]), out=out) == 1
    assert "Traceback" not in out.getvalue() and "HELPERS_DATA" in out.getvalue()


@needs_data
def test_cli_check_real_data_passes():
    out = io.StringIO()
    assert cmd_check(argparse.Namespace(names=[]), out=out) == 0, out.getvalue()
    assert "49/49 files present and matching" in out.getvalue()
    assert cmd_list(argparse.Namespace(), out=io.StringIO()) == 0
