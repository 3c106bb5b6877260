"""The example's two computed tables: each fitted estimator's estimate (with its bootstrap interval) on each
shifted set beside the true accuracy, and the per-method mean absolute error and interval coverage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["estimate_sets", "mae_table"]


def estimate_sets(fitted: Mapping[str, Any], sets: Mapping[tuple[str, int], np.ndarray],
                  labels: np.ndarray) -> pd.DataFrame:  # fmt: skip
    """One row per (set, method): ``shift``, ``severity``, ``method``, ``true`` (the set's accuracy, fraction),
    ``estimate`` with ``lower`` / ``upper`` (the estimator's bootstrap interval), ``abs_error`` = \\|estimate - true\\|
    and ``covered`` (lower <= true <= upper).

    ``fitted``: name -> an estimator fitted on the labelled reference; ``sets``: (shift, severity) -> the target's
    logits (n x classes); ``labels``: the target's labels (used for the true accuracy only).
    """
    rows = []
    for (shift, severity), logits in sets.items():
        true_acc = float((np.asarray(logits).argmax(1) == labels).mean())
        for name, est in fitted.items():
            e = est.estimate(logits=logits, interval=True)
            rows.append(dict(shift=shift, severity=severity, method=name, true=true_acc,
                             estimate=e.accuracy, lower=e.lower, upper=e.upper))  # fmt: skip
    results = pd.DataFrame(rows)
    results["abs_error"] = (results.estimate - results.true).abs()
    results["covered"] = (results.lower <= results.true) & (results.true <= results.upper)
    return results


def mae_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per method, best first: ``mae`` (mean \\|estimate - true\\| over the sets, fraction) and
    ``interval_coverage`` (fraction of sets whose interval holds the true accuracy).

    >>> results = pd.DataFrame({"method": ["a", "a", "b", "b"], "abs_error": [0.1, 0.3, 0.05, 0.05],
    ...                         "covered": [True, False, True, True]})
    >>> mae_table(results).round(3).to_dict("records")
    [{'method': 'b', 'mae': 0.05, 'interval_coverage': 1.0}, {'method': 'a', 'mae': 0.2, 'interval_coverage': 0.5}]
    """
    return (
        results.groupby("method")
        .agg(mae=("abs_error", "mean"), interval_coverage=("covered", "mean"))
        .sort_values("mae")
        .reset_index()
    )
