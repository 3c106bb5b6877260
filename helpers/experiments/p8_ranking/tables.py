"""Notebook 08's tables: every method ranks every zoo's models on every target set, per set and per shift family.

Per set (:func:`ranking_table`): Kendall's τ-b, Spearman's ρ and the top-1 regret (points of accuracy) of each
method's ranking against the models' true accuracies, each with its bootstrap interval over the set's examples
(:func:`helpers.estimators.rank_models`), and, where the method estimates accuracies, their MAE over the models
(points).  ``id_accuracy`` is the baseline "accuracy on the line": the models ranked by their labelled reference
accuracy.  Per family (:func:`family_table`): the means over the family's sets, with a percentile bootstrap interval
over the sets where the family has several (else the one set's interval over examples).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.experiments.p8_ranking.zoos import Collection

__all__ = ["ID_ACCURACY", "ranking_table", "family_table", "best_by_family", "advice"]

#: the baseline that ranks by the models' labelled reference (in-distribution) accuracy
ID_ACCURACY = "id_accuracy"
_METRICS = ("kendall_tau", "spearman_rho", "top1_regret")


def _id_accuracy(c: Collection, n_boot: int, seed: int) -> tuple[dict, np.ndarray, str]:
    from helpers.estimators import agreement_with_interval

    value = np.array(
        [np.mean(c.reference[m]["logits"].argmax(1) == c.reference[m]["labels"]) for m in c.models]
    )
    correct = np.stack([c.outputs[m]["logits"].argmax(1) == c.labels for m in c.models]).astype(float)
    agree = agreement_with_interval(value, correct, lambda idx: value, n_boot=n_boot, random_state=seed)
    return agree, value, "reference accuracy"


def _one(c: Collection, method: str, n_boot: int, seed: int) -> dict:
    from helpers.estimators import get_estimator, rank_models

    row = {"zoo": c.zoo, "family": c.family, "target": c.target, "method": method, "models": len(c.models)}
    t0 = time.perf_counter()
    if method == ID_ACCURACY:
        agree, _, ranked_by = _id_accuracy(c, n_boot, seed)
        mae = np.nan
    else:
        wants = getattr(get_estimator(method), "target_inputs", ())
        if (
            "features" in wants
            and method != "frechet"
            and any("features" not in o for o in c.outputs.values())
        ):
            return {**row, "skipped": "needs penultimate features, which this zoo's models do not give"}
        try:
            r = rank_models(c.outputs, method=method, reference=c.reference, labels=c.labels, n_boot=n_boot,
                            random_state=seed)  # fmt: skip
        except InputValidationError as e:  # e.g. ALine on a zoo of two models: said, not hidden
            return {**row, "skipped": str(e)}
        agree, ranked_by = r.agreement, r.ranked_by
        t = r.table
        mae = (
            100 * float(np.mean(np.abs(t["accuracy"] - t["true_accuracy"])))
            if t["accuracy"].notna().all()
            else np.nan
        )
    out = {**row, "ranked_by": ranked_by, "mae_pp": mae, "seconds": time.perf_counter() - t0}
    for key in _METRICS:
        scale = 100.0 if key == "top1_regret" else 1.0
        for suffix in ("", "_lower", "_upper"):
            out[f"{key}{suffix}"] = scale * agree.get(f"{key}{suffix}", np.nan)
    return out


def ranking_table(collections: Sequence[Collection], methods: Sequence[str], *, n_boot: int = 200, seed: int = 0,
                  progress: bool = True) -> pd.DataFrame:  # fmt: skip
    """One row per (target set, method): τ, ρ, top-1 regret (pp) with their intervals, the MAE (pp) of the
    accuracy estimates where the method gives them, and the seconds it took; ``skipped`` says why a method did not
    run on a zoo."""
    from helpers.progress import tqdm

    jobs = [(c, m) for c in collections for m in methods]
    rows = [_one(c, m, n_boot, seed) for c, m in tqdm(jobs, desc="rankings", disable=not progress)]
    return pd.DataFrame(rows)


def family_table(table: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per (zoo, family, method): the number of sets and the means of τ, ρ, regret (pp) and MAE (pp) over them;
    intervals by a percentile bootstrap over the sets where there are several, else the one set's own."""
    rng = np.random.default_rng(seed)
    done = table[table["skipped"].isna()] if "skipped" in table else table
    rows = []
    for (zoo, family, method), g in done.groupby(["zoo", "family", "method"], sort=False):
        row = {
            "zoo": zoo,
            "family": family,
            "method": method,
            "sets": len(g),
            "models": int(g["models"].iloc[0]),
        }
        for key in _METRICS:
            v = g[key].to_numpy(dtype=float)
            row[key] = float(np.nanmean(v)) if np.isfinite(v).any() else np.nan
            if len(g) > 1 and np.isfinite(v).sum() > 1:
                boot = np.nanmean(v[rng.integers(0, len(v), (n_boot, len(v)))], axis=1)
                row[f"{key}_lower"], row[f"{key}_upper"] = np.nanpercentile(boot, [2.5, 97.5])
            else:
                row[f"{key}_lower"], row[f"{key}_upper"] = (
                    g[f"{key}_lower"].iloc[0],
                    g[f"{key}_upper"].iloc[0],
                )
        row["mae_pp"] = float(g["mae_pp"].mean()) if g["mae_pp"].notna().all() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def best_by_family(families: pd.DataFrame) -> pd.DataFrame:
    """Per (zoo, family): the method with the highest mean τ and the one with the lowest MAE of accuracy, and
    whether they differ (the best method to rank models is not always the best to estimate accuracy)."""
    rows = []
    for (zoo, family), g in families.groupby(["zoo", "family"], sort=False):
        rank = g.dropna(subset=["kendall_tau"]).sort_values(
            ["kendall_tau", "top1_regret"], ascending=[False, True]
        )
        est = g.dropna(subset=["mae_pp"]).sort_values("mae_pp")
        best_rank = rank.iloc[0] if len(rank) else None
        best_est = est.iloc[0] if len(est) else None
        rows.append({"zoo": zoo, "family": family, "sets": int(g["sets"].max()), "models": int(g["models"].max()),
                     "best_ranker": None if best_rank is None else best_rank["method"],
                     "tau": np.nan if best_rank is None else best_rank["kendall_tau"],
                     "best_estimator": None if best_est is None else best_est["method"],
                     "mae_pp": np.nan if best_est is None else best_est["mae_pp"],
                     "differ": best_rank is not None and best_est is not None
                     and best_rank["method"] != best_est["method"]})  # fmt: skip
    return pd.DataFrame(rows)


def advice(families: pd.DataFrame, *, fail_tau: float = 0.0) -> str:
    """ "Which estimator to rank models": the methods with the highest mean τ over every (zoo, family), each with
    the families where its mean τ is at most ``fail_tau`` (it ranks no better than chance there)."""
    mean = families.groupby("method")["kendall_tau"].mean().sort_values(ascending=False).dropna()
    parts = []
    for method in mean.index[:3]:
        g = families[families["method"] == method]
        bad = g[g["kendall_tau"] <= fail_tau]
        where = ", ".join(f"{r.zoo}/{r.family} (τ {r.kendall_tau:.2f})" for r in bad.itertuples()) or "none"
        parts.append(f"`{method}` (mean τ {mean[method]:.2f}; no better than chance on: {where})")
    return (
        "Across the zoos and families, the methods whose rankings agree best with the true accuracies are "
        + "; ".join(parts)
        + "."
    )
