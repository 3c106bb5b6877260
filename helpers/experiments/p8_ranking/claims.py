"""Notebook 08's claims, registered before the run that first computed their quantities (the commit order shows it).

Each is decided on the per-set table of :func:`~helpers.experiments.p8_ranking.tables.ranking_table`: the paired
difference of two methods on every target set where both ran, its mean over the sets with a percentile bootstrap
over the sets.  The zoos' models are fixed: the interval covers the choice of target sets, not of models, so a
verdict speaks of these zoos.  Two methods' readings of their own papers (``group="method"``) and one hypothesis
of ours (``own=True``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.claims import Claim, Decision, MeanRule, Power, bootstrap_decision

__all__ = ["CLAIMS", "claim_inputs", "paired"]

_DENG = "Deng et al. 2025 (arXiv 2510.02956), model-centric setting"
_NOT_IN_CORPUS = " (the paper's numbers are not in the project's corpus)"


def paired(table: pd.DataFrame, a: str | list[str], b: str, metric: str = "kendall_tau") -> pd.DataFrame:
    """Per target set: ``metric`` of ``a`` (the mean over the methods when a list) minus that of ``b``, on the
    sets where every method involved ran (rows with a value)."""
    methods = [a] if isinstance(a, str) else list(a)
    wide = table.pivot_table(
        index=["zoo", "family", "target"], columns="method", values=metric, aggfunc="first"
    )
    if any(m not in wide for m in (*methods, b)):
        return pd.DataFrame(columns=["zoo", "family", "target", "delta"])
    wide = wide.dropna(subset=[*methods, b])
    delta = wide[methods].mean(axis=1) - wide[b]
    return delta.rename("delta").reset_index()


def _mean_delta(detail: pd.DataFrame, sign: int = 1) -> Decision:
    """Mean of the per-set deltas and its bootstrap interval over the sets; ``setups_held``: the sets whose delta
    has the claimed sign (``sign`` +1: above 0, −1: below)."""
    d = detail["delta"].to_numpy(dtype=float)
    if d.size < 2:
        return Decision(float("nan"), float("nan"), float("nan"), setups=int(d.size), detail=detail)
    return bootstrap_decision(lambda i: float(d[i].mean()), d.size, detail=detail, setups=int(d.size),
                              setups_held=int((sign * d > 0).sum()))  # fmt: skip


def _mean_delta_below(detail: pd.DataFrame) -> Decision:
    return _mean_delta(detail, sign=-1)


def _case(mean: float) -> dict:
    rng = np.random.default_rng(0)
    return {
        "detail": pd.DataFrame(
            {"target": [f"s{i}" for i in range(20)], "delta": mean + 0.05 * rng.normal(size=20)}
        )
    }


def _paired_claim(id_: str, *, statement: str, source: str, quantity: str, rationale: str, effect: float,
                  effect_source: str, own: bool = False) -> Claim:  # fmt: skip
    """A claim on the mean of per-set paired differences: above 0 where the effect of interest is positive (a τ
    gain), below 0 where it is negative (an MAE drop); its cases sit at twice that effect, either side of 0."""
    above = effect > 0
    return Claim(
        id=id_, paper="ranking", own=own, group="own" if own else "method", statement=statement, source=source,
        quantity=quantity, threshold=0.0, direction=">" if above else "<", criterion_source="ours",
        rationale=rationale, decide=_mean_delta if above else _mean_delta_below,
        cases={"holds": lambda: _case(2 * effect), "fails": lambda: _case(-2 * effect)},
        power=Power(MeanRule("delta"), effect, effect_source),
    )  # fmt: skip


_TAU_GAIN = 0.1  #: the effect of interest of the τ claims (ours): a τ gain of 0.1

CLAIMS: tuple[Claim, ...] = (
    _paired_claim(
        "p8.nuclear_norm_ranks_better_than_confidence",
        statement="in the model-centric setting, the nuclear norm ranks models better than average confidence",
        source=_DENG,
        quantity="mean over target sets of Kendall's τ(nuclear_norm) − τ(average_confidence) against the models' "
        "true accuracies",
        rationale="Registered before the run: the paper's 'better' read as a positive mean τ difference over the "
        "zoos' target sets; bootstrap over the sets, models fixed.",
        effect=_TAU_GAIN,
        effect_source="ours: a τ gain of 0.1" + _NOT_IN_CORPUS,
    ),
    _paired_claim(
        "p8.dispersity_scores_rank_better_than_confidence",
        statement="scores that combine confidence and dispersity rank models better than average confidence",
        source=_DENG,
        quantity="mean over target sets of the mean τ of nuclear_norm and mano minus τ(average_confidence)",
        rationale="Registered before the run: the registry's two matrix-norm scores (nuclear norm, MaNo) grow with "
        "both the confidence and the spread of the predictions over classes; our reading of 'combine "
        "confidence and dispersity', fixed before any ranking was computed.",
        effect=_TAU_GAIN,
        effect_source="ours: a τ gain of 0.1" + _NOT_IN_CORPUS,
    ),
    _paired_claim(
        "p8.aline_d_more_accurate_than_atc",
        statement="ALine-D predicts the models' OOD accuracy more accurately than ATC",
        source="Baek et al. 2022 (agreement-on-the-line), §5 and Table 1: ALine-D has the lowest MAE of the "
        "methods compared, ATC among them",
        quantity="mean over target sets of MAE(aline_d) − MAE(atc_mc) over the zoo's models (points of accuracy)",
        rationale="Registered before the run: 'more accurately' as a lower mean absolute error over the target "
        "sets; bootstrap over the sets, models fixed.",
        effect=-1.0,
        effect_source="ours: 1 point of MAE" + _NOT_IN_CORPUS,
    ),
    _paired_claim(
        "p8.id_accuracy_ranks_better_than_confidence",
        statement="ranking models by their labelled in-distribution accuracy (accuracy on the line) ranks them "
        "better than average confidence on the target",
        source="docs/reproductions/ranking.md (pre-registered)",
        quantity="mean over target sets of τ(id_accuracy) − τ(average_confidence)",
        rationale="Registered before the run: the baseline every label-free ranking should beat is the one a "
        "practitioner already has.",
        effect=_TAU_GAIN,
        effect_source="ours: a τ gain of 0.1",
        own=True,
    ),
)


def claim_inputs(table: pd.DataFrame) -> dict[str, dict]:
    """Each claim's ``decide`` arguments from the per-set ranking table."""
    return {
        "p8.nuclear_norm_ranks_better_than_confidence": {
            "detail": paired(table, "nuclear_norm", "average_confidence")
        },
        "p8.dispersity_scores_rank_better_than_confidence": {
            "detail": paired(table, ["nuclear_norm", "mano"], "average_confidence")
        },
        "p8.aline_d_more_accurate_than_atc": {"detail": paired(table, "aline_d", "atc_mc", "mae_pp")},
        "p8.id_accuracy_ranks_better_than_confidence": {
            "detail": paired(table, "id_accuracy", "average_confidence")
        },
    }
