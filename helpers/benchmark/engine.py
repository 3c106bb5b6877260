"""Run every applicable label-free estimator on :class:`~helpers.benchmark.task.ShiftTask` s -> one tidy frame.

Method catalogue (names of :mod:`helpers.estimators`' registry; :mod:`.methods`)
----------------------------------------------------------------------------------
``accuracy`` methods output an accuracy directly (fitted on the labelled reference where needed):
average_confidence, doc, maxprob, atc_mc, atc_ne, cot, cbpe (NannyML's CBPE), agreement (needs partner logits), cott
and confusion_matrix_shift.

``score`` methods output a set-level score that a :class:`~helpers.estimators.MetaSetRegression` (linear, fitted on
the task's meta-set: one (score, accuracy) pair per meta set, paper 5 Algorithm 1) maps to accuracy:
average_negative_entropy, average_energy, mde, mde_normalized, nuclear_norm, frechet, mano, softmax_corr and
dispersion.  They apply only to tasks with a meta-set.  Raw ``mde`` carries a ``log N`` term, so it applies only
when every meta and target set has the same size; ``mde_normalized`` (MDE − log N) applies to any sizes.
``frechet`` uses the task's features when given, else the logits as features; ``dispersion`` needs the features.

Intervals
---------
Every row's ``lower``/``upper`` is the percentile bootstrap interval over target examples (``n_boot`` resamples,
``level``; :mod:`helpers.estimators.bootstrap`) with the fitted state (thresholds, reference statistics, the
regression line) held fixed.  For a regressed score it is the bootstrap interval of the score mapped through the
fitted line (the replicates are mapped, clipped to [0, 1], then the percentiles are taken) -- so it covers target-
sampling noise only, not the uncertainty of the line.  ``covered`` = lower <= true accuracy <= upper.

Time
----
``seconds`` of a row = the estimate on that target set (including its bootstrap) + the method's per-task set-up
(reference fit, and for score methods the meta-set scoring and regression) divided equally over the task's targets,
so summing ``seconds`` over a task's rows gives the method's total cost on the task.

Rows computed elsewhere (self-training RI/RM ensembles, discriminator bounds of the seq2seq pipeline) join through
:meth:`BenchmarkResult.add_rows` with the same columns.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from helpers.benchmark.methods import (
    ACCURACY_METHODS,
    DEFAULT_METHODS,
    SCORE_METHODS,
    _build,
    _declared,
    _fit,
    _inputs,
    _is_custom,
    _is_score,
    applicable,
)
from helpers.benchmark.task import ShiftTask
from helpers.errors import InputValidationError, UnknownNameError
from helpers.estimators import MetaSetRegression, list_estimators

__all__ = [
    "ACCURACY_METHODS",
    "SCORE_METHODS",
    "DEFAULT_METHODS",
    "COLUMNS",
    "BenchmarkResult",
    "run_benchmark",
    "applicable",
    "external_rows",
]

COLUMNS = [
    "task",
    "family",
    "set",
    "method",
    "kind",
    "estimate",
    "true_accuracy",
    "abs_error",
    "lower",
    "upper",
    "covered",
    "width",
    "seconds",
    "n",
    "score",
]


class _Inapplicable(Exception):
    """A method that turned out not to apply to a task once run (its reason goes to ``result.skipped``)."""


def _unusable(scores: list[float], names: list[str]) -> str:
    """Why meta-set scores cannot carry a line (empty if they can): a non-finite score (e.g. Dispersion's −inf on
    a set predicted as one class) or one value on every meta set (e.g. MaNo on saturated one-hot predictions)."""
    bad = [n for n, v in zip(names, scores) if not np.isfinite(v)]
    if bad:
        return f"score not finite on meta set(s) {bad[:3]}{' ...' if len(bad) > 3 else ''}: no line to read"
    if len(set(scores)) == 1:
        return f"the same score ({scores[0]:.6g}) on every meta set: no line to read"
    return ""


def _run_method(task: ShiftTask, method: str, *, n_boot: int, level: float, seed: int) -> list[dict]:
    t0 = time.perf_counter()
    est = _build(method, n_boot=n_boot, level=level, seed=seed)
    est = _fit(task, method, est)
    regressor = None
    if _is_score(method, est):
        names = sorted(task.meta)
        measure = getattr(est, "measure", est.estimate)  # the raw score (a user's own estimator may lack it)
        scores = [measure(**_declared(measure, method, _inputs(task, method, m, task.meta[m].logits))).score for m in names]
        why = _unusable([float(v) for v in scores], names)
        if why:
            raise _Inapplicable(why)
        accs = [task.meta[m].accuracy for m in names]
        regressor = MetaSetRegression().fit(scores=scores, accuracies=accs)
        if not _is_custom(method) or "regressor" in getattr(est, "get_params", dict)():
            est.regressor = regressor.predict  # a callable score -> accuracy (clipping happens in the estimator)
    setup = time.perf_counter() - t0
    rows = []
    n_targets = len(task.targets)
    for set_name, target in task.targets.items():
        t1 = time.perf_counter()
        e = est.estimate(**_declared(est.estimate, method, {**_inputs(task, method, set_name, target.logits), "interval": True}))
        if regressor is not None and not np.isfinite(e.accuracy):  # a registered score without a regressor slot
            acc = float(np.clip(regressor.predict(np.array([e.score])).ravel()[0], 0.0, 1.0))
            e = dataclasses.replace(e, accuracy=acc, lower=None, upper=None)
        secs = time.perf_counter() - t1 + setup / n_targets
        rows.append(
            _row(
                task.name,
                task.family_of(set_name),
                set_name,
                method,
                "regressed score" if regressor is not None else "accuracy",
                e.accuracy,
                target.accuracy,
                e.lower,
                e.upper,
                secs,
                target.n,
                e.score,
            )
        )
    return rows


def _row(task, family, set_name, method, kind, estimate, true_acc, lower, upper, seconds, n, score=None) -> dict:
    estimate = float(estimate)
    lower = math.nan if lower is None else float(lower)
    upper = math.nan if upper is None else float(upper)
    has_interval = np.isfinite(lower) and np.isfinite(upper)
    return {
        "task": task,
        "family": family,
        "set": set_name,
        "method": method,
        "kind": kind,
        "estimate": estimate,
        "true_accuracy": float(true_acc),
        "abs_error": abs(estimate - float(true_acc)),
        "lower": lower,
        "upper": upper,
        "covered": bool(lower <= true_acc <= upper) if has_interval else None,
        "width": upper - lower if has_interval else math.nan,
        "seconds": float(seconds),
        "n": int(n),
        "score": math.nan if score is None else float(score),
    }


def external_rows(
    *,
    task: str,
    family: str,
    method: str,
    kind: str,
    estimates: dict[str, dict[str, float]],
    seconds: float = math.nan,
) -> pd.DataFrame:
    """Rows in the benchmark's columns for estimates computed elsewhere (RI/RM ensembles, bounds).

    Parameters
    ----------
    estimates : dict set -> {"estimate", "true_accuracy", optional "lower", "upper", "n"}
    seconds : float
        The method's total cost on the task, split equally over its sets.
    """
    if not estimates:
        raise InputValidationError(f"{task}/{method}: expected at least one set's estimate, got none")
    rows = []
    for set_name, d in estimates.items():
        missing = {"estimate", "true_accuracy"} - set(d)
        if missing:
            raise InputValidationError(f"{task}/{method}/{set_name}: missing {sorted(missing)}")
        rows.append(
            _row(
                task,
                family,
                set_name,
                method,
                kind,
                d["estimate"],
                d["true_accuracy"],
                d.get("lower"),
                d.get("upper"),
                seconds / len(estimates),
                d.get("n", 0),
            )
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _rank_table(mae: pd.DataFrame) -> pd.DataFrame:
    """Rank methods (rows) within each family (column) by MAE, 1 = best, ties averaged; NaN where not run."""
    return mae.rank(axis=0, method="average", ascending=True)


@dataclass
class BenchmarkResult:
    """Tidy benchmark rows (one per task, family, target set, method) and the summary tables built on them.

    Attributes
    ----------
    rows : pandas.DataFrame
        Columns :data:`COLUMNS`.
    skipped : pandas.DataFrame
        (task, family, method, reason) of every method that did not apply to a task.
    """

    rows: pd.DataFrame
    skipped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["task", "family", "method", "reason"]))

    def to_df(self) -> pd.DataFrame:
        """A copy of the tidy rows."""
        return self.rows.copy()

    def add_rows(self, rows: pd.DataFrame | Iterable[pd.DataFrame]) -> BenchmarkResult:
        """A new result with extra rows (same columns, e.g. from :func:`external_rows`) appended."""
        frames = [rows] if isinstance(rows, pd.DataFrame) else list(rows)
        for f in frames:
            missing = set(COLUMNS) - set(f.columns)
            if missing:
                raise InputValidationError(f"add_rows: expected the columns {COLUMNS}, missing {sorted(missing)}")
        parts = [f[COLUMNS] for f in [self.rows, *frames] if len(f)]
        new = pd.concat(parts, ignore_index=True) if parts else self.rows
        return BenchmarkResult(new, self.skipped.copy())

    # ---------------------------------------------------------------------------------------- summary tables
    def _pivot(self, value: str, agg: str = "mean") -> pd.DataFrame:
        df = self.rows
        t = df.pivot_table(index="method", columns="family", values=value, aggfunc=agg)
        t.columns.name = None
        return t

    def plot(self, kind: str = "estimates", *, ax=None, **kwargs: Any):
        """The standard views (matplotlib/seaborn), returning the axes.

        ``kind``: ``"estimates"`` (estimate ± interval against true accuracy, one point per set and method,
        :func:`helpers.benchmark.report.estimates_plot`), ``"mae"`` (heat map method × family), ``"coverage"``
        (interval coverage vs width), ``"seconds"`` (run time per method).
        """
        from helpers.benchmark import report

        views = {"estimates": report.estimates_plot, "mae": report.mae_heatmap,
                 "coverage": report.coverage_width_plot, "seconds": report.seconds_plot}  # fmt: skip
        if kind not in views:
            raise UnknownNameError("benchmark plot", kind, list(views))
        return views[kind](self, ax=ax, **kwargs)

    def mae(self, *, overall: bool = True) -> pd.DataFrame:
        """Mean absolute error (fraction) per method (rows) and family (columns); ``overall`` = over all rows."""
        t = self._pivot("abs_error")
        if overall:
            t["overall"] = self.rows.groupby("method")["abs_error"].mean()
        return t

    def coverage(self) -> pd.DataFrame:
        """Fraction of target sets whose true accuracy lies in the method's interval, per method and family."""
        df = self.rows[self.rows["covered"].notna()].copy()
        df["covered"] = df["covered"].astype(float)
        t = df.pivot_table(index="method", columns="family", values="covered", aggfunc="mean")
        t.columns.name = None
        t["overall"] = df.groupby("method")["covered"].mean()
        return t

    def width(self) -> pd.DataFrame:
        """Mean interval width (fraction) per method and family."""
        t = self._pivot("width")
        t["overall"] = self.rows.groupby("method")["width"].mean()
        return t

    def seconds(self) -> pd.DataFrame:
        """Total seconds per method and family (sum over tasks and sets)."""
        t = self._pivot("seconds", "sum")
        t["overall"] = self.rows.groupby("method")["seconds"].sum()
        return t

    def ranks(self) -> pd.DataFrame:
        """Rank of each method by MAE within each family (1 = best; ties averaged; NaN where not run), plus
        ``mean_rank`` (mean over the families where the method ran), ``n_families`` and ``overall_rank``
        (rank of the mean rank)."""
        mae = self.mae(overall=False)
        r = _rank_table(mae)
        r["mean_rank"] = r.mean(axis=1, skipna=True)
        r["n_families"] = mae.notna().sum(axis=1)
        r["overall_rank"] = r["mean_rank"].rank(method="min")
        return r.sort_values(["mean_rank", "n_families"], ascending=[True, False])

    def set_ranks(self) -> pd.DataFrame:
        """Head-to-head ranks: on every target set, rank the methods that ran on it by absolute error (ties
        averaged) and normalise to [0, 1] as ``(rank - 1) / (m - 1)`` (0 = best of the m methods on that set;
        sets with one method are left out); mean per method (rows) and family (columns), plus ``overall``.

        Unlike :meth:`ranks` (which ranks family-level MAEs, each over the rows a method ran on) this compares
        methods only on the sets they share, and the normalisation keeps sets with few applicable methods from
        looking easier."""
        df = self.rows[["task", "family", "set", "method", "abs_error"]].copy()
        grp = df.groupby(["task", "set"])["abs_error"]
        m = grp.transform("size")
        df["nrank"] = (grp.rank(method="average") - 1.0) / (m - 1.0)
        df = df[m > 1]
        t = df.pivot_table(index="method", columns="family", values="nrank", aggfunc="mean")
        t.columns.name = None
        t["overall"] = df.groupby("method")["nrank"].mean()
        return t.sort_values("overall")

    def summary(self) -> pd.DataFrame:
        """One row per method: overall MAE, coverage, mean width, total seconds, family-MAE mean rank and overall
        rank (:meth:`ranks`), and the mean normalised per-set rank (:meth:`set_ranks`, the sort key)."""
        ranks = self.ranks()
        out = pd.DataFrame(
            {
                "mae": self.mae()["overall"],
                "coverage": self.coverage()["overall"],
                "mean_width": self.width()["overall"],
                "seconds": self.seconds()["overall"],
                "n_rows": self.rows.groupby("method").size(),
            }
        )
        out = out.join(ranks[["mean_rank", "n_families", "overall_rank"]])
        out["mean_set_rank"] = self.set_ranks()["overall"]
        return out.sort_values(["mean_set_rank", "mae"])


def _check_args(tasks, methods, n_boot, level) -> tuple[list[ShiftTask], list[str]]:
    if isinstance(tasks, ShiftTask):
        tasks = [tasks]
    tasks = list(tasks)
    if not tasks:
        raise InputValidationError("tasks: expected at least one ShiftTask, got none")
    for t in tasks:
        if not isinstance(t, ShiftTask):
            raise InputValidationError(f"tasks: expected ShiftTask objects, got {type(t).__name__}")
    names = [t.name for t in tasks]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputValidationError(f"tasks: task names must be unique, got duplicates {dup}")
    methods = list(DEFAULT_METHODS if methods is None else methods)
    if not methods:
        raise InputValidationError("methods: expected at least one method name, got none")
    unknown = [m for m in methods if m not in DEFAULT_METHODS and not _is_custom(m)]
    if unknown:
        raise UnknownNameError("benchmark method", unknown[0], DEFAULT_METHODS + tuple(list_estimators()))
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 2:
        raise InputValidationError(f"n_boot: expected an integer >= 2, got {n_boot!r}")
    if not 0.0 < float(level) < 1.0:
        raise InputValidationError(f"level: expected a confidence level in (0, 1), got {level!r}")
    return tasks, methods


def run_benchmark(
    tasks: Sequence[ShiftTask],
    *,
    methods: Sequence[str] | None = None,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
    progress: bool = True,
) -> BenchmarkResult:
    """Run every applicable method on every task (see the module docstring for methods, intervals and time).

    Parameters
    ----------
    tasks : sequence of ShiftTask
        Unique names.
    methods : sequence of str, optional
        Names of :data:`DEFAULT_METHODS` (default: all of them) and/or estimators added with
        :func:`helpers.estimators.register_estimator` (fitted with ``fit(logits=, labels=, features=)`` on the
        reference, estimated with ``estimate(logits=, features=, interval=True)``; one with ``output = "score"``
        is regressed on the meta-set; one whose ``fit`` takes ``shifted=``, such as ``"stacked"``, gets the meta-set
        as its labelled shifted sets); inapplicable ones are listed in ``result.skipped``.
    n_boot, level : int, float
        Bootstrap resamples and interval level.
    seed : int
        Seed of every bootstrap (results are identical for one seed, except ``seconds``).
    progress : bool
        tqdm bar over (task, method).

    Returns
    -------
    BenchmarkResult
    """
    tasks, methods = _check_args(tasks, methods, n_boot, level)
    jobs = [(t, m) for t in tasks for m in methods]
    bar = None
    if progress:
        from helpers.progress import tqdm

        bar = tqdm(total=len(jobs), desc="benchmark")
    rows, skipped = [], []
    for task, method in jobs:
        ok, reason = applicable(task, method)
        if ok:
            try:
                rows.extend(_run_method(task, method, n_boot=int(n_boot), level=float(level), seed=int(seed)))
            except _Inapplicable as why:
                ok, reason = False, str(why)
        if not ok:
            skipped.append({"task": task.name, "family": task.family, "method": method, "reason": reason})
        if bar is not None:
            bar.set_postfix_str(f"{task.name}:{method}", refresh=False)
            bar.update(1)
    if bar is not None:
        bar.close()
    return BenchmarkResult(
        pd.DataFrame(rows, columns=COLUMNS),
        pd.DataFrame(skipped, columns=["task", "family", "method", "reason"]),
    )
