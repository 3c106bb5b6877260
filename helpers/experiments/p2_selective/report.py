"""Tables and figures of paper 2's selective-answering study, built on :mod:`helpers.selective`.

Input everywhere: a tidy per-example frame with columns ``model``, ``split`` (e.g. ``"id"`` / ``"ood"``),
``confidence`` (MaxProb, higher = more confident) and ``correct`` (bool), as made by
:func:`helpers.experiments.p2_selective.suite.predictions_frame`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.metrics import kendall_tau
from helpers.selective import (
    TOLERANCES,
    accuracy_coverage_curve,
    auc,
    auc_failure_cases,
    aurc,
    didma,
    disca,
    e_aurc,
    first_drop_threshold,
    fluctuations,
    nidma,
    plateau,
    selective_risk,
)

__all__ = [
    "plot_selective_stats",
    "split_data",
    "selective_summary",
    "b_table",
    "scores_table",
    "ranking_table",
    "kendall_matrix",
    "failure_cases",
    "plot_curves",
    "plot_pairs",
]

_REQUIRED = ("model", "split", "confidence", "correct")


def _check_frame(frame: pd.DataFrame) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise InputValidationError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise InputValidationError(f"frame: missing column(s) {missing}; expected {list(_REQUIRED)}")
    if frame.empty:
        raise InputValidationError("frame: expected at least one row")


def split_data(frame: pd.DataFrame, split: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{model: (confidence, correct)}`` for one split, models in order of first appearance."""
    _check_frame(frame)
    sub = frame[frame.split == split]
    if sub.empty:
        raise InputValidationError(f"split: {split!r} not in the frame; have {sorted(frame.split.unique())}")
    return {
        m: (g.confidence.to_numpy(float), g.correct.to_numpy(bool))
        for m, g in sub.groupby("model", sort=False)
    }


def selective_summary(
    frame: pd.DataFrame,
    *,
    tolerance: float = 0.95,
    coverage: float = 0.5,
    decimals: int | None = 2,
    weights: Sequence[float] = (1 / 3, 1 / 3, 1 / 3),
) -> pd.DataFrame:
    """One row per (split, model): accuracy, AUC, AURC, E-AURC, risk at ``coverage``, a, b, fluctuations, plateau
    statistics and DiSCA at ``tolerance`` with its three terms."""
    _check_frame(frame)
    x, y, z = weights
    rows = []
    for split in frame.split.unique():
        for model, (conf, corr) in split_data(frame, split).items():
            cur = accuracy_coverage_curve(conf, corr)
            fl = fluctuations(curve=cur, decimals=decimals)
            d = disca(conf, corr, tolerance=tolerance, x=x, y=y, z=z, decimals=decimals)
            rows.append(
                dict(
                    split=split, model=model, n=cur.n, accuracy=float(corr.mean()), auc=auc(curve=cur),
                    aurc=aurc(curve=cur), e_aurc=e_aurc(curve=cur),
                    risk_at_coverage=selective_risk(curve=cur, coverage=coverage), a=d.a, b=d.b,
                    n_fluctuations=fl.count, fluctuation_magnitude=fl.magnitude, fluctuation_penalty=fl.penalty,
                    disca=d.score, disca_first=d.first, disca_second=d.second, disca_third=d.third,
                    **plateau(conf, corr),
                )
            )  # fmt: skip
    return pd.DataFrame(rows)


def b_table(frame: pd.DataFrame, split: str, *, tolerances: Sequence[float] = TOLERANCES) -> pd.DataFrame:
    """Figure 1 analogue: ``b`` for each tolerance (columns) and the lowest MaxProb at 100 % coverage."""
    rows = {}
    for model, (conf, corr) in split_data(frame, split).items():
        cur = accuracy_coverage_curve(conf, corr)
        rows[model] = {f"{t:.2f}": first_drop_threshold(cur, t) for t in (1.0, *tolerances)}
        rows[model]["lowest"] = float(cur.threshold[-1])
    return pd.DataFrame.from_dict(rows, orient="index")


def scores_table(
    summary: pd.DataFrame,
    n_params: Mapping[str, float],
    seconds_per_example: Mapping[str, float],
    *,
    optimal_params: float = 1_000_000,
    reference_seconds: float | None = None,
    p: float = 0.5,
    q: float = 0.5,
    u: float = 0.5,
    v: float = 0.5,
    id_split: str = "id",
    ood_split: str = "ood",
) -> pd.DataFrame:
    """Per model: accuracy, AUC, AURC (ID), DiSCA (ID, OOD), computation scores, DiDMA and NiDMA (paper 2 Eq. 2–3).

    Two computation scores: ``compute_params = optimal_params / n_params`` (Appendix B) and ``compute_time =
    reference_seconds / seconds_per_example`` (measured inference cost; ``reference_seconds`` defaults to the
    median over the models).  ``didma`` / ``nidma`` use the parameter score; ``didma_time`` / ``nidma_time`` the
    measured one.
    """
    if not {"split", "model", "disca"} <= set(summary.columns):
        raise InputValidationError("summary: expected the frame returned by selective_summary")
    from helpers.selective import computation_score_cost, computation_score_params

    idf = summary[summary.split == id_split].set_index("model")
    ood = summary[summary.split == ood_split].set_index("model")
    models = list(idf.index)
    missing = [m for m in models if m not in n_params or m not in seconds_per_example or m not in ood.index]
    if missing:
        raise InputValidationError(f"n_params / seconds_per_example / OOD rows missing for {missing}")
    secs = np.array([float(seconds_per_example[m]) for m in models])
    ref = float(np.median(secs)) if reference_seconds is None else float(reference_seconds)
    out = pd.DataFrame(
        dict(
            accuracy=idf.accuracy, auc=idf.auc, aurc=idf.aurc, disca=idf.disca,
            accuracy_ood=ood.loc[models, "accuracy"], auc_ood=ood.loc[models, "auc"],
            disca_ood=ood.loc[models, "disca"], n_params=[float(n_params[m]) for m in models],
            seconds_per_example=secs,
        ),
        index=pd.Index(models, name="model"),
    )  # fmt: skip
    out["compute_params"] = computation_score_params(out.n_params.to_numpy(), optimal_params=optimal_params)
    out["compute_time"] = computation_score_cost(secs, reference_cost=ref)
    for tag, col in (("", "compute_params"), ("_time", "compute_time")):
        out[f"didma{tag}"] = didma(out.disca.to_numpy(), out[col].to_numpy(), p=p, q=q)
        out[f"nidma{tag}"] = nidma(out[f"didma{tag}"].to_numpy(), out.disca_ood.to_numpy(), u=u, v=v)
    return out


_LOWER_IS_BETTER = {"aurc", "e_aurc", "risk_at_coverage", "n_params", "seconds_per_example"}


def ranking_table(scores: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Rank of each model (1 = best) by each column; AURC-like columns rank ascending, the others descending."""
    missing = [c for c in columns if c not in scores.columns]
    if missing:
        raise InputValidationError(f"columns: {missing} not in the scores table")
    return pd.DataFrame(
        {c: scores[c].rank(ascending=c in _LOWER_IS_BETTER, method="min").astype(int) for c in columns}
    )


def kendall_matrix(ranks: pd.DataFrame) -> pd.DataFrame:
    """Kendall τ-b between every two ranking columns (:func:`helpers.metrics.kendall_tau`); NaN if one is constant."""
    cols = list(ranks.columns)
    mat = pd.DataFrame(np.eye(len(cols)), index=cols, columns=cols)
    for i, a in enumerate(cols):
        for b in cols[i + 1 :]:
            try:
                t = kendall_tau(ranks[a].to_numpy(float), ranks[b].to_numpy(float))
            except InputValidationError:
                t = float("nan")
            mat.loc[a, b] = mat.loc[b, a] = t
    return mat


def failure_cases(
    frame: pd.DataFrame, *, max_coverage: float = 0.3, decimals: int | None = 2
) -> pd.DataFrame:
    """:func:`helpers.selective.auc_failure_cases` for every split, with a ``split`` column."""
    parts = []
    for split in frame.split.unique():
        cases = auc_failure_cases(split_data(frame, split), max_coverage=max_coverage, decimals=decimals)
        parts.append(cases.assign(split=split))
    return pd.concat(parts, ignore_index=True)


def plot_selective_stats(summary: pd.DataFrame, models: Sequence[str]):
    """Figures 2 and 3 of paper 2 for the suite: per model and split, ``a`` (MaxProb at the first error), the number
    of fluctuations and their magnitude (Eq. 1's bracket), as horizontal bars so that the model names read level."""
    import matplotlib.pyplot as plt

    wide = summary.pivot(index="model", columns="split").loc[list(models)[::-1]]  # first model on top
    fig, axes = plt.subplots(1, 3, figsize=(16, 0.42 * len(models) + 1.6), sharey=True)
    panels = [
        ("a", "Figure 2 analogue: a (MaxProb at first error)", "a (MaxProb)", False),
        ("n_fluctuations", "Figure 3 analogue: number of fluctuations", "fluctuations", False),
        ("fluctuation_penalty", "Figure 3 analogue: magnitude (Eq. 1 bracket)", "penalty (log scale)", True),
    ]
    for ax, (column, title, label, log) in zip(axes, panels):
        wide[column].plot.barh(ax=ax, title=title, logx=log, legend=False, width=0.8)
        ax.set_xlabel(label)
        ax.set_ylabel("")
        ax.tick_params(axis="y", labelsize=9)
    axes[0].set_xlim(0.5, 1.0)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles[::-1], labels[::-1], title="split", loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def plot_curves(frame: pd.DataFrame, *, splits: Sequence[str] = ("id", "ood"), titles: Mapping | None = None):
    """Accuracy–coverage curves of every model, one panel per split; returns the figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(splits), figsize=(6 * len(splits), 4.5), squeeze=False)
    for ax, split in zip(axes[0], splits):
        for model, (conf, corr) in split_data(frame, split).items():
            cur = accuracy_coverage_curve(conf, corr)
            ax.step(np.r_[0, cur.coverage], np.r_[cur.accuracy[0], cur.accuracy], where="pre", lw=1.2,
                    label=f"{model} (AUC {auc(curve=cur):.3f})")  # fmt: skip
        ax.set(xlabel="coverage", ylabel="accuracy of answered", title=(titles or {}).get(split, split))
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_pairs(
    frame: pd.DataFrame,
    cases: pd.DataFrame,
    *,
    max_coverage: float | None = None,
    ncols: int = 4,
    max_panels: int | None = None,
):
    """One panel per failure case (model A with the higher AUC in red, model B in blue); returns the figure.

    With ``max_panels``, only that many cases are drawn: those with the largest relative gap
    ``|value_b - value_a| / |value_a|`` (how much better B is by the failure mode), when the columns exist.
    """
    import matplotlib.pyplot as plt

    if cases.empty:
        raise InputValidationError("cases: no failure case to plot")
    if max_panels is not None and len(cases) > max_panels:
        if {"value_a", "value_b"} <= set(cases.columns):
            gap = (cases.value_b - cases.value_a).abs() / cases.value_a.abs().clip(lower=1e-12)
            cases = cases.loc[gap.sort_values(ascending=False, kind="stable").index[:max_panels]]
        else:
            cases = cases.iloc[:max_panels]
    n = len(cases)
    ncols = min(ncols, n)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.7 * nrows), squeeze=False)
    cache: dict = {}
    for i, (ax, row) in enumerate(zip(axes.flat, cases.itertuples())):
        data = cache.setdefault(row.split, split_data(frame, row.split))
        for model, colour in ((row.model_a, "tab:red"), (row.model_b, "tab:blue")):
            cur = accuracy_coverage_curve(*data[model])
            ax.step(np.r_[0, cur.coverage], np.r_[cur.accuracy[0], cur.accuracy], where="pre", color=colour,
                    lw=1.1, label=f"{model} {auc(curve=cur):.3f}")  # fmt: skip
        if max_coverage is not None and row.kind == "tail":
            ax.axvline(max_coverage, color="grey", ls=":", lw=1)
        ax.set_title(f"{row.split} · {row.kind}", fontsize=8)
        ax.legend(fontsize=6, loc="lower left")
        ax.tick_params(labelsize=6)
        if i % ncols == 0:
            ax.set_ylabel("accuracy", fontsize=7)
        if i >= n - ncols:
            ax.set_xlabel("coverage", fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    return fig
