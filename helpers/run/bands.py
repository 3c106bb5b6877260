"""Bands for re-run records, measured from their own variation: which values a run may give and still be the
same computation.

A trained value is one draw: another seed, or another CPU's kernels (vector width, BLAS code path), move it, and
training carries the rounding far.  So a re-run is judged against the spread of several runs of the same code
over seeds and over CPU-kernel variants (``ATEN_CPU_CAPABILITY`` = native / ``avx2`` / ``default``,
``MKL_ENABLE_INSTRUCTIONS``), not against one run's bits:

* :func:`spread_table` reads the runs' records into one table, a column per run;
* :func:`band_table` turns it into bands: centre ``m = (max + min) / 2``, half-width
  ``max(floor(unit), c * (max - min) / 2)``.  A value identical in every run (seeds included, and never NaN in
  one of them) is *stable*: its band is tight, ``1e-9 + 1e-6 * |m|``.  Most such values no training touches (set
  counts, sizes, formulas on fixed inputs, estimators on a pretrained model's outputs); some are trained values
  that move in coarse steps (a percentage of a few model pairs, a saturated accuracy) and did not move over these
  runs: another seed can still move them, and the check then names them.  Floors by unit: fractions 0.02, percent and points 2.0, other scores, ranks and
  counts 10 % of ``|m|``; a yes/no that differs between runs takes either value;
* :func:`values_outside` lists a run's records that leave their band or are missing.

Records whose labels name a winner (``best=`` of any record, ``method=`` / ``baseline=`` of a ``best_*`` record)
are matched without those labels: which method is best is itself a draw; its value is still checked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["BAND_C", "FLOORS", "band_table", "read_pins", "spread_table", "values_outside"]

#: how many half-ranges of the measured spread a band spans
BAND_C = 3.0
#: unit -> (absolute floor, relative floor) of a trained value's half-width
FLOORS = {"fraction": (0.02, 0.0), "%": (2.0, 0.0), "pp": (2.0, 0.0), "bool": (0.0, 0.0)}
DEFAULT_FLOOR = (1e-6, 0.10)
#: label keys that name a winner in records called ``best_*``
WINNER_LABELS = ("method", "baseline")
_KEY = ["notebook", "name", "labels"]
_SKIPPED_UNITS = {"s"}  # seconds are the machine's, not the code's


def _parse(labels: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in labels.split(", ")) if labels else {}


def _render(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def match_labels(name: str, labels: str) -> tuple[str, str]:
    """``(labels to match on, free labels)``: the labels that name a winner are free, a ``best=`` label of any
    record and the ``method=`` / ``baseline=`` labels of a ``best_*`` record."""
    parsed = _parse(labels)
    free = {k: v for k, v in parsed.items() if k == "best" or (name.startswith("best_") and k in WINNER_LABELS)}
    if not free:
        return labels, ""
    return _render({k: v for k, v in parsed.items() if k not in free}), ",".join(free)


def _records(results: Path) -> pd.DataFrame:
    """A run's numeric records, keyed for matching (winner labels dropped), times left out."""
    from helpers.run.results import collect

    frame = collect(results)
    numeric = frame["value"].map(lambda v: isinstance(v, (int, float)) and not isinstance(v, str))
    frame = frame[numeric & ~frame["unit"].isin(_SKIPPED_UNITS)].copy()
    keys = [match_labels(n, lab) for n, lab in zip(frame["name"], frame["labels"])]
    frame["labels"] = [k[0] for k in keys]
    frame["free_labels"] = [k[1] for k in keys]
    frame["value"] = frame["value"].astype(float)
    return frame[["notebook", "name", "labels", "free_labels", "unit", "value"]]


def spread_table(runs: dict[str, Path]) -> pd.DataFrame:
    """One row per record, one value column per run (``runs``: label -> the run's results folder); a record
    missing from a run is NaN in its column, and counted in ``missing_in`` where the run has other records of its
    notebook (a run whose notebook failed says nothing about the record)."""
    frames = []
    for label, folder in runs.items():
        f = _records(Path(folder)).rename(columns={"value": label})
        frames.append(f.set_index(_KEY))
    wide = pd.concat([f[[c]] for f, c in zip(frames, runs)], axis=1)
    meta = pd.concat([f[["unit", "free_labels"]] for f in frames]).groupby(level=[0, 1, 2]).first()
    wide = meta.join(wide).reset_index()
    keys = [set(f.index) for f in frames]
    notebooks = [{k[0] for k in have} for have in keys]  # a run whose notebook failed says nothing of its records
    wide["missing_in"] = [sum(k not in have and k[0] in nbs for have, nbs in zip(keys, notebooks))
                          for k in zip(*(wide[c] for c in _KEY))]  # fmt: skip
    wide["absent_in"] = [sum(nb not in nbs for nbs in notebooks) for nb in wide["notebook"]]
    return wide.sort_values(_KEY, kind="stable").reset_index(drop=True)


def band_table(spread: pd.DataFrame, runs: list[str], *, c: float = BAND_C) -> pd.DataFrame:
    """The bands of :func:`spread_table`'s rows (see the module docstring): ``value`` (centre), ``abs_tol``
    (half-width), ``spread`` (max - min over the runs), ``kind`` (``stable`` / ``trained`` / ``nan``),
    ``allow_nan`` (a run gave NaN) and ``required`` (every run recorded it)."""
    rows = []
    for r in spread.to_dict("records"):
        values = np.array([r[k] for k in runs], dtype=float)
        finite = values[np.isfinite(values)]
        allow_nan = bool(np.isnan(values).sum() > r["missing_in"] + r["absent_in"])
        if not finite.size:
            centre, spread_, tol, kind = float("nan"), 0.0, 0.0, "nan"
        else:
            lo, hi = float(finite.min()), float(finite.max())
            centre, spread_ = (lo + hi) / 2, hi - lo
            if spread_ == 0 and not allow_nan:  # the same number in every run that recorded it
                kind, tol = "stable", 1e-9 + 1e-6 * abs(centre)
            else:
                floor_abs, floor_rel = FLOORS.get(r["unit"], DEFAULT_FLOOR)
                kind = "trained"
                tol = max(floor_abs + floor_rel * abs(centre), c * spread_ / 2)
                if r["unit"] == "bool":
                    tol = max(tol, 0.5)  # differs between runs: either answer
        rows.append({**{k: r[k] for k in _KEY}, "free_labels": r["free_labels"], "unit": r["unit"],
                     "value": centre, "abs_tol": tol, "spread": spread_, "kind": kind, "allow_nan": allow_nan,
                     "required": r["missing_in"] == 0})  # fmt: skip
    return pd.DataFrame(rows)


def read_pins(path: Path) -> pd.DataFrame:
    """A bands or spread CSV whose first lines are ``#`` comments (its method), empty labels as empty strings."""
    path = Path(path)
    skip = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#"))
    frame = pd.read_csv(path, skiprows=skip, keep_default_na=False, na_values=[""])
    for column in ("labels", "free_labels"):
        if column in frame:
            frame[column] = frame[column].fillna("")
    return frame


def values_outside(pins: pd.DataFrame, results: Path, notebook: str | None = None) -> list[str]:
    """The pinned records of ``notebook`` (all if None) that a run's results folder misses (where every measured
    run recorded them) or gives outside ``value ± abs_tol``, one line each."""
    if notebook is not None:
        pins = pins[pins["notebook"] == notebook]
    got = _records(Path(results))
    got = {(r.notebook, r.name, r.labels): r.value for r in got.itertuples()}
    out = []
    for p in pins.itertuples():
        value = got.get((p.notebook, p.name, p.labels))
        where = f"{p.name} [{p.labels}]"
        if value is None:
            if p.required:
                out.append(f"{where}: not recorded (expected {p.value:.6g} ± {p.abs_tol:.3g})")
            continue
        if np.isnan(value) or np.isnan(p.value):
            if not (np.isnan(value) and (np.isnan(p.value) or p.allow_nan)):
                out.append(f"{where}: {value:.6g}, expected {p.value:.6g}" + (" or NaN" if p.allow_nan else ""))
            continue
        if not abs(value - p.value) <= p.abs_tol:
            out.append(f"{where}: {value:.6g}, expected {p.value:.6g} ± {p.abs_tol:.3g} ({p.kind}, measured "
                       f"spread {p.spread:.3g})")  # fmt: skip
    return out
