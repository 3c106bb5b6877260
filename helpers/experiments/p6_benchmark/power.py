"""What the error-rate simulations of the benchmark's own claims take (each claim's ``power=``,
:mod:`helpers.claims.power`), at the default profile's sample.

Pooled coverage is a share of sets (exact binomial); its effect is the nominal 0.90 the conformal intervals are
built for.  "No family below nominal" counts families whose own interval lies below 0.90: its null world has one
family exactly at the edge (true coverage 0.85, the pooled criterion) among families at 0.90, its effect world all
at 0.90, each family with the published number of sets.  The stacked-vs-every-method count and the width reading have
no sampling interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.claims import clopper_pearson
from helpers.paths import REPO_ROOT

__all__ = ["NOMINAL", "families_world"]

NOMINAL = 0.90


def _family_sizes() -> list[int]:
    """Sets per family in the published leave-one-family-out check (the first conformal variant's)."""
    path = REPO_ROOT / "figures" / "claims" / "06_benchmark.bench.lofo_conformal_families_below_nominal.csv"
    return pd.read_csv(path)["n_sets"].astype(int).tolist() if path.exists() else [10] * 13


def families_world(kind: str):
    """A world for ``bench.lofo_<kind>_families_below_nominal``: per family, sets covered ~ Binomial(n, coverage)."""

    def draw(rng: np.random.Generator, world: str) -> dict:
        sizes = _family_sizes()
        cover = [NOMINAL] * len(sizes)
        if world == "null":
            cover[int(np.argmax(sizes))] = 0.85
        rows = [{"interval": kind, "family": "all", "n_sets": sum(sizes), "covered": 0, "coverage": 0.0}]
        for i, (n, c) in enumerate(zip(sizes, cover)):
            k = int(rng.binomial(n, c))
            lo, hi = clopper_pearson(k, n)
            rows.append({"interval": kind, "family": f"f{i}", "n_sets": n, "covered": k, "coverage": k / n,
                         "ci95_low": lo, "ci95_high": hi, "below_nominal": hi < NOMINAL})  # fmt: skip
        return {"check": pd.DataFrame(rows)}

    return draw
