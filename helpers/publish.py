"""Publishing a run as the project's reference results: the one step that writes the committed ``figures/``.

A run (``python -m helpers run``) writes only under its run folder, ``<runs>/<profile>/`` (executed notebooks,
``results/*.jsonl``, ``figures/``, ``run_status.json``).  :func:`publish` copies a run's figures into the committed
``figures/`` folder, splices its records into ``figures/summary.csv`` and ``run_times.csv`` (one notebook's rows
replace that notebook's rows, the others are kept), re-renders ``figures/summary.md`` and the README's results
section.  A notebook whose latest run failed is refused: its records are stale.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from helpers.errors import HelpersError
from helpers.paths import REPO_ROOT, published_dir, resolve_run_dir

__all__ = ["publish"]


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
        ``notebooks/<stem>.ipynb`` with its outputs (:mod:`helpers.reports`).  None leaves the docs alone.

    Returns
    -------
    list of str
        The notebooks published.
    """
    from helpers.results import collect, summary_table
    from helpers.summary import (
        WHOLE_RUN,
        load_summary,
        render_readme_section,
        render_summary,
        run_times,
        update_readme,
    )

    run = resolve_run_dir(profile, run_folder)
    if run is None:
        raise HelpersError(
            f"no run {run_folder!r} of profile {profile!r}" if run_folder is not None else
            f"no complete run of profile {profile!r} with its own parameters: run python -m helpers run --profile "
            f"{profile} first (runs with -p overrides are never published by default)"
        )  # fmt: skip
    from helpers.runner import run_folder_label

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
    times_csv = dest / "run_times.csv"
    old_t = pd.read_csv(times_csv) if times_csv.exists() else times.iloc[:0]
    replaced = [n for n in chosen if not (keep_run_times and n in set(old_t.notebook))]
    if only is None and not keep_run_times:  # the whole run's wall clock, only when the whole run is published
        replaced.append(WHOLE_RUN)
    t = pd.concat(
        [old_t[~old_t.notebook.isin(replaced)], times[times.notebook.isin(replaced)]], ignore_index=True
    )
    t.sort_values("notebook").to_csv(times_csv, index=False)
    for nb in chosen:
        for f in sorted(src_figs.glob(f"{nb}_*")):
            shutil.copy2(f, dest / f.name)
    frame_pub, times_pub = load_summary(dest)
    (dest / "summary.md").write_text(render_summary(frame_pub, times_pub, profile=profile), encoding="utf-8")
    if readme is not None and Path(readme).exists():
        section = render_readme_section(
            frame_pub, times_pub, profile=profile, figures=dest, readme_dir=Path(readme).parent
        )
        update_readme(readme, section)
    if docs is not None:
        _publish_docs(Path(docs), run, chosen, frame_pub, times_pub)
    return chosen


def _publish_docs(docs: Path, run: Path, chosen: list[str], frame: pd.DataFrame, times: pd.DataFrame) -> None:
    """The reports' number blocks and the executed notebooks of ``chosen`` (:mod:`helpers.reports`)."""
    from helpers.reports import headline_values, publish_notebook, splice_reports
    from helpers.summary import claims_table, paper_comparison

    splice_reports(frame, claims_table(frame), paper_comparison(frame), times, folder=docs / "reproductions",
                   only=set(chosen))  # fmt: skip
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
