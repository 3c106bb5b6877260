"""Figures and text of the head-to-head benchmark (notebook 06) from a :class:`BenchmarkResult`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.benchmark.engine import BenchmarkResult

__all__ = [
    "estimates_plot", "mae_heatmap", "coverage_width_plot", "seconds_plot", "best_per_family", "newer_vs_established",
]


def estimates_plot(result: BenchmarkResult, *, methods=None, ax=None):
    """Estimated vs true accuracy (%), one marker per target set and method, with the interval as a vertical bar
    where the method gave one; the diagonal is a perfect estimate."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    df = result.rows if methods is None else result.rows[result.rows.method.isin(list(methods))]
    df = df.dropna(subset=["estimate"])
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 5.5))
    palette = dict(zip(sorted(df.method.unique()), sns.color_palette("tab20", df.method.nunique())))
    for method, part in df.groupby("method"):
        x, y = 100 * part.true_accuracy.to_numpy(), 100 * part.estimate.to_numpy()
        lo, hi = 100 * part.lower.to_numpy(), 100 * part.upper.to_numpy()
        has = np.isfinite(lo) & np.isfinite(hi)
        if has.any():
            ax.errorbar(x[has], y[has], yerr=[y[has] - lo[has], hi[has] - y[has]], fmt="none",
                        ecolor=palette[method], alpha=0.4, lw=1)  # fmt: skip
        ax.scatter(x, y, s=18, color=palette[method], label=method)
    ax.plot([0, 100], [0, 100], ls="--", c="grey", lw=1)
    ax.set(xlim=(0, 100), ylim=(0, 100), xlabel="true accuracy (%)", ylabel="estimated accuracy (%)",
           title="Estimates (± interval) vs true accuracy")  # fmt: skip
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax


def mae_heatmap(result: BenchmarkResult, *, ax=None, title: str = "MAE (percent points)"):
    """Heat map of MAE (pp) per method (rows, best overall first) and family (columns); blank = not applicable."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    mae = 100.0 * result.mae()
    mae = mae.loc[mae["overall"].sort_values().index]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.3 * mae.shape[1] + 3, 0.38 * mae.shape[0] + 1.2))
    sns.heatmap(mae, annot=True, fmt=".1f", cmap="viridis_r", cbar_kws={"label": "MAE (pp)"}, ax=ax)
    ax.set(title=title, xlabel="", ylabel="")
    return ax


def coverage_width_plot(result: BenchmarkResult, *, level: float = 0.95, ax=None):
    """Coverage (fraction of sets whose true accuracy is inside the interval) vs mean width, one point per method.

    Each method has its own colour and marker, named in a legend beside the axes (labels next to the points
    overlap as soon as a few methods have similar intervals, as with a user's own tasks)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    cov, wid = result.coverage()["overall"], result.width()["overall"]
    both = pd.DataFrame({"coverage": cov, "width": 100.0 * wid}).dropna().sort_values("width")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4.5))
    colours = sns.color_palette("tab20", max(len(both), 1))
    markers = "osD^vP*Xh<>p"
    for i, (name, row) in enumerate(both.iterrows()):
        ax.scatter(row["width"], row["coverage"], s=45, color=colours[i], marker=markers[i % len(markers)],
                   label=f"{name} ({row['coverage']:.2f}, {row['width']:.1f} pp)", edgecolor="black", lw=0.4)  # fmt: skip
    ax.axhline(level, ls="--", c="grey", lw=1)
    ax.annotate(f"nominal {level:.0%}", (0.01, level), xycoords=("axes fraction", "data"), xytext=(0, 3),
                textcoords="offset points", fontsize=8, color="grey")  # fmt: skip
    ax.set(xlabel="mean interval width (pp)", ylabel="coverage of the true accuracy", ylim=(-0.03, 1.03),
           title="Intervals: coverage vs width")  # fmt: skip
    ax.legend(title="method (coverage, width)", fontsize=7, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)  # fmt: skip
    return ax


def seconds_plot(result: BenchmarkResult, *, ax=None):
    """Total estimator seconds per method (log scale; model inference and training excluded unless noted)."""
    import matplotlib.pyplot as plt

    sec = result.seconds()["overall"].sort_values()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 0.3 * len(sec) + 1))
    ax.barh(sec.index, np.maximum(sec.to_numpy(), 1e-4))
    ax.set(xscale="log", xlabel="seconds (all tasks, incl. bootstrap)", title="Run time")
    return ax


def best_per_family(result: BenchmarkResult) -> pd.DataFrame:
    """Per family: the method with the lowest MAE, its MAE and the runner-up (for the written conclusion)."""
    mae = result.mae(overall=False)
    n_sets = result.rows.groupby(["family", "method"]).size()
    rows = []
    for fam in mae.columns:
        s = mae[fam].dropna().sort_values()
        rows.append({"family": fam, "best": s.index[0], "best_mae": s.iloc[0],
                     "second": s.index[1] if len(s) > 1 else None,
                     "second_mae": s.iloc[1] if len(s) > 1 else np.nan, "n_methods": len(s),
                     "best_n_sets": int(n_sets.get((fam, s.index[0]), 0))})  # fmt: skip
    return pd.DataFrame(rows)


def newer_vs_established(result: BenchmarkResult, newer, *, exclude=()) -> pd.DataFrame:
    """Each newer method against the best established one, per family, on the same target sets.

    For family f and newer method m, the sets are those of f where m gave an estimate; the established methods are
    every other method of the run except ``newer`` and ``exclude`` (e.g. stacked estimators) that gave an estimate
    on all of them, and the best is the one with the lowest MAE there (chosen on the same sets, which favours it).

    Returns
    -------
    DataFrame
        One row per (family, method): ``n_sets``, ``mae_pp`` (MAE of m, percent points), ``best_established``,
        ``best_established_mae_pp``, ``gap_pp`` (m's MAE minus the best established one's; negative = m is better)
        and ``newer_wins``; families in the run's order, an ``overall`` row per method over all its sets.
    """
    newer = [m for m in newer if m in set(result.rows["method"])]
    rows = result.rows.dropna(subset=["abs_error"])
    err = rows.pivot_table(index=["family", "task", "set"], columns="method", values="abs_error")
    established = [m for m in err.columns if m not in newer and m not in set(exclude)]
    out = []
    for m in newer:
        groups = [(fam, part) for fam, part in err.groupby(level="family", sort=False)] + [("overall", err)]
        for fam, part in groups:
            part = part[part[m].notna()]
            base = part[established].dropna(axis=1, how="any") if len(part) else part
            if part.empty or base.empty:
                continue
            means = base.mean()
            best = means.idxmin()
            mae, best_mae = 100 * part[m].mean(), 100 * means[best]
            out.append({"family": fam, "method": m, "n_sets": len(part), "mae_pp": mae, "best_established": best,
                        "best_established_mae_pp": best_mae, "gap_pp": mae - best_mae,
                        "newer_wins": bool(mae < best_mae)})  # fmt: skip
    return pd.DataFrame(out)
