"""A user's run beside the published reference: is it within what the reference's own seeds already vary?

``python -m helpers compare RUN`` answers per claim, for every claim the run decided:

* **estimate**: inside the range of the reference's runs of that claim (its seeds; for the smoke reference also
  its CPU-kernel variants) widened by the band of :mod:`helpers.run.bands`:
  ``centre ± max(0.1 |centre| + 1e-6, c * (max - min) / 2)``, ``centre = (max + min) / 2``, ``c`` =
  :data:`helpers.run.bands.BAND_C`.  A claim the reference decided on one run has no spread: the band is the floor
  around its one estimate, and the row says so;
* **verdict**: one of the reference runs' verdicts, else named.

For a smoke run, each record is also checked against the smoke bands (``tests/expected/smoke_metrics.csv``),
as the smoke test does.  Where the reference runs come from:

* ``default``: ``figures/claims_seeds.csv`` (seeds 0, 1, 2 of the published run; a claim decided over seeds) and
  ``figures/claims.csv`` (every published claim's estimate and verdict);
* ``smoke``: ``tests/expected/smoke_claims.csv`` (every claim of the smoke spread runs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.paths import REPO_ROOT
from helpers.run.bands import BAND_C, DEFAULT_FLOOR
from helpers.tables import to_markdown

__all__ = ["claim_reference", "compare_run", "format_comparison"]

_NUMBER = re.compile(r"^\s*(-?[0-9.eE+-]+|nan)")


def _first_number(text) -> float:
    if isinstance(text, (int, float)):
        return float(text)
    m = _NUMBER.match(str(text))
    return float(m.group(1)) if m else float("nan")


def claim_reference(profile: str, root: Path = REPO_ROOT) -> pd.DataFrame:
    """Per claim id: ``estimates`` (list, one per reference run) and ``verdicts`` (set) of the reference."""
    if profile == "smoke":
        table = pd.read_csv(root / "tests" / "expected" / "smoke_claims.csv", keep_default_na=False, na_values=[""])
        return table.groupby("id").agg(estimates=("estimate", list), verdicts=("verdict", lambda v: sorted(set(v))))
    figures = root / "figures"
    published = pd.read_csv(figures / "claims.csv", keep_default_na=False, na_values=[""]).set_index("id")
    seeds = pd.read_csv(figures / "claims_seeds.csv", keep_default_na=False, na_values=[""]).set_index("id")
    rows = {}
    for cid, row in published.iterrows():
        if cid in seeds.index:
            s = seeds.loc[cid]
            estimates = [_first_number(s[c]) for c in seeds.columns if c.startswith("seed ") and s[c] != ""]
            verdicts = sorted({v.split(": ", 1)[1] for v in str(s["verdicts"]).split("; ")})
        else:
            estimates, verdicts = [_first_number(row["run_estimate"])], [row["run_verdict"]]
        rows[cid] = {"estimates": estimates, "verdicts": verdicts}
    return pd.DataFrame.from_dict(rows, orient="index")


def _band(estimates: list[float]) -> tuple[float, float]:
    finite = np.array([e for e in estimates if np.isfinite(e)], dtype=float)
    if not finite.size:
        return float("nan"), float("nan")
    lo, hi = float(finite.min()), float(finite.max())
    centre = (lo + hi) / 2
    half = max(DEFAULT_FLOOR[0] + DEFAULT_FLOOR[1] * abs(centre), BAND_C * (hi - lo) / 2)
    return centre - half, centre + half


def compare_run(run: str | Path, *, root: Path = REPO_ROOT) -> pd.DataFrame:
    """One row per claim of ``run`` (a run folder with ``run_status.json`` and ``results/``) and, for a smoke run,
    one per record outside its smoke band: ``what``, ``id``, ``estimate``, ``band_low``/``band_high``,
    ``reference_runs``, ``verdict``, ``reference_verdicts``, ``within`` (estimate in band and verdict among the
    reference's) and ``note``."""
    from helpers.claims import collect_claims

    run = Path(run)
    status_file = run / "run_status.json"
    if not status_file.is_file():
        raise InputValidationError(f"run: expected a run folder with run_status.json, got {run}")
    profile = json.loads(status_file.read_text())["_run"].get("profile") or run.parent.name
    reference = claim_reference(profile, root)
    rows = []
    for claim in collect_claims(run / "results").itertuples():
        ref = reference.loc[claim.id] if claim.id in reference.index else None
        if ref is None:
            rows.append({"what": "claim", "id": claim.id, "estimate": claim.estimate, "verdict": claim.verdict,
                         "within": False, "note": "not in the reference"})  # fmt: skip
            continue
        low, high = _band(ref["estimates"])
        est = float(claim.estimate) if claim.estimate is not None else float("nan")
        in_band = bool(np.isnan(est) and np.isnan(low)) or bool(low <= est <= high)
        same = claim.verdict in ref["verdicts"]
        note = [] if in_band else ["estimate outside the band"]
        note += [] if same else ["verdict not among the reference's"]
        note += ["one reference run: no seed spread"] if len(ref["estimates"]) == 1 else []
        rows.append({"what": "claim", "id": claim.id, "estimate": est, "band_low": low, "band_high": high,
                     "reference_runs": len(ref["estimates"]), "verdict": claim.verdict,
                     "reference_verdicts": ", ".join(ref["verdicts"]), "within": in_band and same,
                     "note": "; ".join(note)})  # fmt: skip
    if profile == "smoke":
        rows += _smoke_records(run, root)
    return pd.DataFrame(rows)


def _smoke_records(run: Path, root: Path) -> list[dict]:
    """The smoke run's records outside their bands, one row each (the smoke test's check)."""
    from helpers.run.bands import read_pins, values_outside

    pins = read_pins(root / "tests" / "expected" / "smoke_metrics.csv")
    status = json.loads((run / "run_status.json").read_text())
    failed = {nb: v.get("error", "") for nb, v in status.items() if nb != "_run" and v.get("status") != "ok"}
    out = [{"what": "notebook", "id": nb, "within": False, "note": f"failed: {error[:160]}"}
           for nb, error in sorted(failed.items())]  # fmt: skip
    checked = pins[~pins["notebook"].isin(failed)]
    out += [{"what": "record", "id": line.split(":", 1)[0], "within": False, "note": line.split(": ", 1)[1]}
            for nb in sorted(set(checked["notebook"])) for line in values_outside(checked, run / "results", nb)]  # fmt: skip
    moved = sum(r["what"] == "record" for r in out)
    out.append({"what": "records", "id": f"{len(checked)} smoke records of the notebooks that ran",
                "within": not out, "note": f"{moved} outside their bands"})  # fmt: skip
    return out


def format_comparison(table: pd.DataFrame) -> str:
    """The comparison as Markdown: a count line, every claim (``within`` and, where not, why), then the records
    named outside their smoke bands."""
    claims = table[table["what"] == "claim"]
    head = (f"{int(claims['within'].sum())} of {len(claims)} claims within the reference's spread "
            f"(estimate in band, verdict among the reference's)")  # fmt: skip
    records = table[table["what"] == "records"]
    if len(records):
        head += f"; {records['id'].iloc[0]}: {records['note'].iloc[0]}"
    cols = ["id", "estimate", "band_low", "band_high", "reference_runs", "verdict", "reference_verdicts", "within",
            "note"]  # fmt: skip
    parts = [head, "", to_markdown(claims.reindex(columns=cols))]
    named = table[table["what"].isin(["notebook", "record"])]
    if len(named):
        parts += ["", "Failed notebooks and records outside their smoke bands:", "",
                  to_markdown(named.reindex(columns=["what", "id", "note"]))]  # fmt: skip
    return "\n".join(parts)
