"""The results summary: every recorded headline metric beside the paper's number, the claims' verdicts, run times.

The main job (``python -m helpers run --profile default``) ends by calling :func:`write_report`, which writes

* ``figures/claims.csv`` -- one row per registered claim (:mod:`helpers.claims`): estimate, 95 % interval, verdict;
* ``figures/summary.md`` and ``figures/summary.csv`` -- run times, the claims per paper (holds / fails /
  undecided, the benchmark's own apart), every metric with a paper number beside ours (difference and the paper's
  table/section), then every recorded metric;
* the README's results section, between the markers ``<!-- results:begin -->`` and ``<!-- results:end -->``,
  from the same tables (one row per notebook, :mod:`helpers.publish.reports`), so the README never holds a number typed
  by hand.

Inputs are the JSONL records of :mod:`helpers.run.results`, the claim outcomes of :mod:`helpers.claims` and the
runner's ``run_status.json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from helpers.claims import (
    CLAIM_COLUMNS,
    claim_kinds,
    collect_claims,
    superseded,
    tally,
)
from helpers.claims.verdicts import claims_csv
from helpers.errors import HelpersError
from helpers.paths import REPO_ROOT, figures_dir, latest_run_dir, runs_dir
from helpers.run.results import collect, summary_table
from helpers.tables import to_markdown

__all__ = [
    "README_BEGIN",
    "README_END",
    "run_times",
    "claims_table",
    "render_details",
    "paper_comparison",
    "render_summary",
    "render_readme_section",
    "update_readme",
    "load_summary",
    "load_claims",
    "claims_tally_text",
    "write_report",
]

README_BEGIN = "<!-- results:begin -->"
README_END = "<!-- results:end -->"

_PAPER_REF = re.compile(r"\((paper \d[^)]*)\)")


def _source(row: pd.Series) -> str:
    """The paper's table/section: the recorded ``source``, else a "(paper N, ...)" reference inside the claim."""
    source = row.get("source")
    if isinstance(source, str) and source.strip():
        return source.strip()
    match = _PAPER_REF.search(str(row.get("claim") or ""))
    return match.group(1) if match else ""


#: the row of ``run_times`` that holds the whole run (wall clock from first start to last finish)
WHOLE_RUN = "(whole run)"


def run_times(profile: str = "default", *, directory: str | Path | None = None) -> pd.DataFrame:
    """Per-notebook status, wall time (s), finish time and load average from the ``run_status.json`` of the run
    folder ``directory`` (default: the profile's latest complete run),
    and a last row :data:`WHOLE_RUN` for the run as a whole when the runner recorded one (its wall clock, not the
    sum of the notebooks' times: notebooks run side by side; its load average is the mean of the samples taken at
    every start and finish; ``cache_files_at_start``: 0 when it ran from an empty cache, see
    :mod:`helpers.run.provenance`).

    Returns an empty frame when the profile has not run.
    """
    path = Path(directory) if directory is not None else (latest_run_dir(profile) or runs_dir() / profile)
    status_file = path / "run_status.json"
    columns = ["notebook", "status", "wall_s", "cpu_s", "started_at", "finished_at", "load_avg",
               "cache_files_at_start"]
    if not status_file.exists():
        return pd.DataFrame(columns=columns)
    status = json.loads(status_file.read_text(encoding="utf-8"))
    rows = [{c: entry.get(c) for c in columns} for key, entry in status.items() if not key.startswith("_")]
    out = pd.DataFrame(rows, columns=columns).sort_values("notebook").reset_index(drop=True)
    whole = status.get("_run")
    if whole and whole.get("wall_s") is not None:
        row = {"notebook": WHOLE_RUN, "status": whole.get("status"), "wall_s": whole.get("wall_s"),
               "cpu_s": whole.get("cpu_s"), "started_at": whole.get("started_at"),
               "finished_at": whole.get("finished_at"), "load_avg": whole.get("load_avg_mean"),
               "cache_files_at_start": whole.get("cache_files_at_start")}  # fmt: skip
        out = pd.concat([out, pd.DataFrame([row], columns=columns)], ignore_index=True)
    return out


def _times_markdown(times: pd.DataFrame) -> str:
    if times.empty:
        return "No run status recorded for this profile.\n"
    df = times.copy()
    df["wall time"] = df["wall_s"].map(lambda s: f"{s / 60:.1f} min ({s:.0f} s)" if pd.notna(s) else "")
    cpu = pd.to_numeric(df.get("cpu_s", pd.Series(pd.NA, index=df.index)), errors="coerce")
    df["CPU time"] = cpu.map(lambda s: f"{s / 60:.1f} min" if pd.notna(s) else "")
    df["load avg"] = pd.to_numeric(df["load_avg"], errors="coerce")
    table = to_markdown(df[["notebook", "status", "wall time", "CPU time", "load avg", "finished_at"]], digits=3)
    whole = df[df["notebook"] == WHOLE_RUN]
    df = df[df["notebook"] != WHOLE_RUN]
    ok = df["status"].isin(["ok", "skipped"])
    summed = float(df.loc[ok, "wall_s"].sum())
    n_failed = int((df["status"] == "failed").sum())
    if len(whole):
        total = float(whole["wall_s"].iloc[-1])
        return (f"{table}\n\n**Total: {total / 60:.1f} min** ({total:.0f} s) wall clock for one run of {len(df)} "
                f"notebook(s), {n_failed} failed (notebooks side by side; their times add up to {summed / 60:.1f} min)."
                "\n")  # fmt: skip
    return f"{table}\n\n**Total: {summed / 60:.1f} min** ({summed:.0f} s) over {len(df)} notebook(s), {n_failed} failed.\n"


def _interval(row: pd.Series) -> str:
    from helpers.publish.reports import interval_text

    return interval_text(row["estimate"], row["low"], row["high"])


def claims_table(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims as a readable table (one row per claim of ``figures/claims.csv``): paper, id, source, the
    estimate with its 95 % interval, the criterion, the verdict and what the interval said, the units its interval
    resamples, its rule's size, power and false-fail rate, setups and seeds that held ("one run" where a single run
    decides it), and the kind (paper / own / exploratory)."""
    cols = ["paper", "id", "source", "estimate [95 % interval]", "criterion", "criterion_source", "verdict",
            "interval_verdict", "units", "size", "power", "false_fail", "setups held", "seeds held", "kind"]  # fmt: skip
    if claims.empty:
        return pd.DataFrame(columns=cols)
    df = claims.copy() if "seeds" in claims else claims_csv(claims)
    df["estimate [95 % interval]"] = df.apply(_interval, axis=1)
    fl = lambda v: str(v).strip().lower() in ("true", "1", "1.0")  # noqa: E731
    df["kind"] = ["exploratory" if fl(e) else "own" if fl(o) else "paper" for e, o in zip(df["exploratory"], df["own"])]

    def of(held, n) -> str:
        return "" if pd.isna(n) or n == "" else f"{int(float(held))} of {int(float(n))}"

    df["setups held"] = [of(h, n) for h, n in zip(df["setups_held"], df["setups"])]
    df["seeds held"] = [of(h, n) + (" (one run)" if of(h, n) and float(n) < 3 else "")
                        for h, n in zip(df["seeds_held"], df["seeds"])]  # fmt: skip
    df = df.reindex(columns=[*df.columns, *[c for c in ("size", "power", "false_fail", "units", "interval_verdict")
                                            if c not in df]])  # fmt: skip
    gone = superseded(df)
    if gone.any():
        df.loc[gone, "kind"] = "superseded by " + df.loc[gone, "superseded_by"].astype(str)
    return df[cols].reset_index(drop=True)


def claims_tally_text(claims: pd.DataFrame) -> str:
    """One sentence per kind: distinct paper claims that hold / fail / are undecided, the benchmark's own apart."""
    t = tally(claims)
    paper, own, method = t[t["kind"] == "paper"], t[t["kind"] == "own"], t[t["kind"] == "method"]
    parts = []
    if len(paper):
        parts.append(f"**Paper claims: {int(paper['claims'].sum())} distinct, {int(paper['holds'].sum())} hold, "
                     f"{int(paper['fails'].sum())} fail, {int(paper['undecided'].sum())} undecided, "
                     f"{int(paper['underpowered'].sum())} underpowered, {int(paper['indistinguishable'].sum())} "
                     f"indistinguishable from noise, {int(paper['untested'].sum())} untested; "
                     f"{int(paper['one run'].sum())} decided on one run** (95 % intervals, each verdict certified by "
                     "its rule's error rate)")
    if len(method):
        parts.append(f"claims of the newer methods' own papers, decided on the same data: {_counts(method)}")
    if len(own):
        parts.append(f"the benchmark's own pre-registered claims: {_counts(own)}")
    consistent = _consistency(claims)
    if consistent:
        parts.append(consistent)
    n_expl = int(claims["exploratory"].map(lambda v: str(v).strip().lower() in ("true", "1")).sum()) if len(claims) else 0
    if n_expl:
        parts.append(f"{n_expl} exploratory readings outside the tally")
    return "; ".join(parts) + "." if parts else "No claims recorded."


def _counts(t: pd.DataFrame) -> str:
    """``"1 hold, 1 fails, ... of 4 (4 decided on one run)"``: a tally's rows as one phrase."""
    said = ", ".join(f"{int(t[v].sum())} {v}" for v in ("holds", "fails", "undecided", "underpowered",
                                                          "indistinguishable") if int(t[v].sum()))  # fmt: skip
    return f"{said or 'none decided'} of {int(t['claims'].sum())} ({int(t['one run'].sum())} decided on one run)"


def _consistency(claims: pd.DataFrame) -> str:
    """"consistent with the paper's own numbers: k of n": the paper claims whose ``paper_verdict`` (our rule on the
    paper's own per-set numbers) is known, and how many of them our interval's verdict equals."""
    if claims.empty or "paper_verdict" not in claims:
        return ""
    df = claims[claim_kinds(claims) == "paper"]
    known = df[df["paper_verdict"].astype(object).where(df["paper_verdict"].notna(), "").isin(["holds", "fails", "undecided"])]
    if known.empty:
        return ""
    ours = known["interval_verdict"] if "interval_verdict" in known else known["verdict"]
    return (f"consistent with the paper's own numbers under the same rule: {int((ours == known['paper_verdict']).sum())}"
            f" of {len(known)}")


def paper_comparison(frame: pd.DataFrame) -> pd.DataFrame:
    """Every metric the paper reports a number for: ours, paper, ours - paper, and the paper's table/section."""
    df = summary_table(frame)
    df = df[df["paper"].notna()].copy()
    df["source"] = df.apply(_source, axis=1)
    df = df.rename(columns={"value": "ours", "diff_vs_paper": "ours - paper", "name": "metric"})
    return df[["notebook", "metric", "labels", "ours", "paper", "ours - paper", "unit", "source"]].reset_index(
        drop=True
    )


def render_summary(frame: pd.DataFrame, times: pd.DataFrame, *, claims: pd.DataFrame | None = None,
                   profile: str = "default") -> str:  # fmt: skip
    """The full ``summary.md`` text."""
    claims = pd.DataFrame(columns=CLAIM_COLUMNS) if claims is None else claims
    comparison = paper_comparison(frame)
    parts = [
        "# Results summary",
        f"Profile `{profile}`: {len(frame)} recorded metrics from {frame['notebook'].nunique()} notebook(s). "
        "Written by `python -m helpers summary` / `publish`; do not edit by hand.",
        "## Run times (this machine)",
        _times_markdown(times),
        *_stale_note(frame, times),
        "## Claims",
        claims_tally_text(claims) + " Each claim is registered once in its notebook's `claims.py` with the paper's "
        "words, a criterion that never changes once its verdict is recorded (the five papers' first criteria were "
        "written after the first runs had computed their quantities: they are not pre-registered) and a verdict from "
        "its 95 % interval (over three or more seeds where a trained model decides it; \"one run\" where a single "
        "run does), certified by the error rate of the verdict given ([claims_power.md](claims_power.md)): holds "
        "where the rule's size (how often it says holds when the claim is false) is at most 0.05, fails where its "
        "false-fail rate (how often it says fails in the world of the paper's effect) is at most 0.05; otherwise "
        "indistinguishable from noise where its size exceeds 0.05, undecided where its power at the paper's effect "
        "is at least 0.80, underpowered below. All columns: [claims.csv](claims.csv).",
        to_markdown(tally(claims)),
        to_markdown(claims_table(claims)),
        "## Metrics the papers report, beside ours",
        to_markdown(comparison),
        "## Every recorded metric",
        to_markdown(summary_table(frame)),
    ]
    return "\n\n".join(p.rstrip() for p in parts) + "\n"


def _stale_note(frame: pd.DataFrame, times: pd.DataFrame) -> list[str]:
    """A warning for notebooks whose latest run failed: their records are from their last successful run."""
    if times.empty or "status" not in times:
        return []
    failed = sorted(set(times.loc[times["status"] == "failed", "notebook"]) & set(frame["notebook"]))
    if not failed:
        return []
    return [f"**Stale:** the latest run of {', '.join(failed)} failed; the rows below are from its last successful "
            "run (the failed run's own records are in `results/failed/`)."]


def render_readme_section(
    frame: pd.DataFrame, times: pd.DataFrame, *, claims: pd.DataFrame | None = None, profile: str = "default",
    figures: Path | None = None, readme_dir: Path = REPO_ROOT,
) -> str:
    """The README's results section (between the markers): one row per notebook (paper, claims held, a headline
    number beside the paper's, wall time, links to its report and published notebook; :mod:`helpers.publish.reports`),
    generated from the same tables as ``summary.md``."""
    from helpers.publish.reports import paper_rows

    claims = pd.DataFrame(columns=CLAIM_COLUMNS) if claims is None else claims
    whole = times[times["notebook"] == WHOLE_RUN]
    per_nb = times[times["notebook"] != WHOLE_RUN]
    if len(whole):
        w = whole.iloc[-1]
        run = (f"one run of {len(per_nb)} notebooks took **{float(w['wall_s']) / 60:.1f} min** wall clock "
               f"(notebooks side by side; 1-min load average {w['load_avg']})")  # fmt: skip
    else:
        run = f"the notebooks' times add up to **{float(per_nb['wall_s'].sum()) / 60:.1f} min**"
    parts = [
        README_BEGIN,
        "<!-- generated by `python -m helpers publish`; edits here are overwritten -->",
        f"Measured by the main job on the `{profile}` profile on this project's reference machine (2 CPU cores, "
        f"no GPU): {run}. {claims_tally_text(claims)} Every claim with its interval, metric and paper number is in "
        "[figures/summary.md](figures/summary.md) ([figures/claims.csv](figures/claims.csv)); each report says what "
        "reproduces, what does not and the measured cause.",
        to_markdown(paper_rows(frame, claims, per_nb)),
        README_END,
    ]
    return "\n\n".join(p.rstrip() for p in parts)


def update_readme(readme: str | Path, section: str) -> bool:
    """Replace the text between the results markers of ``readme`` with ``section``; False if no markers."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        return False
    new = text[:begin] + section + text[end + len(README_END):]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return True


def load_summary(figures: str | Path | None = None, *, stem: str = "summary") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read back ``<stem>.csv`` and the run times written by :func:`write_report` (the README's only inputs)."""
    out = Path(figures) if figures is not None else figures_dir()
    frame = pd.read_csv(out / f"{stem}.csv", keep_default_na=False, na_values=[""])
    for col in ("unit", "source", "claim", "passed", "profile", "labels"):
        frame[col] = frame[col].astype(object).where(frame[col].notna(), "").astype(str)
    times_path = out / f"{stem.replace('summary', 'run_times', 1)}.csv"
    times = pd.read_csv(times_path) if times_path.exists() else pd.DataFrame(
        columns=["notebook", "status", "wall_s", "cpu_s", "started_at", "finished_at", "load_avg"]
    )
    for col in ("cpu_s", "started_at"):  # run times published before these were recorded
        if col not in times:
            times[col] = pd.NA
    times["finished_at"] = times["finished_at"].astype(object).where(times["finished_at"].notna(), "").astype(str)
    return frame, times


def load_claims(figures: str | Path | None = None) -> pd.DataFrame:
    """``claims.csv`` of a figures folder (empty with the right columns when absent)."""
    path = (Path(figures) if figures is not None else figures_dir()) / "claims.csv"
    if not path.exists():
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def write_report(
    profile: str = "default", *, readme: str | Path | None = REPO_ROOT / "README.md",
    figures: str | Path | None = None, stem: str = "summary", run_folder: str | Path | None = None,
) -> tuple[Path, Path, bool]:
    """Write ``<stem>.{csv,md}`` and the run times of the run in ``run_folder`` (default: the profile's latest
    complete run) into ``figures`` (default: the run's own ``figures/``) and, if ``readme`` is given, its results
    section.

    The README section is rendered from the files just written (read back with :func:`load_summary`), so a
    test can regenerate it from the committed ``figures/`` alone.  Returns the CSV path, the Markdown path and
    whether the README was updated.

    Raises
    ------
    HelpersError
        If nothing was recorded for ``profile`` (the notebooks have not run): an empty summary would replace a
        good one.
    """
    run = Path(run_folder) if run_folder is not None else latest_run_dir(profile)
    frame = collect(run / "results") if run is not None else pd.DataFrame()
    if frame.empty:
        where = run / "results" if run is not None else f"a complete run of profile {profile!r}"
        raise HelpersError(
            f"no recorded results under {where}: run the notebooks first (python -m helpers run --profile {profile})"
        )
    out = Path(figures) if figures is not None else run / "figures"
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
    times = run_times(profile, directory=run)
    summary_table(frame).to_csv(csv_path, index=False)
    times.to_csv(out / f"{stem.replace('summary', 'run_times', 1)}.csv", index=False)
    claims_csv(collect_claims(run / "results")).to_csv(out / "claims.csv", index=False)
    frame, times = load_summary(out, stem=stem)
    claims = load_claims(out)
    (out / "claims_detail.md").write_text(render_details(run / "results" / "claims", claims), encoding="utf-8")
    md_path.write_text(render_summary(frame, times, claims=claims, profile=profile), encoding="utf-8")
    updated = False
    if readme is not None and Path(readme).exists():
        section = render_readme_section(frame, times, claims=claims, profile=profile, figures=out,
                                        readme_dir=Path(readme).parent)  # fmt: skip
        updated = update_readme(readme, section)
    return csv_path, md_path, updated


def compare_runs(before: pd.DataFrame, after: pd.DataFrame, *, rtol: float = 1e-9) -> pd.DataFrame:
    """How much two runs' records differ, per notebook: metrics compared, how many moved (beyond ``rtol``), the
    largest absolute and relative change, and the claims whose verdict flipped.

    ``before`` and ``after`` are frames of :func:`helpers.run.results.collect` (or ``summary.csv``); a metric is one
    (notebook, name, labels) row; run times (unit ``s``) are left out.  Use it to say what a change of machine,
    thread count or executor did to a run's numbers.
    """

    def keyed(frame: pd.DataFrame) -> pd.DataFrame:
        df = frame[frame["unit"].astype(str) != "s"].copy()
        df["labels"] = df["labels"].map(lambda v: json.dumps(v, sort_keys=True) if isinstance(v, dict) else str(v))
        df["value"] = pd.to_numeric(df["value"], errors="coerce")
        verdict = {"true": "pass", "false": "fail", "pass": "pass", "fail": "fail"}
        df["passed"] = [verdict.get(str(v).strip().lower(), "") if v is not None else "" for v in df["passed"]]
        return df.drop_duplicates(["notebook", "name", "labels"], keep="last").set_index(["notebook", "name", "labels"])

    a, b = keyed(before), keyed(after)
    both = a[["value", "passed", "claim"]].add_suffix("_before").join(b[["value", "passed"]].add_suffix("_after"), how="inner")
    va, vb = both["value_before"], both["value_after"]
    diff = (vb - va).abs()
    moved = ~((diff <= rtol * va.abs().clip(lower=1.0)) | (va.isna() & vb.isna()))
    both = both.rename(columns={"claim_before": "claim"}).assign(abs_change=diff, rel_change=diff / va.abs().where(va.abs() > 0), moved=moved,
                       flipped=(both["passed_before"] != both["passed_after"]) & (both["passed_before"] != ""))  # fmt: skip
    rows = []
    for nb, g in both.groupby(level="notebook"):
        rows.append({
            "notebook": nb, "metrics": len(g), "moved": int(g["moved"].sum()),
            "max_abs_change": float(g["abs_change"].max()) if g["moved"].any() else 0.0,
            "max_rel_change": float(g["rel_change"].max()) if g["moved"].any() else 0.0,
            "claims": int((g["passed_before"] != "").sum()), "verdicts_flipped": int(g["flipped"].sum()),
            "flipped": "; ".join(f"{name} ({pb} -> {pa})" for (_, name, _), pb, pa in
                                 zip(g.index[g["flipped"]], g["passed_before"][g["flipped"]], g["passed_after"][g["flipped"]])),
        })  # fmt: skip
    return pd.DataFrame(rows)


def render_details(folder: str | Path, claims: pd.DataFrame) -> str:
    """Markdown of every claim's per-setup detail (the ``<notebook>.<claim id>.csv`` files in ``folder``), each under
    its claim id with the verdict, for the reports and ``figures/claims_detail.md``."""
    from helpers.publish.reports import interval_text
    from helpers.tables import to_markdown

    folder = Path(folder)
    parts = ["# Claims: per-setup detail", "Generated from the run's records; one table per claim decided on several "
             "setups, sets, pairs or models (the rows its estimate is computed from)."]  # fmt: skip
    by_id = claims.set_index("id") if len(claims) else pd.DataFrame()
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        cid = path.stem.split(".", 1)[1] if "." in path.stem else path.stem
        head = f"## `{cid}`"
        if cid in by_id.index:
            r = by_id.loc[cid]
            head += f" — {r['verdict']} ({r['quantity']}: {interval_text(r['estimate'], r['low'], r['high'])})"
        parts += [head, to_markdown(pd.read_csv(path))]
    return "\n\n".join(p.rstrip() for p in parts) + "\n"
