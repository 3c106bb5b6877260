"""Rebuild the data directory from the public original sources: download, then convert.

``python -m helpers data fetch NAME`` downloads each :class:`~helpers.data.manifest.Source` of a dataset (URLs
pinned to the snapshot commits listed in ``data/README.md``) into a temporary folder, converts it with one of the
pure functions below, verifies the result against the manifest, and only then moves it into the data directory.
The conversions are plain functions of local files, so they are tested on small archives built by the tests.

Archives are extracted with :func:`safe_extract`, which refuses members with absolute paths, ``..`` components,
links or device files (no path traversal).
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from helpers.data.files import content_sha256, sha256_file
from helpers.data.manifest import DATASETS, FILES, DatasetEntry, Source
from helpers.errors import ChecksumError, HelpersError, InputValidationError, UnknownNameError
from helpers.paths import data_dir

__all__ = [
    "FetchError",
    "download",
    "safe_extract",
    "gzip_reproducible",
    "build_imdb_csv",
    "build_amazon",
    "build_cifar_npz",
    "find_folder",
    "fetch_dataset",
]

Downloader = Callable[[str, Path], Path]


class FetchError(HelpersError, RuntimeError):
    """A download failed (no network, HTTP error) or a downloaded archive is unusable."""


# --------------------------------------------------------------------------------------------- download


def download(url: str, dst: Path, *, timeout: float = 60.0) -> Path:
    """Download ``url`` to the file ``dst`` (one attempt, TLS verified; no retry loop).

    Raises
    ------
    FetchError
        On any network or HTTP error, with a message saying that the machine may have no internet access.
    """
    if not url.startswith(("https://", "http://", "file://")):
        raise FetchError(f"refusing to download from {url!r}: only http(s) and file URLs are supported")
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(dst, "wb") as out:  # noqa: S310
            shutil.copyfileobj(resp, out, length=1 << 20)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        dst.unlink(missing_ok=True)
        raise FetchError(
            f"could not download {url}: {exc}. This machine may have no internet access; run the fetch on a "
            "machine that has, then copy the data directory here and point $HELPERS_DATA at it."
        ) from exc
    return dst


# ------------------------------------------------------------------------------------------------ archives


def _safe_member_path(name: str) -> PurePosixPath:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise FetchError(f"archive member {name!r} has an absolute path; refusing to extract")
    if any(part == ".." for part in p.parts):
        raise FetchError(
            f"archive member {name!r} points outside the target folder ('..'); refusing to extract"
        )
    return p


def safe_extract(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> list[Path]:
    """Extract a zip or tar archive (any compression) into ``dest`` without path traversal.

    Every member is checked before anything is written: absolute paths, ``..`` components, and in tar files
    symbolic/hard links and device or FIFO members are refused.

    Returns
    -------
    list of pathlib.Path
        The regular files written.

    Raises
    ------
    FetchError
        An unsafe member, or a file that is neither zip nor tar.
    """
    archive, dest = Path(archive), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()

    def target(name: str) -> Path:
        out = (root / _safe_member_path(name)).resolve()
        if out != root and root not in out.parents:
            raise FetchError(f"archive member {name!r} resolves outside {root}; refusing to extract")
        return out

    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            return _write_members(_zip_members(zf), target)
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            return _write_members(_tar_members(tf), target)
    raise FetchError(f"{archive} is neither a zip nor a tar archive")


def _zip_members(zf: zipfile.ZipFile) -> list[tuple[str, bool, Callable]]:
    """(name, is folder, opener) of every zip member; a symbolic link is refused."""
    out = []
    for info in zf.infolist():
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            raise FetchError(f"archive member {info.filename!r} is a symbolic link; refusing to extract")
        out.append((info.filename, info.is_dir(), lambda info=info: zf.open(info)))
    return out


def _tar_members(tf: tarfile.TarFile) -> list[tuple[str, bool, Callable]]:
    """(name, is folder, opener) of every tar member; links and special files are refused."""
    out = []
    for m in tf.getmembers():
        if not (m.isfile() or m.isdir()):
            raise FetchError(f"archive member {m.name!r} is a link or special file; refusing to extract")

        def opener(m=m):
            src = tf.extractfile(m)
            if src is None:
                raise FetchError(f"cannot read archive member {m.name!r}")
            return src

        out.append((m.name, m.isdir(), opener))
    return out


def _write_members(members: list[tuple[str, bool, Callable]], target: Callable[[str], Path]) -> list[Path]:
    """Check every member's destination first (``target`` refuses escapes), then write folders and files."""
    for name, _, _ in members:
        target(name)
    written = []
    for name, is_dir, opener in members:
        out = target(name)
        if is_dir:
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        with opener() as src, open(out, "wb") as fh:
            shutil.copyfileobj(src, fh, length=1 << 20)
        written.append(out)
    return written


def find_folder(root: str | os.PathLike[str], name: str) -> Path:
    """The shallowest folder called ``name`` under ``root`` (archives of GitHub repos add a ``repo-<sha>/`` level)."""
    root = Path(root)
    if root.name == name and root.is_dir():
        return root
    hits = sorted((p for p in root.rglob(name) if p.is_dir()), key=lambda p: (len(p.parts), str(p)))
    if not hits:
        raise FetchError(f"no folder named {name!r} in the downloaded archive (under {root})")
    return hits[0]


# --------------------------------------------------------------------------------------------- conversions


def gzip_reproducible(src: str | os.PathLike[str] | bytes, dst: str | os.PathLike[str]) -> Path:
    """Compress like ``gzip -9 -n`` (no name, no timestamp): the same input always gives the same bytes.

    Uses the system ``gzip`` when present (byte-identical to the data mirror's files); otherwise Python's
    :mod:`gzip` with ``mtime=0`` (same content, possibly different compressed bytes; the manifest's content hash
    accepts both).
    """
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    data = src if isinstance(src, bytes) else Path(src).read_bytes()
    exe = shutil.which("gzip")
    if exe:
        proc = subprocess.run([exe, "-9", "-n", "-c"], input=data, stdout=subprocess.PIPE, check=True)
        dst.write_bytes(proc.stdout)
    else:
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buf, mtime=0) as gz:
            gz.write(data)
        dst.write_bytes(buf.getvalue())
    return dst


_IMDB_NAME = re.compile(r"^(\d+)_(\d+)\.txt$")


def build_imdb_csv(root: str | os.PathLike[str], dst: str | os.PathLike[str]) -> int:
    """Build ``imdb.csv.gz`` from an aclImdb-style folder ``root/{train,val,test}/{neg,pos}/<id>_<rating>.txt``.

    Columns ``text`` (file content verbatim), ``label`` (0 neg, 1 pos), ``split``, ``source_file`` (path relative
    to ``root``); rows ordered by split (train, val, test; missing splits skipped, so the original Stanford
    release without ``val`` works too), neg before pos, numeric id. CSV: UTF-8, header, minimal RFC-4180 quoting,
    LF line ends; compressed with :func:`gzip_reproducible`.

    Returns
    -------
    int
        Number of rows written.
    """
    root = Path(root)
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(["text", "label", "split", "source_file"])
    n = 0
    for split in ("train", "val", "test"):
        for label, pol in ((0, "neg"), (1, "pos")):
            folder = root / split / pol
            if not folder.is_dir():
                continue
            files = [(int(m.group(1)), f) for f in folder.iterdir() if (m := _IMDB_NAME.match(f.name))]
            for _, f in sorted(files):
                text = f.read_bytes().decode("utf-8")
                writer.writerow([text, label, split, f"{split}/{pol}/{f.name}"])
                n += 1
    if n == 0:
        raise FetchError(f"no reviews found under {root} (expected train|val|test/neg|pos/<id>_<rating>.txt)")
    gzip_reproducible(buf.getvalue().encode("utf-8"), dst)
    return n


_AMAZON_FOLDERS = {
    "books": "books",
    "dvd": "dvd",
    "electronics": "electronics",
    "kitchen": "kitchen_&_housewares",
}


def build_amazon(root: str | os.PathLike[str], dst_dir: str | os.PathLike[str]) -> list[Path]:
    """Build ``{domain}_{positive,negative}.review.gz`` from Blitzer's ``sorted_data_acl`` folder.

    ``kitchen_&_housewares`` is renamed ``kitchen``; files are compressed with :func:`gzip_reproducible`.
    """
    root, dst_dir = Path(root), Path(dst_dir)
    out = []
    for short, folder in _AMAZON_FOLDERS.items():
        for pol in ("positive", "negative"):
            src = root / folder / f"{pol}.review"
            if not src.is_file():
                raise FetchError(f"missing {src} in the downloaded sorted_data_acl folder")
            out.append(gzip_reproducible(src, dst_dir / f"{short}_{pol}.review.gz"))
    return out


def build_cifar_npz(
    root: str | os.PathLike[str], dst: str | os.PathLike[str], *, classes: tuple[str, ...] | None = None
) -> int:
    """Build ``cifar10_test_jpeg.npz`` from class folders ``root/<class>/<number>.jpg``.

    Images are decoded with Pillow (``convert('RGB')``) into ``x`` uint8 ``(n, H, W, 3)`` and ``y`` int64
    (index in ``classes``, default the CIFAR-10 order), ordered by class then numeric file name, and saved with
    :func:`numpy.savez_compressed`.

    Returns
    -------
    int
        Number of images.
    """
    import numpy as np
    from PIL import Image

    from helpers.data.vision import CIFAR10_CLASSES

    root = Path(root)
    classes = CIFAR10_CLASSES if classes is None else classes
    xs, ys = [], []
    for k, cls in enumerate(classes):
        folder = root / cls
        if not folder.is_dir():
            raise FetchError(f"missing class folder {folder}")
        files = sorted(
            (f for f in folder.iterdir() if f.suffix.lower() in (".jpg", ".jpeg", ".png")),
            key=lambda f: (int(f.stem) if f.stem.isdigit() else 1 << 62, f.name),
        )
        for f in files:
            with Image.open(f) as im:
                xs.append(np.asarray(im.convert("RGB"), dtype=np.uint8))
            ys.append(k)
    if not xs:
        raise FetchError(f"no images under {root}")
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as fh:
        np.savez_compressed(fh, x=np.stack(xs), y=np.asarray(ys, dtype=np.int64))
    return len(xs)


# ------------------------------------------------------------------------------------------------- driver


def _verify_built(path: Path, rel: str) -> None:
    entry = FILES[rel]
    if sha256_file(path) == entry.sha256:
        return
    if entry.raw_sha256 and content_sha256(path) == entry.raw_sha256:
        return
    raise ChecksumError(
        f"fetched {rel} does not match the manifest (sha256 expected {entry.sha256}, content sha256 expected "
        f"{entry.raw_sha256}); the source may have changed; it was not installed. Use --no-verify to keep it anyway."
    )


def _convert(src: Source, downloaded: Path, work: Path, out: Path) -> list[str]:
    """Turn one downloaded source into data files under ``out``; returns their manifest paths."""
    if src.how == "copy":
        (out / src.target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(downloaded, out / src.target)
        return [src.target]
    if src.how == "gzip":
        gzip_reproducible(downloaded, out / src.target)
        return [src.target]
    extracted = work / "extracted"
    safe_extract(downloaded, extracted)
    folder = find_folder(extracted, src.member)
    if src.how == "imdb_archive":
        build_imdb_csv(folder, out / src.target)
        return [src.target]
    if src.how == "amazon_archive":
        paths = build_amazon(folder, out / src.target)
        return [f"{src.target}/{p.name}" for p in paths]
    if src.how == "cifar_archive":
        build_cifar_npz(folder, out / src.target)
        return [src.target]
    if src.how == "cifar_python_batch":  # read without unpickling (helpers.data.cifar_batch)
        from helpers.data.cifar_batch import build_cifar_original_npz

        build_cifar_original_npz(Path(folder) / "test_batch", out / src.target, n=1017)
        return [src.target]
    raise ValueError(f"unknown conversion recipe {src.how!r}")


def fetch_dataset(
    name: str,
    *,
    dest: str | os.PathLike[str] | None = None,
    downloader: Downloader | None = None,
    verify: bool = True,
) -> list[Path]:
    """Download and convert dataset ``name`` into ``dest`` (default: the data directory).

    Parameters
    ----------
    name : str
        A dataset of :data:`helpers.data.manifest.DATASETS` (embedded datasets need no fetch).
    dest : path-like, keyword-only
        Data directory to fill; default :func:`helpers.paths.data_dir`.
    downloader : callable ``(url, dst_path) -> dst_path``, keyword-only
        Replaces :func:`download` (tests pass a local one).
    verify : bool, keyword-only
        Check every built file against the manifest (sha256 or content sha256) before installing it.

    Returns
    -------
    list of pathlib.Path
        The installed files.

    Raises
    ------
    UnknownNameError, FetchError, ChecksumError
    """
    if name not in DATASETS:
        raise UnknownNameError("fetchable dataset", name, list(DATASETS))
    entry: DatasetEntry = DATASETS[name]
    dest = Path(dest) if dest is not None else data_dir()
    get = downloader or download
    installed: list[Path] = []
    with tempfile.TemporaryDirectory(prefix=f"helpers-fetch-{name}-") as tmp:
        tmp = Path(tmp)
        built: list[str] = []
        for i, src in enumerate(entry.sources):
            work = tmp / f"src{i}"
            work.mkdir()
            downloaded = get(src.url, work / (PurePosixPath(src.url.split("?")[0]).name or "download"))
            built += _convert(src, downloaded, work, tmp / "out")
        missing = set(entry.files) - set(built)
        if missing:
            raise FetchError(f"{name}: the sources did not produce {sorted(missing)}")
        for rel in entry.files:
            if verify:
                _verify_built(tmp / "out" / rel, rel)
        for rel in entry.files:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(tmp / "out" / rel), target)
            installed.append(target)
    return installed


def check_fetch_name(name: str) -> None:
    """Raise :class:`InputValidationError` for names that need no fetch (embedded datasets)."""
    from helpers.data import EMBEDDED

    if name in EMBEDDED:
        raise InputValidationError(
            f"{name!r} is embedded (generated or shipped with scikit-learn); nothing to fetch"
        )
