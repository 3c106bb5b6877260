"""``python -m helpers data {list,check,fetch}``: inspect, verify and rebuild the data directory.

Wiring (done in ``helpers/__main__.py``)::

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_data_parser(sub)
    args = parser.parse_args()
    sys.exit(args.func(args))

Every subcommand returns an exit code; none prints a traceback for a missing data directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from helpers.data.files import content_sha256, describe_data_dir, sha256_file
from helpers.data.manifest import DATASETS, FETCH_COMMAND, FILES
from helpers.errors import HelpersError
from helpers.paths import data_dir

__all__ = ["add_data_parser", "cmd_list", "cmd_check", "cmd_fetch"]


def _fmt_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


def add_data_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``data`` subcommand (``list``, ``check``, ``fetch``) to an argparse sub-parser set.

    Each leaf parser sets ``func`` (``args.func(args)`` returns an int exit code).
    """
    data = subparsers.add_parser("data", help="list, verify or fetch the datasets (see data/README.md)")
    data.set_defaults(func=lambda args: (data.print_help(), 2)[1])
    sub = data.add_subparsers(dest="data_command")

    p_list = sub.add_parser("list", help="datasets, their files, which are present and their sizes")
    p_list.set_defaults(func=cmd_list)

    p_check = sub.add_parser("check", help="verify the sha256 of every data file; exit 0 only if all match")
    p_check.add_argument("names", nargs="*", help="datasets to check (default: all)")
    p_check.set_defaults(func=cmd_check)

    p_fetch = sub.add_parser("fetch", help="download and rebuild datasets from their public sources")
    p_fetch.add_argument("names", nargs="+", metavar="NAME", help="dataset names, or 'all'")
    p_fetch.add_argument(
        "--dest", type=Path, default=None, help="data directory to fill (default: the one in use)"
    )
    p_fetch.add_argument("--no-verify", action="store_true", help="install even if hashes differ")
    p_fetch.set_defaults(func=cmd_fetch)
    return data


def cmd_list(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Print every dataset with its files, present or missing, and sizes. Always returns 0."""
    from helpers.data import EMBEDDED, list_datasets

    out = out or sys.stdout
    root = data_dir()
    print(f"data directory: {describe_data_dir(root)}", file=out)
    for name in list_datasets():
        if name in EMBEDDED:
            print(f"{name:24s} embedded (no files)", file=out)
            continue
        entry = DATASETS[name]
        present = [(rel, (root / rel).stat().st_size) for rel in entry.files if (root / rel).is_file()]
        total = sum(size for _, size in present)
        state = (
            "present" if len(present) == len(entry.files) else f"MISSING {len(entry.files) - len(present)}"
        )
        print(
            f"{name:24s} {state:10s} {len(present)}/{len(entry.files)} files  {_fmt_size(total):>9s}",
            file=out,
        )
        for rel in entry.files:
            path = root / rel
            size = _fmt_size(path.stat().st_size) if path.is_file() else "missing"
            print(f"    {rel:58s} {size:>9s}", file=out)
    return 0


def cmd_check(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Verify every file (or those of ``args.names``) against the manifest; 0 only if all present and matching."""
    out = out or sys.stdout
    root = data_dir()
    names = list(getattr(args, "names", None) or DATASETS)
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        print(f"unknown dataset(s): {', '.join(unknown)}; expected some of {', '.join(DATASETS)}", file=out)
        return 1
    if not root.is_dir():
        print(
            f"data directory {describe_data_dir(root)}.\n"
            "Set HELPERS_DATA to the data directory (CI uses HELPERS_DATA=../shared/data), or fetch the data with "
            f"'{FETCH_COMMAND.format(name='all')}'.",
            file=out,
        )
        return 1
    print(f"data directory: {describe_data_dir(root)}", file=out)
    bad: dict[str, list[str]] = {}
    n_ok = 0
    for rel in sorted({f for n in names for f in DATASETS[n].files}):
        entry, path = FILES[rel], root / rel
        users = [n for n in names if rel in DATASETS[n].files]
        if not path.is_file():
            status = "MISSING"
        else:
            actual = sha256_file(path)
            if actual == entry.sha256:
                status = "ok"
            elif entry.raw_sha256 and _content(path) == entry.raw_sha256:
                status = "ok (content)"
            else:
                status = f"MISMATCH sha256 {actual} (expected {entry.sha256})"
        if status.startswith("ok"):
            n_ok += 1
        else:
            for n in users:
                bad.setdefault(n, []).append(rel)
        print(f"  {status[:8] if status.startswith('ok') else status:10s} {rel}", file=out)
    total = len({f for n in names for f in DATASETS[n].files})
    print(f"{n_ok}/{total} files present and matching", file=out)
    if bad:
        if n_ok == 0 and "HELPERS_DATA" not in os.environ:
            print(
                "HELPERS_DATA is unset: point it at the data directory (CI: HELPERS_DATA=../shared/data).",
                file=out,
            )
        for n, rels in bad.items():
            print(
                f"dataset {n!r} is missing or corrupted ({', '.join(rels)}): {FETCH_COMMAND.format(name=n)}",
                file=out,
            )
        return 1
    return 0


def _content(path: Path) -> str | None:
    try:
        return content_sha256(path)
    except Exception:
        return None


def cmd_fetch(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Download and rebuild the named datasets; 0 if all succeeded, 1 otherwise (clear message, no traceback)."""
    from helpers.data.fetch import check_fetch_name, fetch_dataset

    out = out or sys.stdout
    names = list(DATASETS) if list(args.names) == ["all"] else list(args.names)
    status = 0
    for name in names:
        try:
            check_fetch_name(name)
            paths = fetch_dataset(
                name,
                dest=getattr(args, "dest", None),
                verify=not getattr(args, "no_verify", False),
                downloader=getattr(args, "downloader", None),
            )
        except HelpersError as exc:
            print(f"fetch {name}: failed: {exc}", file=out)
            status = 1
            continue
        for p in paths:
            print(f"fetch {name}: installed {p}", file=out)
    return status
