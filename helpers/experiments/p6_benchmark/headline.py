"""Notebook 06's headline metrics: what its closing cells record from the grid's tables, as one tested function.

Each metric is a dict of :func:`helpers.run.results.record`'s arguments (``name``, ``value``, ``unit`` and labels),
so the notebook records them with ``for m in headline_metrics(...): record(**m)`` and the smoke pins
(``tests/expected/smoke_metrics.csv``) check the same numbers this module's tests compute by hand.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["SELF_TRAINING_COMPARED", "headline_metrics", "self_training_pairs_mae"]

#: the methods compared on the self-training pairs (paper 3, Table 1: RM's MAE far below Avg Conf's)
SELF_TRAINING_COMPARED = ("self_training_rm", "self_training_ri", "average_confidence")


def self_training_pairs_mae(rows: pd.DataFrame) -> pd.Series:
    """Mean absolute error (fraction) of every method on the sets where a self-training method ran (``rows``: the
    benchmark's rows with ``task``, ``set``, ``method``, ``abs_error``); empty when none ran.

    >>> rows = pd.DataFrame({"task": ["t"] * 4, "set": ["a", "a", "b", "b"],
    ...                      "method": ["self_training_rm", "doc", "doc", "maxprob"],
    ...                      "abs_error": [0.02, 0.10, 0.30, 0.40]})
    >>> self_training_pairs_mae(rows).round(3).to_dict()
    {'doc': 0.1, 'self_training_rm': 0.02}
    """
    st = rows[rows["method"].str.startswith("self_training")]
    if st.empty:
        return pd.Series(dtype=float)
    same = rows[rows.set_index(["task", "set"]).index.isin(st.set_index(["task", "set"]).index)]
    return same.groupby("method")["abs_error"].mean()


def headline_metrics(summary: pd.DataFrame, set_ranks: pd.DataFrame, best: pd.DataFrame, rows: pd.DataFrame,
                     *, level: float) -> list[dict[str, Any]]:  # fmt: skip
    """The grid's headline metrics, in the order the notebook records them.

    Parameters
    ----------
    summary : DataFrame
        Per method (index): ``mae`` (fraction), ``mean_set_rank`` (0 = best on every shared set, 1 = worst) and
        ``coverage`` (fraction of sets whose bootstrap interval covers the true accuracy, NaN without intervals).
    set_ranks : DataFrame
        Per method (index, best first): the head-to-head mean normalised set rank.
    best : DataFrame
        Per family: ``family``, ``best`` (the method with the lowest MAE) and ``best_mae`` (fraction).
    rows : DataFrame
        The benchmark's rows (for the self-training pairs, :func:`self_training_pairs_mae`).
    level : float
        The bootstrap intervals' nominal level (a label of the coverage).

    Returns
    -------
    list of dict
        ``mae_pp`` (pp), ``mean_set_rank`` and ``interval_coverage`` per method; ``best_mae_pp`` per family;
        ``mde_set_rank_position`` (1 = first; paper 5, Tables 3-4) when ``mde_normalized`` ran; and
        ``self_training_pairs_mae`` (fraction) for :data:`SELF_TRAINING_COMPARED` on the self-training pairs.

    >>> summary = pd.DataFrame({"mae": [0.05, 0.10], "mean_set_rank": [0.0, 1.0], "coverage": [0.9, float("nan")]},
    ...                        index=["mde_normalized", "doc"])
    >>> best = pd.DataFrame({"family": ["cifar"], "best": ["mde_normalized"], "best_mae": [0.05]})
    >>> rows = pd.DataFrame({"task": ["t"], "set": ["a"], "method": ["doc"], "abs_error": [0.1]})
    >>> [(m["name"], round(float(m["value"]), 3)) for m in headline_metrics(summary, summary, best, rows, level=0.95)]
    [('mae_pp', 5.0), ('mean_set_rank', 0.0), ('interval_coverage', 0.9), ('mae_pp', 10.0), ('mean_set_rank', 1.0), ('best_mae_pp', 5.0), ('mde_set_rank_position', 1.0)]
    """
    out: list[dict[str, Any]] = []
    for m, row in summary.iterrows():
        out.append({"name": "mae_pp", "value": 100 * row["mae"], "method": m, "family": "all logits tasks", "unit": "pp"})
        out.append({"name": "mean_set_rank", "value": row["mean_set_rank"], "method": m, "unit": "0 = best, 1 = worst"})
        if pd.notna(row["coverage"]):
            out.append({"name": "interval_coverage", "value": row["coverage"], "method": m, "unit": "fraction",
                        "nominal": level})  # fmt: skip
    for _, b in best.iterrows():
        out.append({"name": "best_mae_pp", "value": 100 * b["best_mae"], "family": b["family"], "method": b["best"],
                    "unit": "pp"})  # fmt: skip
    if "mde_normalized" in summary.index:
        out.append({"name": "mde_set_rank_position", "value": int(list(set_ranks.index).index("mde_normalized") + 1),
                    "unit": "position among methods", "source": "paper 5, Tables 3-4"})  # fmt: skip
    st_mae = self_training_pairs_mae(rows)
    for m in SELF_TRAINING_COMPARED:
        if m in st_mae:
            out.append({"name": "self_training_pairs_mae", "value": float(st_mae[m]), "method": m, "unit": "fraction"})
    return out
