"""Command line: ``python -m helpers {run,summary,data} ...``.

Examples
--------
python -m helpers run --profile default            # every notebook, default profile
python -m helpers run --profile smoke --only 00_example -p epochs=1
python -m helpers run --workers 1                   # one notebook after another, in this process (debugging)
python -m helpers run --scheduler tcp://HOST:8786   # on an existing Dask cluster
python -m helpers summary                           # the latest complete default run: its figures/summary.md
python -m helpers publish --only 02                 # a run's figures and records become the committed results
python -m helpers data check                        # verify every data file's sha256
python -m helpers calibrate                         # this machine against the published run's, for its times
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

import yaml

from helpers.errors import HelpersError


def _parse_param(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), yaml.safe_load(value)


#: parameter-name endings whose string values are file or folder paths
_PATH_SUFFIXES = ("_path", "_paths", "_dir", "_file", "_files", "_sets")


def _absolute_paths(params: dict[str, Any]) -> dict[str, Any]:
    """Relative paths in ``-p`` values, resolved against the directory the command was run from.

    The notebooks execute in ``notebooks/``, so a relative path would otherwise point elsewhere.  A string (or a
    list of strings) is made absolute when the parameter's name ends in a path suffix (``byod_path``,
    ``extra_test_sets``, ...) or when it names a file or folder that exists here; URLs and other values are kept.
    """
    from pathlib import Path

    def fix(key: str, v: Any) -> Any:
        if isinstance(v, list):
            return [fix(key, x) for x in v]
        if not isinstance(v, str) or not v or "://" in v or Path(v).expanduser().is_absolute():
            return v
        if key.endswith(_PATH_SUFFIXES) or Path(v).exists():
            return str(Path(v).expanduser().resolve())
        return v

    return {k: fix(k, v) for k, v in params.items()}


def _report(profile: str, run: str | None = None, *, publishable: bool = False) -> int:
    """Write a run's summary into its own figures folder (never the committed ``figures/``) and say where; the
    hint to publish only after a complete, unmodified ``default`` run (``publishable``), with this interpreter."""
    import os

    from helpers.paths import resolve_run_dir
    from helpers.publish.summary import write_report

    folder = resolve_run_dir(profile, run)
    if folder is None:
        raise HelpersError(f"no run {run!r} of profile {profile!r}" if run else
                           f"no complete run of profile {profile!r}: run python -m helpers run --profile {profile}")  # fmt: skip
    figures = os.environ.get("HELPERS_FIGURES") or folder / "figures"
    csv_path, md_path, _ = write_report(profile, readme=None, figures=figures, run_folder=folder)
    print(f"run folder: {folder}\nsummary -> {md_path} and {csv_path}")
    if publishable:
        print(f"to make this run the project's reference results: {sys.executable} -m helpers publish --profile "
              f"{profile} --run {folder.name}")  # fmt: skip
    return 0


def _names(values: list[str] | None) -> list[str] | None:
    """``--only 02 03`` and ``--only 02,03`` alike."""
    if values is None:
        return None
    return [name for v in values for name in v.split(",") if name.strip()]


def _workers(text: str) -> int:
    from helpers.parallel import check_workers

    try:
        return check_workers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--workers: ")) from None


def _cmd_run(args: argparse.Namespace) -> int:
    from helpers.run import runner

    if args.workers is not None and args.scheduler:
        print("error: --workers and --scheduler: give one (a cluster brings its own workers)", file=sys.stderr)
        return 2
    runs = runner.run_notebooks(
        workers=args.workers,
        scheduler=args.scheduler,
        profile=args.profile,
        only=_names(args.only),
        parameters=_absolute_paths(dict(args.param or [])),
        resume=args.resume,
        kernel_name=args.kernel,
        timeout=args.timeout,
        progress=False if args.no_progress else None,
    )
    print()
    print(runner.format_runs(runs))
    complete = len(runs) == len(runner.list_notebooks()) and all(r.status == "ok" for r in runs)
    folder = str(Path(runs[0].output).parent) if runs else None
    try:
        _report(args.profile, folder, publishable=complete and args.profile == "default" and not args.param)
    except HelpersError as exc:  # e.g. every notebook failed before recording anything: nothing to summarise
        print(f"no summary: {exc}")
    return 1 if any(r.status == "failed" for r in runs) else 0


def _cmd_summary(args: argparse.Namespace) -> int:
    return _report(args.profile, args.run)


def _cmd_publish(args: argparse.Namespace) -> int:
    from helpers.paths import REPO_ROOT
    from helpers.publish import publish

    readme = None if args.no_readme else REPO_ROOT / "README.md"
    docs = None if args.no_docs else REPO_ROOT / "docs"
    done = publish(args.profile, only=_names(args.only), run_folder=args.run, readme=readme, docs=docs,
                   keep_run_times=args.keep_run_times)  # fmt: skip
    print(f"published {', '.join(done)} into figures/ (summary, run times, figures" +
          ("" if args.no_readme else ", README results section") +
          ("" if args.no_docs else ", docs/reproductions numbers, docs/notebooks") + "); review with git diff, then commit")
    return 0


def _cmd_seeds(args: argparse.Namespace) -> int:
    from helpers.publish import seed_runs, seeds_stability

    runs = seed_runs(args.profile)
    table = seeds_stability(args.profile, destination=None if args.publish else runs.get(0, Path(".")) / "figures",
                            only=_names(args.only))  # fmt: skip
    where = "figures/claims_seeds.{csv,md} and the seeds columns of figures/claims.csv" if args.publish else \
        f"{runs[0] / 'figures'}/claims_seeds.{{csv,md}}"
    print(f"{len(table)} claims over seeds {sorted(runs)}; {int(table['changes'].sum())} change verdict; wrote {where}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m helpers", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="execute notebooks with papermill under a profile")
    run.add_argument("--profile", default="default", help="smoke | default | full (default: default)")
    run.add_argument("--only", nargs="+", metavar="NAME", help="notebook stems (or prefixes) to run")
    run.add_argument(
        "-p",
        "--param",
        action="append",
        type=_parse_param,
        metavar="NAME=VALUE",
        help="extra parameter for the selected notebooks (YAML value); repeatable",
    )
    run.add_argument(
        "--resume", action="store_true", help="skip notebooks already finished with the same inputs"
    )
    run.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="worker processes of the local Dask cluster (default: one per core, one thread each); notebooks that "
        "do not need each other run side by side and share the workers with their units; 1: everything in this "
        "process, one notebook after another (debugging)",
    )
    run.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run on an existing Dask cluster instead (its workers need this package and the same "
        "HELPERS_DATA / HELPERS_CACHE / HELPERS_RUNS paths)",
    )
    run.add_argument("--kernel", default=None, help="Jupyter kernel name (default: this Python)")
    run.add_argument("--timeout", type=float, default=None,
                     help="per-cell timeout in seconds (rounded up to whole seconds)")
    run.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                     help="stop the whole run after this many seconds, as SIGTERM or Ctrl-C would: finished "
                          "notebooks are kept and the run is recorded as interrupted (resume with --resume)")
    run.add_argument(
        "--no-progress", action="store_true", help="no cell i/n progress bar (default: shown on a terminal)"
    )
    run.add_argument(
        "--no-readme", action="store_true", help="(kept for old scripts) a run never touches the README or figures/"
    )
    run.set_defaults(func=_cmd_run)

    summary = sub.add_parser("summary", help="rebuild a run's figures/summary.{csv,md} from its records")
    summary.add_argument("--profile", default="default")
    summary.add_argument("--run", default=None, metavar="ID",
                         help="run id under <runs>/<profile>/ or a run folder (default: the latest complete run)")
    summary.add_argument("--no-readme", action="store_true", help="(kept for old scripts) no effect")
    summary.set_defaults(func=_cmd_summary)

    pub = sub.add_parser("publish", help="make a run's results the committed reference results (figures/, README)")
    pub.add_argument("--profile", default="default")
    pub.add_argument("--only", nargs="+", metavar="NAME", help="notebook stems (or prefixes) to publish")
    pub.add_argument("--run", "--run-folder", dest="run", default=None, metavar="ID",
                     help="run id under <runs>/<profile>/ or a run folder (default: the latest complete run)")
    pub.add_argument("--no-readme", action="store_true", help="leave the README's results section as it is")
    pub.add_argument("--no-docs", action="store_true",
                     help="leave docs/ alone (the reports' number blocks and docs/notebooks/)")
    pub.add_argument("--keep-run-times", action="store_true",
                     help="keep the published run times (a re-run on cached predictions that only redraws figures)")
    pub.set_defaults(func=_cmd_publish)

    seeds = sub.add_parser("seeds", help="the claims' verdicts across seeds: the profile's latest run (seed 0) and "
                                          "the latest run of each `-p seed=N`")  # fmt: skip
    seeds.add_argument("--profile", default="default")
    seeds.add_argument("--only", nargs="+", metavar="NAME",
                       help="the notebooks whose seeds runs these are (their claims' rows replace theirs; others kept)")
    seeds.add_argument("--publish", action="store_true",
                       help="write into the committed figures/ (claims_seeds.*, the seeds columns of claims.csv)")
    seeds.set_defaults(func=_cmd_seeds)

    cmp = sub.add_parser("compare", help="a run beside the published reference: each claim's estimate within the "
                         "reference seeds' range widened by its band, its verdict among theirs (smoke: records too)")  # fmt: skip
    cmp.add_argument("run", metavar="RUN", help="a run folder, or a run id under <runs>/<profile>/")
    cmp.add_argument("--profile", default="default", help="the profile a run id is looked up under")
    cmp.add_argument("--out", default=None, metavar="FILE", help="also write the comparison (Markdown) here")
    cmp.set_defaults(func=_cmd_compare)

    cal = sub.add_parser("calibrate", help="time a few seconds of the notebooks' kind of work on this machine and "
                         "compare with the published run's machine (figures/calibration.json)")  # fmt: skip
    cal.set_defaults(func=_cmd_calibrate)

    claims = sub.add_parser("claims", help="the claims' published files")
    claims_sub = claims.add_subparsers(dest="claims_command", required=True)
    refresh = claims_sub.add_parser("refresh", help="regenerate the error rates of every claim's rule "
                                    "(claims_power), the certified verdicts (claims.csv), the summary, the README's "
                                    "results section and the reports, in that order, from the published records")  # fmt: skip
    refresh.add_argument("--only", nargs="+", metavar="NB",
                         help="re-simulate the rules of these notebooks' claims (stems or prefixes); the others kept")
    refresh.add_argument("--draws", type=int, default=2000, help="draws per world of the summary rules")
    refresh.add_argument("--seeds", action="store_true",
                         help="first rebuild claims_seeds.{csv,md} from the seed runs (python -m helpers seeds)")
    refresh.add_argument("--profile", default="default", help="the profile whose seed runs --seeds reads")
    refresh.add_argument("--figures", default=None, metavar="DIR",
                         help="a copy of figures/ to refresh instead of the committed one (nothing else re-rendered)")
    refresh.set_defaults(func=_cmd_claims)

    try:
        from helpers.data.cli import add_data_parser
    except ImportError:  # data layer not installed in this checkout
        pass
    else:
        add_data_parser(sub)
    return parser


def _cmd_claims(args: argparse.Namespace) -> int:
    from helpers.claims.refresh import refresh_power
    from helpers.publish.publishing import apply_published_power, published_dir, seeds_stability

    figures = Path(args.figures) if args.figures else published_dir()
    if args.seeds:  # the seeds table first: the rules are simulated at the seeds it holds
        seeds_stability(args.profile, destination=figures if args.figures else None, only=_names(args.only))
    refresh_power(figures, only=_names(args.only), draws=args.draws)
    out = apply_published_power(figures)
    counts = out["verdict"].value_counts().to_dict()
    print(f"claims.csv: {len(out)} claims, " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) +
          ("" if args.figures else "; summary, README results section and reports re-rendered"))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from helpers.paths import runs_dir
    from helpers.publish.compare import compare_run, format_comparison

    folder = Path(args.run) if Path(args.run).is_dir() else runs_dir() / args.profile / args.run
    table = compare_run(folder)
    text = format_comparison(table)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0 if table["within"].astype(bool).all() else 1


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from helpers.paths import REPO_ROOT
    from helpers.run.calibration import calibrate, compare_with

    mine = calibrate()
    print(f"numpy {mine['numpy_s']:.3f} s, torch {mine['torch_s']:.3f} s (one thread, load {mine['load_1min']})")
    print(compare_with(REPO_ROOT / "figures" / "calibration.json", mine))
    return 0


class RunStopped(KeyboardInterrupt):
    """A run stopped from outside -- SIGTERM (a scheduler's time limit, ``timeout``, ``kill``) or ``--time-limit``
    -- taken the way Ctrl-C is: it unwinds the runner, which records the run as interrupted."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _stop_on_signals(time_limit: float | None):
    """SIGTERM (and, with ``time_limit``, a timer) raise :class:`RunStopped` in the main thread until the returned
    function restores the previous handlers."""
    import signal

    if time_limit is not None and not time_limit > 0:
        raise HelpersError(f"--time-limit: expected a positive number of seconds, got {time_limit:g}")

    def stop(signum, _frame):
        raise RunStopped(f"time limit of {time_limit:g} s reached" if signum == signal.SIGALRM
                         else f"stopped by {signal.Signals(signum).name}")  # fmt: skip

    before = {signal.SIGTERM: signal.signal(signal.SIGTERM, stop)}
    if time_limit is not None:
        before[signal.SIGALRM] = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, time_limit)

    def restore() -> None:
        if time_limit is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in before.items():
            signal.signal(signum, handler)

    return restore


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    restore = None
    try:
        if args.func is _cmd_run and threading.current_thread() is threading.main_thread():
            restore = _stop_on_signals(args.time_limit)
        return int(args.func(args) or 0)
    except HelpersError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        from helpers.run.runner import CURRENT

        where = f" while running {CURRENT['notebook']}" if CURRENT.get("notebook") else ""
        why = f" ({exc.reason})" if isinstance(exc, RunStopped) else ""
        profile = getattr(args, "profile", "default")
        print(
            f"\ninterrupted{where}{why}; finished notebooks and caches are kept -- resume with: "
            f"python -m helpers run --profile {profile} --resume",
            file=sys.stderr,
        )
        return 143 if isinstance(exc, RunStopped) else 130
    finally:
        if restore is not None:
            restore()


if __name__ == "__main__":
    sys.exit(main())
