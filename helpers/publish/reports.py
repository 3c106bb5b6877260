"""The front door's generated parts: the README's per-paper results table, the number blocks of the reproduction
reports in ``docs/reproductions/``, and the executed notebooks in ``docs/notebooks/``.

All three are written by ``python -m helpers publish`` from one run's records, never typed by hand:

* :func:`paper_rows` -- one row per notebook for the README: the paper, its distinct claims that hold / fail / are
  undecided, a headline number beside the paper's on the same basis with its claim's verdict (:data:`HEADLINES`),
  the wall time, and links to the report and the published notebook;
* :func:`splice_reports` -- every block ``<!-- numbers:begin STEM -->`` ... ``<!-- numbers:end -->`` of a report
  gets that notebook's run time, claims (estimate, 95 % interval, verdict) and the metrics the paper reports a
  number for;
* :func:`publish_notebook` -- the run's executed notebook, with its outputs and figures, minus widget state and
  progress-bar noise, under :data:`MAX_NOTEBOOK_BYTES`; its metadata names the run and the headline values.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.errors import HelpersError
from helpers.paths import REPO_ROOT
from helpers.tables import to_markdown

__all__ = [
    "REPORTS",
    "HEADLINES",
    "DOCS",
    "MAX_NOTEBOOK_BYTES",
    "headline_values",
    "paper_rows",
    "claim_bullets",
    "render_numbers",
    "splice_reports",
    "publish_notebook",
]

DOCS = REPO_ROOT / "docs"
#: the reproduction report of each notebook (under ``docs/reproductions/``) and the paper it reproduces
REPORTS: dict[str, tuple[str, str]] = {
    "00_example": ("", "tour"),
    "01_discriminator_bounds": ("p1_discriminator_bounds.md", "P1 correctness discriminators"),
    "02_selective_answering": ("p2_selective_answering.md", "P2 AUC failure modes, DiSCA"),
    "03_self_training": ("p3_self_training.md", "P3 self-training ensembles"),
    "04_attribution_ranking": ("p4_attribution_ranking.md", "P4 attribution factors"),
    "05_mde": ("p5_mde.md", "P5 Meta-Distribution Energy"),
    "06_benchmark": ("benchmark.md", "benchmark of every estimator"),
    "08_model_ranking": ("ranking.md", "model ranking on the project's zoos"),
}
#: the README's headline per notebook: (record name, a ``labels`` substring, what it is, on which basis, the claim
#: whose verdict it carries).  Each is the same quantity on the same basis as the paper's number beside it; a notebook
#: without a like-for-like number (03 runs a few of the paper's twelve Amazon pairs) has none.
HEADLINES: dict[str, tuple[str, str, str, str]] = {
    "01_discriminator_bounds": ("fraction_sets_within_bounds", "", "sets with gold within the bounds",
                                "p1.gold_within_bounds"),
    "04_attribution_ranking": ("acc_mean_over_settings", "", "ACC ranking accuracy, mean of the settings (%)",
                               "p4.acc_strong_baseline"),
    "05_mde": ("cifar10_resnet20_MDE_r2_95sets", "", "MDE R², 95 CIFAR-10-C sets, ResNet-20",
               "p5.mde_correlates_best"),
}  # fmt: skip
NUMBERS_BEGIN = re.compile(r"<!-- numbers:begin (\S+) -->")
NUMBERS_END = "<!-- numbers:end -->"
#: a published notebook larger than this (bytes) is refused: figures should be PNGs of modest size
MAX_NOTEBOOK_BYTES = 5_000_000


def _headline_row(frame: pd.DataFrame, stem: str) -> pd.Series | None:
    if stem not in HEADLINES:
        return None
    name, labels, _, _ = HEADLINES[stem]
    rows = frame[(frame["notebook"] == stem) & (frame["name"] == name)]
    rows = rows[rows["labels"].astype(str).str.contains(labels, regex=False)] if labels else rows
    return rows.iloc[0] if len(rows) else None


def headline_values(frame: pd.DataFrame) -> dict[str, float]:
    """``{notebook: headline value}`` from a summary frame (notebooks without a headline left out)."""
    out = {}
    for stem in sorted(frame["notebook"].unique()):
        row = _headline_row(frame, stem)
        if row is not None:
            out[stem] = float(row["value"])
    return out


def _fmt(value) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if v != v else f"{v:.3g}"


def _flag(v) -> bool:
    return str(v).strip().lower() in ("true", "1", "1.0")


#: the verdicts in the order the reports and the README count them
COUNTED = "holds / fails / undecided / underpowered / indistinguishable / untested"


def _counts(mine: pd.DataFrame) -> str:
    from helpers.claims import claim_kinds

    kinds = claim_kinds(mine) if len(mine) else pd.Series(dtype=object)
    paper, others, own = (mine[kinds == k] for k in ("paper", "method", "own"))
    out = []
    if len(paper):
        v = paper["verdict"].value_counts()
        out.append(" / ".join(str(int(v.get(k, 0))) for k in COUNTED.split(" / ")))
    if len(others):
        out.append(f"other methods' papers: {_said(others)}")
    if len(own):
        out.append(f"own: {_said(own)}")
    decided = mine[kinds.notna() & mine["verdict"].ne("untested")] if len(mine) else mine
    if "seeds" in decided and len(decided) and pd.to_numeric(decided["seeds"], errors="coerce").fillna(1).lt(3).all():
        out.append("all decided on one run")
    return "; ".join(out) if out else "-"


def _said(rows: pd.DataFrame) -> str:
    v = rows["verdict"].value_counts()
    return ", ".join(f"{int(v[k])} {k}" for k in COUNTED.split(" / ") if v.get(k, 0)) + f" of {len(rows)}"


def paper_rows(frame: pd.DataFrame, claims: pd.DataFrame, times: pd.DataFrame) -> pd.DataFrame:
    """The README's results table: one row per notebook of ``frame`` (``claims``: ``figures/claims.csv``)."""
    rows = []
    for stem in sorted(set(frame["notebook"])):
        report, paper = REPORTS.get(stem, ("", ""))
        mine = claims[claims["notebook"] == stem] if len(claims) else claims
        head = _headline_row(frame, stem)
        headline = ""
        if head is not None:
            _, _, what, cid = HEADLINES[stem]
            verdict = mine.loc[mine["id"] == cid, "verdict"]
            headline = (f"{what}: {_fmt(head['value'])}" + (f" ({_fmt(head['paper'])})" if _fmt(head["paper"]) else "")
                        + (f", claim {verdict.iloc[0]}" if len(verdict) else ""))  # fmt: skip
        wall = times.loc[times["notebook"] == stem, "wall_s"]
        cpu = pd.to_numeric(times.loc[times["notebook"] == stem].get("cpu_s", pd.Series(dtype=float)), errors="coerce")
        links = [f"[notebook](docs/notebooks/{stem}.ipynb)"]
        if report:
            links.insert(0, f"[report](docs/reproductions/{report})")
        rows.append({
            "notebook": f"`{stem}`", "reproduces": paper, f"claims: {COUNTED}": _counts(mine),
            "headline: ours (paper)": headline,
            "time side by side (CPU)": (f"{float(wall.iloc[0]) / 60:.1f} min" if len(wall) and pd.notna(wall.iloc[0])
                                        else "") + (f" ({float(cpu.iloc[0]) / 60:.1f})" if len(cpu) and pd.notna(cpu.iloc[0])
                                                    else ""),
            "details": " · ".join(links),
        })  # fmt: skip
    return pd.DataFrame(rows)


def claim_bullets(claims: pd.DataFrame) -> str:
    """One bullet per claim: id, source, the paper's words, the criterion and its origin, the estimate with its
    interval and the verdict (in bold), setups and seeds held, and the reading's rationale."""

    def of(held, n) -> str:
        return "" if pd.isna(n) or n == "" else f"{int(float(held))} of {int(float(n))}"

    def rule(r) -> str:
        """The error rate behind the verdict (claims_power.csv): what certifies it, or why the interval's is not."""
        size, power = _fmt(getattr(r, "size", "")), _fmt(getattr(r, "power", ""))
        false_fail = _fmt(getattr(r, "false_fail", ""))
        said = str(getattr(r, "interval_verdict", "") or "")
        if r.verdict == "holds" and size:
            return f" (the rule's size {size})"
        if r.verdict == "fails" and false_fail:
            return f" (its false-fail rate at the paper's effect {false_fail})"
        if r.verdict not in ("underpowered", "indistinguishable", "undecided"):
            return ""
        need = str(getattr(r, "needed", "") or "")
        errors = (f"the rule's size is {size}, its power at the paper's effect {power} and its false-fail rate "
                  f"{false_fail or 'not simulated'}" if size and power else
                  f"the rule's size is {size} and its power is not simulated" if size else
                  "the rule has no simulated error rate")  # fmt: skip
        lead = f"; the interval alone says {said}, but " if said and said != r.verdict else "; "
        return lead + errors + (f" (needed: {need})" if need and need != "nan" else "")

    lines = []
    for r in claims.itertuples():
        sup = str(getattr(r, "superseded_by", "") or "")
        kind = (" *(exploratory: outside the tally)*" if _flag(r.exploratory) else " *(own)*" if _flag(r.own) else
                f" *(superseded by `{sup}`: outside the tally)*" if sup and sup != "nan" else
                " *(another method's paper)*" if str(getattr(r, "group", "")) == "method" else "")  # fmt: skip
        held = ", ".join(x for x in (f"setups {of(r.setups_held, r.setups)}" if of(r.setups_held, r.setups) else "",
                                      f"seeds {of(r.seeds_held, r.seeds)}" + (
                                          ", decided on one run" if _one_run(r) else "")) if x)  # fmt: skip
        lines.append(f"- **`{r.id}`**{kind} ({r.source}): “{r.statement}”. Criterion ({r.criterion_source}): "
                     f"{r.criterion}. Here{_over_seeds(r)}: {interval_text(r.estimate, r.low, r.high)} → "
                     f"**{r.verdict}**{rule(r)} ({held}). {getattr(r, 'rationale', '') or ''}".rstrip())  # fmt: skip
    return "\n".join(lines)


def _one_run(r: Any) -> bool:
    """A claim decided on a single run (fewer than three seeds), untested ones aside."""
    seeds = pd.to_numeric(pd.Series([getattr(r, "seeds", 1)]), errors="coerce").fillna(1).iloc[0]
    return bool(seeds < 3 and getattr(r, "verdict", "") != "untested")


def interval_text(estimate: Any, low: Any, high: Any) -> str:
    """``estimate [low, high]``, or where the interval is degenerate (``low == high``: a count or a value with no
    resampling units) ``estimate (a point: no interval)``, so a zero-width interval is not read as 95 %.

    >>> interval_text(0.89, 0.847, 0.925), interval_text(-2.88, -2.88, -2.88), interval_text(2, "", "")
    ('0.89 [0.847, 0.925]', '-2.88 (a point: no interval)', '2')
    """
    from helpers.claims import format_estimate

    est, lo, hi = format_estimate(estimate), _fmt(low), _fmt(high)
    if not lo or not hi:
        return est
    return f"{est} (a point: no interval)" if float(low) == float(high) else f"{est} [{lo}, {hi}]"


def _over_seeds(r: Any) -> str:
    """", over 3 seeds (the published run alone: …)" for a claim decided over seeds (``run_*`` differ)."""
    run = getattr(r, "run_estimate", None)
    try:
        same = [float(a) for a in (run, r.run_low, r.run_high)] == [float(b) for b in (r.estimate, r.low, r.high)]
        if same or int(float(r.seeds)) < 2:
            return ""
    except (TypeError, ValueError, AttributeError):
        return ""
    return (f", the mean over {int(float(r.seeds))} seeds (the seed a resampling level; the published run alone: "
            f"{interval_text(run, r.run_low, r.run_high)}, {r.run_verdict})")


def _seed_changes(claims: pd.DataFrame) -> str:
    """A line naming the claims whose verdict differs between seeds (``seed_verdicts`` of ``claims.csv``)."""
    if "seed_verdicts" not in claims or claims.empty:
        return ""
    changed = []
    for r in claims.itertuples():
        verdicts = {v.split(": ")[-1] for v in str(r.seed_verdicts or "").split("; ") if ": " in v}
        if len(verdicts) > 1:
            changed.append(f"`{r.id}` ({r.seed_verdicts})")
    if not changed:
        decided = claims["seeds"].astype(float).max() if len(claims) else 1
        return f"No verdict changes across the {int(decided)} seeds run." if decided > 1 else ""
    return "**Verdicts that change across seeds:** " + "; ".join(changed) + "."


def render_numbers(stem: str, frame: pd.DataFrame, claims: pd.DataFrame, comparison: pd.DataFrame,
                   times: pd.DataFrame) -> str:  # fmt: skip
    """The generated block of one notebook in its report: run time, claims, metrics beside the paper's."""
    t = times[times["notebook"] == stem]
    when = ""
    if len(t):
        r = t.iloc[0]
        when = (f"Run `{r.get('status', '')}` in {float(r['wall_s']) / 60:.1f} min (1-min load average "
                f"{r.get('load_avg', '')}, finished {r.get('finished_at', '')}).")  # fmt: skip
    mine = claims[claims["notebook"] == stem] if len(claims) else claims
    numbers = comparison[comparison["notebook"] == stem].drop(columns=["notebook"])
    parts = [
        f"<!-- numbers:begin {stem} -->",
        "<!-- generated by `python -m helpers publish` from the published run's records; edits are overwritten -->",
        when,
        f"**Claims ({COUNTED}): {_counts(mine)}.** Each with its 95 % interval and the error rate that certifies its "
        "verdict: the rule's size for a holds, its false-fail rate for a fails, its power otherwise "
        "([claims_power.md](../../figures/claims_power.md)); the per-setup detail is in "
        "[claims_detail.md](../../figures/claims_detail.md).",
        claim_bullets(mine) if len(mine) else "(no claims recorded)",
        _seed_changes(mine),
        "**Every metric the paper reports a number for, beside ours**",
        to_markdown(numbers) if len(numbers) else "(none)",
        NUMBERS_END,
    ]
    return "\n\n".join(p.rstrip() for p in parts if p)


def splice_reports(frame: pd.DataFrame, claims: pd.DataFrame, comparison: pd.DataFrame, times: pd.DataFrame,
                   *, folder: Path | None = None, only: set[str] | None = None) -> list[Path]:  # fmt: skip
    """Replace the number blocks of every report in ``folder`` (default ``docs/reproductions``) whose notebook is
    in ``frame`` (and in ``only``); returns the reports changed."""
    folder = Path(folder) if folder is not None else DOCS / "reproductions"
    changed = []
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        out, pos = [], 0
        for m in NUMBERS_BEGIN.finditer(text):
            stem = m.group(1)
            end = text.find(NUMBERS_END, m.end())
            if end < 0:
                raise HelpersError(f"{path}: '{m.group(0)}' has no '{NUMBERS_END}'")
            if stem not in set(frame["notebook"]) or (only is not None and stem not in only):
                continue
            out.append(text[pos : m.start()])
            out.append(render_numbers(stem, frame, claims, comparison, times))
            pos = end + len(NUMBERS_END)
        new = "".join(out) + text[pos:]
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def publish_notebook(executed: Path, destination: Path, *, run_id: str, headline: float | None) -> Path:
    """Write the executed notebook ``executed`` to ``destination`` with its outputs cleaned
    (:func:`helpers.publish.clean.clean_outputs`: no machine paths, ``PosixPath`` reprs, warnings, record dicts,
    progress bars or widget state; long outputs cut); raises when it is still over :data:`MAX_NOTEBOOK_BYTES` or has
    no output at all."""
    from helpers.publish.clean import clean_outputs, machine_roots

    nb = json.loads(Path(executed).read_text(encoding="utf-8"))
    nb.get("metadata", {}).pop("widgets", None)
    n_outputs = 0
    roots = machine_roots()
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        n_outputs += len(cell.get("outputs", []))  # executed at all (before cleaning)
        cell["outputs"] = clean_outputs(cell.get("outputs", []), roots)
        cell.get("metadata", {}).pop("execution", None)  # papermill's per-cell timestamps: noise in a diff
    if not n_outputs:
        raise HelpersError(f"{executed}: no outputs; publish an executed notebook")
    papermill = nb.get("metadata", {}).get("papermill") or {}
    for key in ("input_path", "output_path"):  # the running machine's paths: the notebook's name says enough
        if papermill.get(key):
            papermill[key] = Path(papermill[key]).name
    nb.setdefault("metadata", {}).setdefault("helpers", {})["published"] = {"run_id": run_id, "headline": headline}
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    if len(text.encode("utf-8")) > MAX_NOTEBOOK_BYTES:
        raise HelpersError(f"{executed}: {len(text) / 1e6:.1f} MB after stripping, over {MAX_NOTEBOOK_BYTES / 1e6:.0f} MB")
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(text, encoding="utf-8")
    return destination
