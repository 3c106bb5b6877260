"""The published verdicts table, ``figures/claims.csv``: the claims' recorded outcomes (:mod:`helpers.claims`)
decided over seeds (:mod:`helpers.claims_seeds`) and marked where their rule cannot decide at its sample
(:mod:`helpers.claims_power`).  It sits above those three modules, so none of them imports another's caller."""

from __future__ import annotations

import pandas as pd

from helpers.claims import CLAIM_COLUMNS
from helpers.claims_power import apply_power
from helpers.claims_seeds import decide_over_seeds

__all__ = ["claims_csv"]


def claims_csv(claims: pd.DataFrame, stability: pd.DataFrame | None = None,
               power: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """The ``figures/claims.csv`` table: ``claims`` (:func:`helpers.claims.collect_claims`, the published run's outcomes) with
    ``seeds_held`` / ``seeds`` from ``stability`` (:func:`helpers.claims.stability_table`; without it, this run's verdict on its one
    seed), every claim with at least three seeds there decided over them
    (:func:`helpers.claims_seeds.decide_over_seeds`: the seed as a resampling level; the run's own outcome kept in
    ``run_*``), and each rule's size, power and units from ``power`` (``figures/claims_power.csv``): a rule that
    cannot decide at its sample makes the verdict ``underpowered`` (:func:`helpers.claims_power.apply_power`;
    ``interval_verdict`` keeps the interval's).  ``setups_held`` / ``setups`` stay the published run's."""
    df = claims.copy()
    if "run_estimate" in df:  # re-applying to a published table: start from the published run's own outcome
        for col in ("estimate", "low", "high", "verdict"):
            df[col] = df[f"run_{col}"].where(df[f"run_{col}"].notna(), df[col])
    elif "interval_verdict" in df:
        df["verdict"] = df["interval_verdict"].where(df["interval_verdict"].notna(), df["verdict"])
    df["seeds"] = 1
    df["seeds_held"] = (df["verdict"] == "holds").astype(int)
    df["seed_verdicts"] = ""
    if stability is not None and len(stability):
        st = stability.set_index("id")
        known = df["id"].isin(st.index)
        df.loc[known, "seeds"] = df.loc[known, "id"].map(st["seeds"]).astype(int)
        df.loc[known, "seeds_held"] = df.loc[known, "id"].map(st["seeds_held"]).astype(int)
        df.loc[known, "seed_verdicts"] = df.loc[known, "id"].map(st["verdicts"])
    df = decide_over_seeds(df, stability)
    df = apply_power(df.drop(columns=["size", "power", "needed", "paper_estimate", "paper_verdict", "units"],
                             errors="ignore"), power)  # fmt: skip
    return df.reindex(columns=CLAIM_COLUMNS).reset_index(drop=True)
