"""Record a notebook's headline metrics and collect them into one summary table.

A notebook calls :func:`record` for each headline number::

    from helpers.run.results import record
    record("resnet20_mde_spearman", rho, setup="cifar10", paper=0.992, source="paper 5, Table 1")

Each call appends one JSON line to ``<results dir>/<notebook>.jsonl``.  The results directory is
``$HELPERS_RESULTS`` (the runner sets it per profile) or ``<runs>/results``; the notebook name is the
``notebook=`` argument, else ``$HELPERS_NOTEBOOK`` (set by the runner), else ``"interactive"``.
:func:`collect` reads every file back into one tidy frame (later records of the same key replace earlier
ones, so re-running a cell does not duplicate rows) and :func:`write_summary` writes CSV + Markdown.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.errors import InputValidationError
from helpers.paths import figures_dir, runs_dir
from helpers.tables import to_markdown

__all__ = ["record", "results_dir", "collect", "comparable_records", "summary_table", "write_summary"]

_KEY_COLUMNS = ["notebook", "name", "labels"]


def results_dir() -> Path:
    """``$HELPERS_RESULTS`` or ``<runs>/results`` (created on demand)."""
    value = os.environ.get("HELPERS_RESULTS")
    path = Path(value) if value else runs_dir() / "results"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _plain(value: Any) -> Any:
    """Numpy scalars and other number-likes to plain Python for JSON."""
    if hasattr(value, "item") and callable(value.item):
        try:
            return value.item()
        except (ValueError, TypeError):
            pass
    return value


def record(
    name: str,
    value: float,
    *,
    notebook: str | None = None,
    paper: float | None = None,
    source: str | None = None,
    unit: str = "",
    claim: str | None = None,
    passed: bool | None = None,
    **labels: Any,
) -> dict[str, Any]:
    """Store one headline metric.

    Parameters
    ----------
    name : str
        Metric name, e.g. ``"mde_spearman"``.
    value : float
        The measured value (fractions for accuracies, seconds for times).
    notebook : str, optional
        Defaults to ``$HELPERS_NOTEBOOK`` (set by the runner) or ``"interactive"``.
    paper : float, optional
        The number the paper reports for the same quantity, for the summary's comparison column.
    source : str, optional
        Where the paper's number comes from, e.g. ``"paper 5, Table 1"``.
    unit : str
        Unit of ``value`` (``"fraction"``, ``"s"``...).
    claim, passed : optional
        A free-text note of what the metric bears on.  Not counted anywhere: a paper's claims are registered and
        decided with their intervals by :mod:`helpers.claims`.
    **labels
        Extra identifying labels (dataset, model, shift...); part of the record's key.

    Returns
    -------
    dict
        The stored record.
    """
    if not isinstance(name, str) or not name:
        raise InputValidationError(f"name: expected a non-empty string, got {name!r}")
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputValidationError(f"value: expected a number, got {type(value).__name__}")
    nb = notebook or os.environ.get("HELPERS_NOTEBOOK") or "interactive"
    entry = {
        "notebook": nb,
        "name": name,
        "value": float(value),
        "unit": unit,
        "paper": None if paper is None else float(_plain(paper)),
        "source": source,
        "claim": claim,
        "passed": None if passed is None else bool(passed),
        "profile": os.environ.get("HELPERS_PROFILE", ""),
        "labels": {k: _plain(v) for k, v in sorted(labels.items())},
        "time": time.time(),
    }
    path = results_dir() / f"{nb}.jsonl"
    with open(path, "a", encoding="utf-8") as fh:  # one line per call: an interrupted run loses nothing
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
    from helpers.parallel import note_cpu

    note_cpu()  # the notebook's CPU seconds so far, for the run times (under the runner only)
    return entry


def collect(directory: str | Path | None = None) -> pd.DataFrame:
    """Read every ``*.jsonl`` record under ``directory`` into one frame (last record per key wins)."""
    directory = Path(directory) if directory is not None else results_dir()
    rows = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:  # a line cut by a hard kill: skip it, keep the rest
                    continue
    columns = ["notebook", "name", "value", "unit", "paper", "source", "claim", "passed", "profile", "labels"]
    if not rows:
        return pd.DataFrame(columns=columns)
    df = pd.DataFrame(rows)
    df["labels"] = df["labels"].map(lambda d: ", ".join(f"{k}={v}" for k, v in d.items()) if d else "")
    df = df.sort_values("time").drop_duplicates(_KEY_COLUMNS, keep="last")
    return df[columns].sort_values(["notebook", "name", "labels"]).reset_index(drop=True)


def comparable_records(directory: str | Path) -> dict[tuple[str, str, str], Any]:
    """Every record of a results folder but its times (unit ``"s"``, or a name with "seconds", "wall" or "time"):
    ``(notebook, name, labels as sorted JSON) -> value``, as written (NaN stays NaN), for comparing two runs of the
    same work to the bit; times are the machine's, not the code's."""
    out = {}
    for path in sorted(Path(directory).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["unit"] == "s" or any(w in r["name"] for w in ("seconds", "wall", "time")):
                continue
            out[(r["notebook"], r["name"], json.dumps(r["labels"], sort_keys=True))] = r["value"]
    return out


def _verdict(v: Any) -> str:
    """``True``/``False`` (or an already rendered "pass"/"fail", as read back from summary.csv) -> text."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, str):
        return v if v in ("pass", "fail", "") else ("pass" if v.lower() == "true" else "fail")
    return "pass" if v else "fail"


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the comparison columns: difference to the paper's number where one is given."""
    df = frame.copy()
    df["paper"] = pd.to_numeric(df["paper"], errors="coerce")
    df["diff_vs_paper"] = df["value"] - df["paper"]
    df["passed"] = df["passed"].map(_verdict)
    return df


def write_summary(
    frame: pd.DataFrame | None = None, *, directory: str | Path | None = None, stem: str = "summary"
) -> tuple[Path, Path]:
    """Write ``<figures>/<stem>.csv`` and ``<stem>.md`` from ``frame`` (default: :func:`collect`)."""
    df = summary_table(collect() if frame is None else frame)
    out = Path(directory) if directory is not None else figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
    df.to_csv(csv_path, index=False)
    md_path.write_text(
        f"# Results summary\n\n{len(df)} recorded metrics.\n\n" + to_markdown(df), encoding="utf-8"
    )
    return csv_path, md_path
