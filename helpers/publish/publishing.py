"""Publishing a run as the project's reference results: the one step that writes the committed ``figures/``.

A run (``python -m helpers run``) writes only under its run folder, ``<runs>/<profile>/`` (executed notebooks,
``results/*.jsonl``, ``figures/``, ``run_status.json``).  :func:`publish` copies a run's figures into the committed
``figures/`` folder, splices its records into ``figures/summary.csv``, ``claims.csv`` and ``run_times.csv`` (one
notebook's rows replace that notebook's rows, the others are kept), re-renders ``figures/summary.md`` and the README's results
section.  A notebook whose latest run failed is refused: its records are stale.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from helpers.errors import HelpersError
from helpers.paths import REPO_ROOT, published_dir, resolve_run_dir

__all__ = ["publish", "seed_runs", "seeds_stability"]


def publish(
    profile: str = "default",
    *,
    only: Iterable[str] | None = None,
    run_folder: str | os.PathLike[str] | None = None,
    figures: str | os.PathLike[str] | None = None,
    destination: str | os.PathLike[str] | None = None,
    readme: str | os.PathLike[str] | None = REPO_ROOT / "README.md",
    keep_run_times: bool = False,
    docs: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Publish the run ``run_folder`` (a run id of ``profile`` or a folder; default: the profile's latest complete
    run, :func:`helpers.paths.latest_run_dir`) as the reference results.  A run labelled as overridden or as
    user data is refused.

    Parameters
    ----------
    profile : str
        The run's profile (the committed results are the ``default`` profile's).
    only : iterable of str, optional
        Notebook stems (or prefixes) to publish; default: every notebook with records in the run.
    run_folder, figures : str or path, optional
        The run (id or folder) and its figures folder (default ``<run folder>/figures``).
    destination : path, optional
        Where the reference results live (default: the repository's ``figures/``).
    readme : path or None
        The README whose results section is re-rendered (None: leave it).
    keep_run_times : bool, default False
        Keep the published run times of the chosen notebooks (for a re-run that only redraws figures from cached
        predictions: its seconds are not the notebook's cost from an empty cache): their rows of ``run_times.csv``
        and their published records in seconds (unit ``"s"``, e.g. ``wall_time_s``).  A notebook with no published
        time gets the run's.
    docs : path, optional
        The documentation folder (the command line passes the repository's ``docs/``): the number blocks of
        ``reproductions/*.md`` are re-rendered and each published notebook, executed, goes to
        ``notebooks/<stem>.ipynb`` with its outputs (:mod:`helpers.publish.reports`).  None leaves the docs alone.

    Returns
    -------
    list of str
        The notebooks published.
    """
    from helpers.claims import collect_claims
    from helpers.publish.summary import (
        WHOLE_RUN,
        load_claims,
        render_details,
        run_times,
    )
    from helpers.run.results import collect, summary_table

    run = resolve_run_dir(profile, run_folder)
    if run is None:
        raise HelpersError(
            f"no run {run_folder!r} of profile {profile!r}" if run_folder is not None else
            f"no complete run of profile {profile!r} with its own parameters: run python -m helpers run --profile "
            f"{profile} first (runs with -p overrides are never published by default)"
        )  # fmt: skip
    from helpers.run.runner import run_folder_label

    label = run_folder_label(run)
    if label:
        raise HelpersError(f"run {run.name} is labelled {label!r} (-p overrides or your data): not a reference run")
    src_figs = Path(figures) if figures is not None else run / "figures"
    dest = Path(destination) if destination is not None else published_dir()
    frame = collect(run / "results")
    if frame.empty:
        raise HelpersError(f"no recorded results under {run / 'results'}: run the notebooks first")
    recorded = sorted(frame.notebook.unique())
    chosen = recorded if only is None else [n for n in recorded if any(n.startswith(o) for o in only)]
    if not chosen:
        raise HelpersError(f"--only {list(only or [])}: none of the run's notebooks {recorded} match")
    times = run_times(profile, directory=run)
    failed = sorted(set(times.loc[times.status == "failed", "notebook"]) & set(chosen))
    if failed:
        raise HelpersError(
            f"the latest run of {', '.join(failed)} failed: its records are stale; re-run it or leave it out (--only)"
        )
    dest.mkdir(parents=True, exist_ok=True)
    new = summary_table(frame[frame.notebook.isin(chosen)])
    old_csv = dest / "summary.csv"
    old = pd.read_csv(old_csv, keep_default_na=False, na_values=[""]) if old_csv.exists() else new.iloc[:0]
    if keep_run_times:  # the run's own seconds (recorded with unit "s") are a cached re-run's, not the cost
        kept = old[old.notebook.isin(chosen) & (old.unit == "s")]
        timed = new.notebook.isin(set(kept.notebook)) & (new.unit == "s")
        new = pd.concat([new[~timed], kept], ignore_index=True)
    merged = pd.concat([old[~old.notebook.isin(chosen)], new], ignore_index=True)
    merged = merged.sort_values("notebook", kind="stable")
    merged.to_csv(old_csv, index=False)
    recorded_claims = collect_claims(run / "results")
    _merge_claims(dest / "claims.csv", published_claims(recorded_claims, published_stability(dest, recorded_claims),
                                                         dest), chosen)  # fmt: skip
    _copy_claim_details(run / "results" / "claims", dest / "claims", chosen)
    (dest / "claims_detail.md").write_text(render_details(dest / "claims", load_claims(dest)), encoding="utf-8")
    times_csv = dest / "run_times.csv"
    old_t = pd.read_csv(times_csv) if times_csv.exists() else times.iloc[:0]
    replaced = [n for n in chosen if not (keep_run_times and n in set(old_t.notebook))]
    if only is None and not keep_run_times:  # the whole run's wall clock, only when the whole run is published
        replaced.append(WHOLE_RUN)
    t = pd.concat(
        [old_t[~old_t.notebook.isin(replaced)], times[times.notebook.isin(replaced)]], ignore_index=True
    )
    t.sort_values("notebook").to_csv(times_csv, index=False)
    if (run / "calibration.json").exists() and WHOLE_RUN in replaced:  # the machine the published times are from
        shutil.copy2(run / "calibration.json", dest / "calibration.json")
    if only is None:  # this machine's last smoke run and make test, beside the run's times
        from helpers.publish.times import reference_times

        write_reference_environment(run, dest)

        (dest / "reference_times.json").write_text(json.dumps(reference_times(), indent=1), encoding="utf-8")
    for nb in chosen:
        for f in sorted(src_figs.glob(f"{nb}_*")):
            shutil.copy2(f, dest / f.name)
    frame_pub, times_pub, claims_pub = render_published(dest, profile=profile, readme=readme)
    if docs is not None:
        _publish_docs(Path(docs), run, chosen, frame_pub, times_pub, claims_pub)
        refresh_prose(Path(docs).parent, frame_pub, times_pub, dest)
    return chosen


def write_reference_environment(run: Path, dest: Path) -> dict:
    """``reference_environment.json`` in ``dest``: what the published run ran with, from its ``run_status.json``
    (its code's commit, CPU kind, CPU-kernel settings and the exact version of every installed package); a run of
    code older than the version record says so instead of guessing."""
    meta = json.loads((Path(run) / "run_status.json").read_text(encoding="utf-8")).get("_run", {})
    keys = ("run_id", "code_commit", "code_dirty", "cpu_kind", "kernel_env", "packages")
    env = {k: meta.get(k) for k in keys}
    if not env["packages"]:
        env["packages"] = "not recorded: the run predates the version record (helpers.run.provenance)"
    (Path(dest) / "reference_environment.json").write_text(json.dumps(env, indent=1), encoding="utf-8")
    return env


def refresh_prose(root: Path, frame: pd.DataFrame, times: pd.DataFrame, figures: Path) -> list[Path]:
    """The quotes and included tables of the README and ``docs/`` (:mod:`helpers.publish.quotes`) and the run-times
    block of ``docs/running.md`` (:mod:`helpers.publish.times`), from the published tables in ``figures``."""
    from helpers.publish.quotes import prose_files, refresh_file
    from helpers.publish.times import splice_times

    changed = [p for p in prose_files(root) if p.exists() and refresh_file(p, frame, figures)]
    calibration, reference = (json.loads(p.read_text(encoding="utf-8")) if p.exists() else None
                              for p in (figures / "calibration.json", figures / "reference_times.json"))  # fmt: skip
    running = root / "docs" / "running.md"
    if running.exists() and splice_times(running, times, calibration, reference):
        changed.append(running)
    return changed


def render_published(dest: Path, *, profile: str = "default", readme: str | os.PathLike[str] | None = None,
                     reports: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Re-render what is generated from the published tables of ``dest``: its ``summary.md``, the README's results
    section (``readme``, None: leave it) and the number blocks of the reports in ``reports`` (None: leave them).
    Returns the published ``(summary, run times, claims)`` frames."""
    from helpers.publish.reports import splice_reports
    from helpers.publish.summary import (
        load_claims,
        load_summary,
        paper_comparison,
        render_readme_section,
        render_summary,
        update_readme,
    )

    frame_pub, times_pub = load_summary(dest)
    claims_pub = load_claims(dest)
    (dest / "summary.md").write_text(render_summary(frame_pub, times_pub, claims=claims_pub, profile=profile),
                                     encoding="utf-8")  # fmt: skip
    if readme is not None and Path(readme).exists():
        section = render_readme_section(
            frame_pub, times_pub, claims=claims_pub, profile=profile, figures=dest, readme_dir=Path(readme).parent
        )
        update_readme(readme, section)
    if reports is not None:
        splice_reports(frame_pub, claims_pub, paper_comparison(frame_pub), times_pub, folder=Path(reports))
        refresh_prose(Path(reports).parent.parent, frame_pub, times_pub, dest)
    return frame_pub, times_pub, claims_pub


def _copy_claim_details(source: Path, dest: Path, chosen: list[str]) -> None:
    """The chosen notebooks' per-claim detail tables (``<notebook>.<claim id>.csv``) replace theirs in ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for nb in chosen:
        for old in dest.glob(f"{nb}.*.csv"):
            old.unlink()
        for f in sorted(source.glob(f"{nb}.*.csv")) if source.is_dir() else []:
            shutil.copy2(f, dest / f.name)


def published_claims(claims: pd.DataFrame, stability: pd.DataFrame | None, dest: Path) -> pd.DataFrame:
    """The ``claims.csv`` table of ``claims`` (:func:`helpers.claims.verdicts.claims_csv`) with the seeds table
    ``stability`` and the error rates published in ``dest``; ``needed`` costed by its run times."""
    from helpers.claims.refresh import redrawn_ids
    from helpers.claims.verdicts import claims_csv

    path = Path(dest) / "run_times.csv"
    times = pd.read_csv(path) if path.exists() else pd.DataFrame()
    cpu = times.set_index("notebook")["cpu_s"].dropna().to_dict() if {"notebook", "cpu_s"} <= set(times) else {}
    return claims_csv(claims, stability, read_power(dest), redrawn=redrawn_ids(), cpu_s=cpu)


def read_power(dest: Path) -> pd.DataFrame | None:
    """``claims_power.csv`` of ``dest`` (each rule's error rates, ``python -m helpers claims refresh``), if any."""
    path = Path(dest) / "claims_power.csv"
    return pd.read_csv(path, keep_default_na=False, na_values=[""]) if path.exists() else None


def published_stability(dest: Path, claims: pd.DataFrame) -> pd.DataFrame | None:
    """The committed seeds table (``claims_seeds.csv``) for the claims whose seed-0 entry is this run's estimate
    (same value to three significant digits): publishing a run keeps the seeds that were decided with it."""
    from helpers.claims import format_estimate

    path = Path(dest) / "claims_seeds.csv"
    if not path.exists() or claims.empty:
        return None
    table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    if "seed 0" not in table:
        return None
    own = "run_estimate" if "run_estimate" in claims else "estimate"  # the run's own outcome, not the seeds'
    mine = claims.set_index("id")[own].map(format_estimate)
    same = table["id"].map(mine).eq(table["seed 0"].astype(str).str.split(" ").str[0])
    return table[same].reset_index(drop=True)


def apply_published_power(dest: str | os.PathLike[str] | None = None, *, readme: str | os.PathLike[str] | None = None,
                          reports: str | os.PathLike[str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Re-derive ``dest``'s ``claims.csv`` verdicts from the intervals it holds, its seeds table and its rules' error
    rates (:mod:`helpers.claims.verdicts`), and re-render what quotes them (summary; the README section and the
    reports' blocks of ``readme`` / ``reports``, by default the repository's when ``dest`` is its figures)."""
    from helpers.publish.summary import load_claims

    folder = Path(dest) if dest is not None else published_dir()
    claims = load_claims(folder)
    out = published_claims(claims, published_stability(folder, claims), folder)
    out.to_csv(folder / "claims.csv", index=False)
    if folder.resolve() == published_dir().resolve():
        readme = readme or REPO_ROOT / "README.md"
        reports = reports or REPO_ROOT / "docs/reproductions"
    if (folder / "summary.csv").exists():
        render_published(folder, readme=readme, reports=reports)
    return out


def _merge_claims(path: Path, new: pd.DataFrame, chosen: list[str]) -> None:
    """``claims.csv``: the chosen notebooks' claims replace theirs; the others' are kept (the seeds' columns of a
    kept claim too, until :func:`helpers.claims.stability_table` is published again)."""
    old = pd.read_csv(path, keep_default_na=False, na_values=[""]) if path.exists() else new.iloc[:0]
    merged = pd.concat([old[~old["notebook"].isin(chosen)], new], ignore_index=True)
    merged.sort_values(["paper", "id"], kind="stable").to_csv(path, index=False)


def _publish_docs(docs: Path, run: Path, chosen: list[str], frame: pd.DataFrame, times: pd.DataFrame,
                  claims: pd.DataFrame) -> None:  # fmt: skip
    """The reports' number blocks and the executed notebooks of ``chosen`` (:mod:`helpers.publish.reports`)."""
    from helpers.publish.reports import headline_values, publish_notebook, splice_reports
    from helpers.publish.summary import paper_comparison

    splice_reports(frame, claims, paper_comparison(frame), times, folder=docs / "reproductions", only=set(chosen))
    heads = headline_values(frame)
    for nb in chosen:
        executed = run / f"{nb}.ipynb"
        if not executed.exists():
            continue
        if any((run / "figures").glob(f"{nb}_*.png")) and '"image/png"' not in executed.read_text(encoding="utf-8"):
            print(f"warning: {nb}: not written to docs/notebooks: the run saved figures but shows none inline "
                  "(executed with a non-inline matplotlib backend); re-run it to publish the notebook")  # fmt: skip
            continue
        publish_notebook(executed, docs / "notebooks" / f"{nb}.ipynb", run_id=run.name, headline=heads.get(nb))


def seed_runs(profile: str = "default", only: list[str] | None = None) -> dict[int, Path]:
    """The runs a seeds stability table is built from: ``{0: the profile's latest complete run, N: the latest run
    labelled seed<N>}`` (``python -m helpers run -p seed=N``; the notebooks' default seed is 0).  With ``only``
    (notebook stems or prefixes), each seed's latest run that recorded claims of every named notebook: seed 0 is
    then the latest unlabelled run that holds them, complete or not (a notebook re-run and published alone)."""
    from helpers.paths import latest_run_dir, run_dirs
    from helpers.run.runner import run_folder_label

    def holds(d: Path) -> bool:
        names = [p.stem for p in (d / "results" / "claims").glob("*.jsonl")]
        return not only or all(any(n.startswith(o) for n in names) for o in only)

    out: dict[int, Path] = {}
    base = latest_run_dir(profile)
    if base is not None and holds(base):
        out[0] = base
    for d in run_dirs(profile):  # oldest first: the latest of each label wins
        label = run_folder_label(d)
        if not holds(d):
            continue
        if label == "" and only:
            out[0] = d
        elif label.startswith("seed") and label[4:].isdigit() and int(label[4:]) != 0:
            out[int(label[4:])] = d
    return dict(sorted(out.items()))


def seeds_stability(profile: str = "default", *, destination: str | os.PathLike[str] | None = None,
                    write: bool = True, only: list[str] | None = None) -> pd.DataFrame:  # fmt: skip
    """The seeds stability table of the claims (:func:`helpers.claims.stability_table`) over :func:`seed_runs`.

    Writes ``claims_seeds.{csv,md}`` into ``destination`` (default: the repository's ``figures/``) and the
    ``seeds_held`` / ``seeds`` columns of its ``claims.csv`` (claims decided on one seed only keep 1 of 1).  With
    ``only`` (notebook stems or prefixes, e.g. ``["04"]``: the seeds runs of those notebooks alone), the rows of
    those notebooks' claims replace theirs in the existing table and the others are kept.
    """
    from helpers.claims import collect_claims, stability_table
    from helpers.publish.summary import load_claims
    from helpers.tables import to_markdown

    runs = seed_runs(profile, only)
    if len(runs) < 2:
        what = f" holding claims of {', '.join(only)}" if only else ""
        raise HelpersError(f"seeds: found runs{what} for seeds {sorted(runs)} of profile {profile!r}; run another "
                           f"seed first, e.g. python -m helpers run --profile {profile} --only {' '.join(only or ['01', '02', '03', '04'])} "
                           "-p seed=1")  # fmt: skip
    outcomes = {s: collect_claims(d / "results") for s, d in runs.items()}
    if only:
        outcomes = {s: f[f["notebook"].astype(str).str.startswith(tuple(only))] for s, f in outcomes.items()}
    table = stability_table(outcomes)
    dest = Path(destination) if destination is not None else published_dir()
    if only and (dest / "claims_seeds.csv").exists():
        kept = pd.read_csv(dest / "claims_seeds.csv", keep_default_na=False, na_values=[""])
        table = pd.concat([kept[~kept["id"].isin(table["id"])], table], ignore_index=True)
        table = table.sort_values(["paper", "id"], kind="stable").reset_index(drop=True)
    if not write:
        return table
    table.to_csv(dest / "claims_seeds.csv", index=False)
    changed = table[table["changes"]]["id"].tolist()
    (dest / "claims_seeds.md").write_text(
        "# Claims across seeds\n\n"
        f"Runs: {', '.join(f'seed {s}: `{d.name}`' for s, d in runs.items())}"
        + (f" (for the claims of {', '.join(only)}; the other rows are kept from the earlier seeds runs)" if only else "")
        + ". A claim decided on trained models is "
        "re-decided on every seed's run; `seeds_held` counts the seeds on which it holds.  With at least three seeds "
        "the claim's verdict in `claims.csv` comes from one interval over them, the seed its top resampling level "
        "(`helpers.claims.seeds`).\n\n"
        + (f"Verdict changes across seeds: {', '.join(changed)}.\n\n" if changed else "No verdict changes across seeds.\n\n")
        + to_markdown(table) + "\n", encoding="utf-8")  # fmt: skip
    claims = load_claims(dest)
    if len(claims):
        published_claims(claims.drop(columns=["seeds_held", "seeds", "seed_verdicts"], errors="ignore"), table,
                         dest).to_csv(
            dest / "claims.csv", index=False)
    if destination is None and (dest / "summary.csv").exists():  # the committed figures: what quotes them follows
        render_published(dest, profile=profile, readme=REPO_ROOT / "README.md", reports=REPO_ROOT / "docs/reproductions")
    return table
