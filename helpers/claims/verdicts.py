"""The published verdicts, ``figures/claims.csv``: each claim's interval certified by the error rate of the verdict
it gives.

A claim's interval (:func:`helpers.claims.verdict`, over seeds where the seeds table has three or more:
:mod:`helpers.claims.seeds`) says holds, fails or undecided.  The published verdict keeps what the interval says
only where the rule's error rate for that verdict is small (:mod:`helpers.claims.power`, each rate read at the
conservative end of its Monte-Carlo interval):

=======================  ===============================================================================================
``holds``                the interval holds and the rule's size, P(holds | claim false at its edge), is <= 0.05
``fails``                the interval fails and the rule's false-fail rate, P(fails | claim true at the paper's
                         effect), is <= 0.05
``indistinguishable``    otherwise, where the rule's size exceeds 0.05: at this sample it says "holds" too often when
                         the claim is false to tell the claim from noise
``undecided``            otherwise, where the rule's power, P(holds | the paper's effect), is >= 0.80: a real effect
                         would most likely have shown
``underpowered``         otherwise: the rule could not have shown the paper's effect (or has no error rate at all)
``untested``             the project has no data for the claim
=======================  ===============================================================================================

``interval_verdict`` keeps what the interval said; ``needed`` (only for undecided and underpowered claims) names the
sample that would decide it, with its cost in CPU-hours on the published run's machine.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd

from helpers.claims.power import MAX_FALSE_FAIL, MAX_SIZE, MIN_POWER
from helpers.claims.registry import CLAIM_COLUMNS
from helpers.claims.seeds import decide_over_seeds

__all__ = ["certify", "apply_power", "claims_csv", "needed_cost"]

#: the columns ``claims.csv`` takes from ``claims_power.csv``
POWER_FIELDS = ("size", "size_draws", "size_high", "power", "power_draws", "power_low", "false_fail",
                "false_fail_draws", "false_fail_high", "power_at", "effect_source", "needed", "paper_estimate",
                "paper_verdict", "units")  # fmt: skip


def _num(v: object) -> float:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def certify(interval_verdict: str, *, size: float, size_high: float, power_low: float,
            false_fail_high: float) -> str:  # fmt: skip
    """The published verdict of an interval verdict given its rule's error rates (module docstring).

    >>> certify("fails", size=0.3, size_high=0.35, power_low=0.1, false_fail_high=0.001)
    'fails'
    >>> certify("holds", size=0.07, size_high=0.08, power_low=0.95, false_fail_high=0.0)
    'indistinguishable'
    >>> certify("undecided", size=0.01, size_high=0.02, power_low=0.9, false_fail_high=0.0)
    'undecided'
    >>> certify("holds", size=0.04, size_high=0.06, power_low=0.5, false_fail_high=0.0)
    'underpowered'
    """
    size, size_high, power_low, ff_high = (_num(v) for v in (size, size_high, power_low, false_fail_high))
    if interval_verdict == "untested":
        return "untested"
    if interval_verdict == "holds" and size_high <= MAX_SIZE:
        return "holds"
    if interval_verdict == "fails" and ff_high <= MAX_FALSE_FAIL:
        return "fails"
    if np.isfinite(size) and size > MAX_SIZE:
        return "indistinguishable"
    return "undecided" if power_low >= MIN_POWER else "underpowered"


def needed_cost(needed: str, cpu_s: float, seeds: int) -> str:
    """``needed`` with its cost: for ``"N seeds"``, the CPU-hours of ``N - seeds`` more runs of the notebook at
    ``cpu_s`` CPU-seconds each (the published run's); other samples need data or setups the run does not have."""
    text = str(needed).strip()
    if not text or text.lower() == "nan":
        return ""
    words = text.split()
    if len(words) == 2 and words[1] == "seeds" and words[0].isdigit() and np.isfinite(cpu_s):
        more = max(int(words[0]) - int(seeds), 0)
        return f"{text}: {more} more runs, {more * cpu_s / 3600:.1f} CPU-h on the 2-core reference"
    return text


def apply_power(claims: pd.DataFrame, power: pd.DataFrame | None, cpu_s: dict[str, float] | None = None
                ) -> pd.DataFrame:  # fmt: skip
    """``claims`` with each rule's rates (:data:`POWER_FIELDS`) joined from ``power`` and every verdict certified
    (:func:`certify`; ``interval_verdict`` keeps what the interval said).  ``needed`` stays only on undecided and
    underpowered claims, costed by ``cpu_s`` (``{notebook: CPU-seconds of one default run}``)."""
    df = claims.copy()
    df["interval_verdict"] = df["verdict"]
    if power is None or not len(power):
        return df
    p = power.set_index("id")
    for col in POWER_FIELDS:
        df[col] = df["id"].map(p[col]) if col in p else float("nan")
    known = df["id"].isin(p.index)
    df.loc[known, "verdict"] = [certify(r["interval_verdict"], size=r["size"], size_high=r["size_high"],
                                        power_low=r["power_low"], false_fail_high=r["false_fail_high"])
                                for _, r in df[known].iterrows()]  # fmt: skip
    open_ = df["verdict"].isin(["undecided", "underpowered"])
    costs = cpu_s or {}
    df["needed"] = [needed_cost(r["needed"], costs.get(str(r.get("notebook")), float("nan")), _num(r.get("seeds")))
                    if keep else "" for keep, (_, r) in zip(open_, df.iterrows())]  # fmt: skip
    return df


def claims_csv(claims: pd.DataFrame, stability: pd.DataFrame | None = None, power: pd.DataFrame | None = None, *,
               redrawn: Collection[str] = (), cpu_s: dict[str, float] | None = None) -> pd.DataFrame:  # fmt: skip
    """The ``figures/claims.csv`` table: ``claims`` (the published run's outcomes) with ``seeds_held`` / ``seeds``
    from ``stability`` (without it, this run's verdict on its one seed), every claim with at least three seeds there
    decided over them (:func:`helpers.claims.seeds.decide_over_seeds`; ``redrawn``: the ids whose seeds redraw
    their units; the run's own outcome kept in ``run_*``), and each verdict certified by its rule's error rates from
    ``power`` (:func:`apply_power`).  ``setups_held`` / ``setups`` stay the published run's."""
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
    df = decide_over_seeds(df, stability, redrawn=redrawn)
    df = apply_power(df.drop(columns=[c for c in POWER_FIELDS if c in df]), power, cpu_s)
    return df.reindex(columns=CLAIM_COLUMNS).reset_index(drop=True)
