"""What a published notebook's outputs must not carry: machine paths, ``PosixPath`` reprs, warnings, raw record
dicts, progress bars, and outputs too long to read (:func:`clean_outputs`; :func:`output_problems` checks).

The executed notebook keeps everything; only the published copy (``docs/notebooks/``) is cleaned.  A path of the
machine that ran it (the repository, the virtual environment, the cache, the data, the home folder) becomes
``<repo>``, ``<venv>``, ... ; an output that is only a path, a list of paths or a record dict is dropped; a stderr
stream is dropped (what a notebook shows a reader goes to stdout or a display; stderr holds warnings, progress bars and
library log lines, e.g. matplotlib's ``findfont:`` notes while it rebuilds its font cache; an error is an ``error``
output and a failed notebook is not published); a text output over :data:`MAX_OUTPUT_CHARS` is cut there with
a note saying how long it was (the full table is in the run's ``figures/``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from helpers.paths import REPO_ROOT

__all__ = ["MAX_OUTPUT_CHARS", "clean_outputs", "output_problems", "machine_roots"]

MAX_OUTPUT_CHARS = 5_000
_PATH_REPR = re.compile(r"^\s*[\[(]?\s*(?:(?:Posix|Windows)?Path\('[^']*'\)\s*,?\s*)+[\])]?\s*$")
_RECORD_REPR = re.compile(r"^\{'notebook': .*'name': .*'value': ", re.S)
_WARNING = re.compile(r"(?:Warning|warnings\.warn)\b")


def machine_roots() -> dict[str, str]:
    """Folders of the machine that ran the notebooks, longest first, with the placeholder each becomes."""
    roots = {str(REPO_ROOT): "<repo>", sys.prefix: "<venv>", str(Path.home()): "<home>"}
    for var, name in (("HELPERS_CACHE", "<cache>"), ("HELPERS_DATA", "<data>"), ("HELPERS_RUNS", "<runs>")):
        if os.environ.get(var):
            roots[str(Path(os.environ[var]).expanduser().resolve())] = name
    return dict(sorted(((k, v) for k, v in roots.items() if len(k) > 1), key=lambda kv: -len(kv[0])))


def _text(output: dict) -> str:
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    return "".join((output.get("data") or {}).get("text/plain", ""))


_PATH_CALL = re.compile(r"(?:Posix|Windows)?Path\(('[^']*')\)")


def _scrub(text: str, roots: dict[str, str]) -> str:
    for root, name in roots.items():
        text = text.replace(root, name)
    return _PATH_CALL.sub(r"\1", text)


def _cut(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + f"\n… ({len(text):,} characters in all; the full table is in the run's figures/)\n"


def _dropped(output: dict) -> bool:
    data = output.get("data") or {}
    if "application/vnd.jupyter.widget-view+json" in data:
        return True
    text = _text(output)
    if output.get("output_type") == "stream" and output.get("name") == "stderr":
        return True
    if output.get("output_type") == "execute_result" and set(data) <= {"text/plain"}:
        return bool(_PATH_REPR.match(text) or _RECORD_REPR.match(text))
    return False


def clean_outputs(outputs: list[dict], roots: dict[str, str] | None = None) -> list[dict]:
    """``outputs`` of one cell as published (module docstring)."""
    roots = machine_roots() if roots is None else roots
    kept = []
    for o in outputs:
        if _dropped(o):
            continue
        o = dict(o)
        if o.get("output_type") == "stream":
            o["text"] = _cut(_scrub(_text(o), roots)).splitlines(keepends=True)
        elif "data" in o:
            data = dict(o["data"])
            for kind in ("text/plain", "text/markdown"):
                if kind in data:
                    data[kind] = _cut(_scrub("".join(data[kind]), roots)).splitlines(keepends=True)
            if "text/html" in data:
                html = _scrub("".join(data["text/html"]), roots)
                if len(html) > 4 * MAX_OUTPUT_CHARS:  # a long table: its text form, cut, stands in for it
                    data.pop("text/html")
                else:
                    data["text/html"] = html.splitlines(keepends=True)
            o["data"] = data
        kept.append(o)
    return kept


def output_problems(notebook: dict, roots: dict[str, str] | None = None) -> list[str]:
    """What a published notebook's outputs still carry that :func:`clean_outputs` removes (empty when clean)."""
    roots = machine_roots() if roots is None else roots
    problems = []
    for i, cell in enumerate(notebook.get("cells", [])):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            text = _text(o)
            where = f"cell {i}"
            if "PosixPath(" in text or "WindowsPath(" in text:
                problems.append(f"{where}: a PosixPath repr")
            if any(root in text for root in roots if root not in ("/",)):
                problems.append(f"{where}: a path of the machine that ran it")
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                problems.append(f"{where}: stderr text" + (" (a warning)" if _WARNING.search(text) else ""))
            if len(text) > MAX_OUTPUT_CHARS + 200:
                problems.append(f"{where}: an output of {len(text):,} characters")
    return problems
