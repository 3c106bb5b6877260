"""Size and power of every claim's decision rule, at the sample the default profile decides it on.

A verdict is worth what its rule's error rates are.  Each experiments package gives, beside its ``CLAIMS``, a
``POWER`` mapping ``{claim id: Power}``: how the claim's rule samples (``rule``), the paper's own reported effect
(``effect``, with ``effect_source``) and the seed-to-seed spread of the quantity where a trained model decides it.
:func:`simulate` runs the rule in two worlds:

* **size** — the share of draws in which the rule says "holds" in a world where the claim is false at the edge of
  its criterion (the quantity exactly at the threshold, or, for a maximum that must stay below it, one group at the
  threshold and the others at the paper's values); it must be at most :data:`MAX_SIZE` = 0.05;
* **power** — the share of draws in which it says "holds" in the world of the paper's effect; it must be at least
  :data:`MIN_POWER` = 0.80.  Where the paper's own numbers do not meet the criterion (a reading against the paper's
  text) power is undefined and the row says so.

A rule that misses either cannot decide its claim at its sample: :func:`apply_power` turns its verdict into
``underpowered`` (the interval verdict stays in ``interval_verdict``), and ``needed`` names the sample that would
give it size and power where a larger sample can (``"none"`` where it cannot: a seed spread that more units do
not average out needs seeds as a resampling level).

Rule models — the procedure each claim's ``decide`` runs, with its sample read from the published records
(``figures/claims.csv``, ``figures/claims/<notebook>.<id>.csv``, ``figures/claims_seeds.csv``):

=================  ==================================================================================================
``ShareRule``      the share of ``n`` setups (``setups`` of the claim's row) that meet a condition, its exact
                   Clopper–Pearson interval (:func:`helpers.claims.share_decision`); a draw is k ~ Binomial(n, p).
``MeanRule``       the mean of ``n`` per-unit values (a column of the claim's detail: sets, pairs), its percentile
                   bootstrap interval (:func:`helpers.claims.bootstrap_decision`); a draw is ``n`` units
                   N(mu, sd²) with the column's sd.
``GroupsRule``     a max / min / mean over groups (setups, settings, backbones) of group statistics that are means
                   over many units (test points, pairs, sets), the stratified bootstrap of
                   :func:`helpers.claims.bootstrap_groups`; a group's estimate is drawn N(theta_g, se²) and a
                   replicate N(estimate_g, se²), se from the published interval (half-width / 1.96, times √G for a
                   mean over G groups) or, for a claim not yet published, given (``se=``).
``SimulatedRule``  the claim's own ``decide`` on inputs drawn from ``world(rng, kind)`` (``kind`` "null" or
                   "effect"), for rules no summary captures (P2's bootstraps over test examples).
``PointRule``      a count or reading without a sampling interval: no error rate exists, the claim is underpowered.
=================  ==================================================================================================

Seeds: with ``seed_sd`` > 0 every draw shifts the true value by N(0, seed_sd²) — the rule decides on one seed
while the claim is about the average over seeds, so a spread between seeds larger than the rule's interval
inflates its size.  ``seed_sd`` is the between-seed part of the per-seed estimates in ``claims_seeds.csv``: their
variance less the mean squared standard error of each (its interval's width / 3.92), floored at 0.

A claim the published seeds table decides over ``S`` >= 3 seeds (:mod:`helpers.claims_seeds`) is simulated as that
rule: each draw gives ``S`` seed estimates — a share k_s / n with k_s ~ Binomial(n, p + N(0, seed_sd²)) and its
exact interval; otherwise θ + N(0, seed_sd²) + N(0, se²) with se the seeds' root-mean-square interval width / 3.92
(θ the threshold, or the paper's value, reduced over groups for a group rule) — and the seeds interval decides;
a :class:`SimulatedRule` runs its ``decide`` on ``S`` independent draws of its world.  ``needed`` is then the
number of seeds that would decide it (up to 30).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from helpers.claims import Claim
from helpers.errors import InputValidationError

__all__ = [
    "MAX_SIZE", "MIN_POWER", "POWER_COLUMNS", "Power", "ShareRule", "MeanRule", "GroupsRule", "SimulatedRule", "PointRule",
    "holds_mask", "exact_bounds", "simulate", "power_table", "apply_power",
]  # fmt: skip

MAX_SIZE = 0.05
MIN_POWER = 0.80
Z = 1.959963984540054
#: the columns of ``figures/claims_power.csv``
POWER_COLUMNS = ["id", "paper", "rule", "units", "threshold", "direction", "null", "effect", "effect_source",
                 "seed_sd", "draws", "size", "power", "decidable", "needed", "paper_estimate", "paper_verdict",
                 "note"]  # fmt: skip


def holds_mask(low: np.ndarray, high: np.ndarray, threshold: float, direction: str) -> np.ndarray:
    """Vectorised :func:`helpers.claims.verdict` == "holds" (NaN bounds never hold)."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    ok = {">=": low >= threshold, ">": low > threshold, "<=": high <= threshold, "<": high < threshold}[direction]
    return ok & np.isfinite(low) & np.isfinite(high)


def exact_bounds(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The Clopper–Pearson 95 % interval of k / n for every k = 0..n (:func:`helpers.claims.clopper_pearson`)."""
    from scipy.stats import beta

    k = np.arange(n + 1)
    low = np.where(k == 0, 0.0, beta.ppf(0.025, np.maximum(k, 1), n - k + 1))
    high = np.where(k == n, 1.0, beta.ppf(0.975, k + 1, np.maximum(n - k, 1)))
    return low, high


def _meets(value: float, threshold: float, direction: str) -> bool:
    return {">=": value >= threshold, ">": value > threshold, "<=": value <= threshold, "<": value < threshold}[direction]


@dataclass(frozen=True)
class ShareRule:
    """Share of ``n`` setups with an exact binomial interval; ``n`` from the claim's published ``setups``."""

    n: int | None = None
    name = "share"

    def units(self, n: int) -> str:
        return f"{n} setups"

    def holds_rate(self, claim: Claim, p: float, n: int, seed_sd: float, rng: np.random.Generator,
                   draws: int) -> float:  # fmt: skip
        from scipy.stats import binom

        k = np.arange(n + 1)
        low, high = exact_bounds(n)
        holds = holds_mask(low, high, claim.threshold, claim.direction)
        if seed_sd <= 0:  # exact: Σ_k P(k) [verdict(k) = holds]
            return float(np.sum(binom.pmf(k, n, min(max(p, 0.0), 1.0)) * holds))
        ps = np.clip(p + rng.normal(0, seed_sd, draws), 0, 1)
        return float(holds[rng.binomial(n, ps)].mean())


@dataclass(frozen=True)
class MeanRule:
    """Mean of the per-unit values in ``column`` of the claim's detail, percentile bootstrap over the units."""

    column: str
    n_boot: int = 1000
    name = "mean"

    def units(self, n: int) -> str:
        return f"{n} units (rows of the detail)"

    def holds_rate(self, claim: Claim, mu: float, n: int, sd: float, seed_sd: float, rng: np.random.Generator,
                   draws: int) -> float:  # fmt: skip
        centre = mu + (rng.normal(0, seed_sd, (draws, 1)) if seed_sd > 0 else 0.0)
        units = centre + rng.normal(0, sd, (draws, n))
        counts = rng.multinomial(n, np.full(n, 1 / n), self.n_boot)  # one resample per row: n_boot x n counts
        reps = units @ counts.T / n  # (draws, n_boot) bootstrap means
        low, high = np.quantile(reps, [0.025, 0.975], axis=1)
        return float(holds_mask(low, high, claim.threshold, claim.direction).mean())


@dataclass(frozen=True)
class GroupsRule:
    """``reduce`` ("max", "min", "mean") over ``groups`` group estimates, each a mean over many units (``of`` says
    which, and what the interval resamples)."""

    reduce: str
    groups: int | None = None
    n_boot: int = 1000
    se: float | None = None
    of: str = "many units"
    name = "groups"

    def __post_init__(self) -> None:
        if self.reduce not in ("max", "min", "mean"):
            raise InputValidationError(f"reduce: expected 'max', 'min' or 'mean', got {self.reduce!r}")

    def units(self, g: int) -> str:
        return f"{self.reduce} over {g} groups of {self.of}"

    def _reduce(self, x: np.ndarray) -> np.ndarray:
        return {"max": np.max, "min": np.min, "mean": np.mean}[self.reduce](x, axis=-1)

    def holds_rate(self, claim: Claim, theta: np.ndarray, se: float, seed_sd: float, rng: np.random.Generator,
                   draws: int) -> float:  # fmt: skip
        g = len(theta)
        shift = rng.normal(0, seed_sd, (draws, 1)) if seed_sd > 0 else 0.0
        est = theta[None, :] + shift + rng.normal(0, se, (draws, g))
        reps = self._reduce(est[:, None, :] + rng.normal(0, se, (draws, self.n_boot, g)))
        low, high = np.quantile(reps, [0.025, 0.975], axis=1)
        return float(holds_mask(low, high, claim.threshold, claim.direction).mean())


@dataclass(frozen=True)
class SimulatedRule:
    """The claim's own ``decide`` on ``world(rng, kind)`` inputs, ``kind`` in ("null", "effect"); ``units`` says
    the sample the world draws (it must be the default profile's)."""

    world: Callable[[np.random.Generator, str], dict[str, Any]]
    units_text: str
    draws: int = 40
    nulls: tuple[str, ...] = ("null",)
    effect_draws: int | None = None
    seeds: int = 1
    name = "simulated"

    def units(self, _: int = 0) -> str:
        return self.units_text

    def holds_rate(self, claim: Claim, kind: str, rng: np.random.Generator) -> float:
        """Share of "holds" over draws of world ``kind``; for "null", the largest over the null worlds
        :attr:`nulls` (the claim false at the edge in several ways: the size is the worst of them)."""
        if kind == "null":
            return max(self._rate(claim, k, rng, self.draws) for k in self.nulls)
        return self._rate(claim, kind, rng, self.effect_draws or self.draws)

    def _rate(self, claim: Claim, kind: str, rng: np.random.Generator, draws: int) -> float:
        if self.seeds > 1:  # the seeds rule over `seeds` independent draws of the world
            from helpers.claims import verdict
            from helpers.claims_seeds import seeds_decision

            def one() -> bool:
                ds = [claim.run(**self.world(rng, kind))[0] for _ in range(self.seeds)]
                d = seeds_decision([x.estimate for x in ds], [x.low for x in ds], [x.high for x in ds])
                return verdict(d.low, d.high, claim.threshold, claim.direction) == "holds"

            return float(np.mean([one() for _ in range(draws)]))
        return float(np.mean([claim.run(**self.world(rng, kind))[1] == "holds" for _ in range(draws)]))


@dataclass(frozen=True)
class PointRule:
    """A count or reading without a sampling interval (its interval is the point): no error rate can be given, so
    the claim is ``underpowered`` until its rule resamples its units."""

    units_text: str
    needed: str = "an interval over its units (the rule has none)"
    name = "point"

    def units(self, _: int = 0) -> str:
        return self.units_text


@dataclass(frozen=True)
class Power:
    """How a claim's rule is simulated.

    Parameters
    ----------
    rule : ShareRule | MeanRule | GroupsRule | SimulatedRule
    effect : float or tuple of float
        The paper's reported value of the claim's quantity (per group for a :class:`GroupsRule`); ignored by a
        :class:`SimulatedRule` (its world draws it).
    effect_source : str
        Where the effect comes from: the paper's table or figure, or ``"ours: ..."`` with the reading, where the
        paper gives words only.
    seeds : bool
        The quantity comes from trained models: its per-seed spread enters the draws.
    paper_units : sequence, optional
        The paper's own per-unit numbers for a share or mean rule (its per-set flags, its per-set values): the rule
        run on them gives ``paper_estimate`` and ``paper_verdict`` — whether the paper's own sample decides the
        claim under our rule.
    """

    rule: ShareRule | MeanRule | GroupsRule | SimulatedRule | PointRule
    effect: float | tuple[float, ...] | None
    effect_source: str
    seeds: bool = False
    note: str = ""
    paper_units: tuple | None = None


def _edge(claim: Claim, rule: GroupsRule, effect: np.ndarray) -> np.ndarray:
    """The null world of a group rule: the claim false by the least margin.

    A maximum that must stay below the threshold (or a minimum above it) is false as soon as one group reaches it:
    that group at the threshold, the others at the paper's values.  A maximum that must exceed it is least
    favourable with every group at the threshold (the maximum of noisy estimates is biased upward); a mean is
    shifted as a whole."""
    t = claim.threshold
    below = claim.direction in ("<", "<=")
    if rule.reduce == "mean":
        return effect - effect.mean() + t
    if (rule.reduce == "max") == below:
        out = effect.copy()
        out[np.argmax(out) if rule.reduce == "max" else np.argmin(out)] = t
        return out
    return np.full_like(effect, t)


def _row_of(claims: pd.DataFrame, cid: str) -> pd.Series | None:
    """The claim's published row, with the published run's own interval (``run_*``) where it was decided over
    seeds: a one-run rule's sample is the run's."""
    hit = claims[claims["id"] == cid]
    if not len(hit):
        return None
    row = hit.iloc[0].copy()
    for col in ("estimate", "low", "high"):
        if f"run_{col}" in row and pd.notna(row[f"run_{col}"]):
            row[col] = row[f"run_{col}"]
    return row


def _seed_sd(seeds: pd.DataFrame | None, cid: str) -> float:
    """The seed-to-seed SD of the claim's true value: the spread of the per-seed estimates less the part their own
    sampling explains (method of moments: var(estimates) - mean((interval width / 3.92)²), floored at 0)."""
    if seeds is None or not len(seeds):
        return 0.0
    hit = seeds[seeds["id"] == cid]
    if not len(hit):
        return 0.0
    est, within = [], []
    for col, cell in hit.iloc[0].items():
        m = re.fullmatch(r"\s*(\S+) \[(\S+), (\S+)\]\s*", str(cell)) if str(col).startswith("seed ") else None
        if m and all(v != "nan" for v in m.groups()):
            e, lo, hi = (float(v) for v in m.groups())
            est.append(e)
            within.append(((hi - lo) / (2 * Z)) ** 2)
    if len(est) < 2:
        return 0.0
    return float(math.sqrt(max(0.0, np.var(est, ddof=1) - np.mean(within))))


def simulate(claim: Claim, spec: Power, *, figures: str | Path, draws: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Size, power and the sample needed for ``claim``'s rule, with its sample read from ``figures``.

    Returns one row of :data:`POWER_COLUMNS`.  ``draws`` is the number of simulated outcomes per world for the
    summary rules (a :class:`SimulatedRule` uses its own, fewer, draws: each one runs the claim's bootstrap)."""
    figures = Path(figures)
    rng = np.random.default_rng(seed)
    claims = pd.read_csv(figures / "claims.csv")
    seeds = pd.read_csv(figures / "claims_seeds.csv") if (figures / "claims_seeds.csv").exists() else None
    row = _row_of(claims, claim.id)
    seed_sd = _seed_sd(seeds, claim.id) if spec.seeds else 0.0
    rule, t, d = spec.rule, claim.threshold, claim.direction
    out = {"id": claim.id, "paper": claim.paper, "rule": rule.name, "threshold": t, "direction": d,
           "effect": spec.effect, "effect_source": spec.effect_source, "seed_sd": round(seed_sd, 6),
           "draws": draws, "needed": "", "note": spec.note}  # fmt: skip
    if isinstance(rule, PointRule):
        out.update(units=rule.units(), null="", size=float("nan"), power=float("nan"), draws=0, needed=rule.needed)
        return _finish(out)
    cells = _seeded(claim, row, seeds)
    if cells is not None:
        return _simulate_seeds(claim, spec, row, cells, _seed_sd(seeds, claim.id), out, figures, rng, draws)
    if isinstance(rule, SimulatedRule):
        out.update(units=rule.units(), null="worlds: " + ", ".join(rule.nulls), effect="world: effect", draws=rule.draws,
                   size=rule.holds_rate(claim, "null", rng), power=rule.holds_rate(claim, "effect", rng))
        out = _finish(out)
        if not out["decidable"]:
            out["needed"] = "a rule or sample not simulated here (only the published sample is)"
        return out
    needs_row = isinstance(rule, MeanRule) or (isinstance(rule, ShareRule) and rule.n is None) or (
        isinstance(rule, GroupsRule) and rule.se is None)
    if row is None and needs_row:
        raise InputValidationError(f"claim {claim.id!r}: no published row in {figures / 'claims.csv'}; the rule's "
                                   "sample is read from it (or give it in the rule: ShareRule(n=...), "
                                   "GroupsRule(se=...))")  # fmt: skip
    effect = spec.effect
    out.update(_paper_decision(claim, spec))
    if isinstance(rule, ShareRule):
        n = int(rule.n or row["setups"])
        rate = lambda v, m=n: rule.holds_rate(claim, v, m, seed_sd, rng, draws)  # noqa: E731
        out.update(units=rule.units(n), null=t, size=rate(t), power=_power(rate, effect, t, d))
        out["needed"] = _needed(lambda m: (rate(t, m), _power(lambda v: rate(v, m), effect, t, d)),
                                n, lambda m: f"{m} setups", step=lambda m: m + 1, limit=400, seed_sd=seed_sd)
    elif isinstance(rule, MeanRule):
        values = pd.read_csv(figures / "claims" / f"{row['notebook']}.{claim.id}.csv")[rule.column].dropna()
        n, sd = len(values), float(values.std(ddof=1))
        rate = lambda v, m=n: rule.holds_rate(claim, v, m, sd, seed_sd, rng, draws)  # noqa: E731
        out.update(units=rule.units(n) + f", unit sd {sd:.3g}", null=t, size=rate(t), power=_power(rate, effect, t, d))
        out["needed"] = _needed(lambda m: (rate(t, m), _power(lambda v: rate(v, m), effect, t, d)),
                                n, lambda m: f"{m} units", step=lambda m: 2 * m, limit=64 * n, seed_sd=seed_sd)
    else:
        theta = np.atleast_1d(np.asarray(effect, float))
        g = int(rule.groups or len(theta))
        theta = np.resize(theta, g)
        se = rule.se if rule.se is not None else (
            (float(row["high"]) - float(row["low"])) / (2 * Z) * (math.sqrt(g) if rule.reduce == "mean" else 1.0))
        null = _edge(claim, rule, theta)

        def rates(scale: float) -> tuple[float, float]:
            s = se / math.sqrt(scale)
            size = rule.holds_rate(claim, null, s, seed_sd, rng, draws // 4)
            ok = _meets(float(rule._reduce(theta)), t, d)
            return size, (rule.holds_rate(claim, theta, s, seed_sd, rng, draws // 4) if ok else float("nan"))

        size, power = rates(1.0)
        out.update(units=rule.units(g) + f", se {se:.3g} per group", null=tuple(np.round(null, 6)), size=size,
                   power=power, effect=tuple(np.round(theta, 6)), draws=draws // 4)
        out["needed"] = _needed(rates, 1, lambda m: f"{m}x the units per group", step=lambda m: 2 * m, limit=64,
                                start_known=(size, power), seed_sd=seed_sd)  # fmt: skip
    return _finish(out)


def _seeded(claim: Claim, row: pd.Series | None, seeds: pd.DataFrame | None) -> pd.DataFrame | None:
    """The per-seed outcomes ``claim`` is decided over (:func:`helpers.claims_seeds.decide_over_seeds`), if any: at
    least three seeds in the seeds table, published with the run (``seeds`` of its row), not superseded."""
    from helpers.claims_seeds import MIN_SEEDS, seed_cells

    if row is None or seeds is None or claim.superseded_by or claim.untested:
        return None
    published = pd.to_numeric(pd.Series([row.get("seeds")]), errors="coerce").fillna(1).iloc[0]
    hit = seeds[seeds["id"] == claim.id]
    if published < MIN_SEEDS or not len(hit):
        return None
    cells = seed_cells(hit.iloc[0])
    return cells if len(cells) >= MIN_SEEDS else None


def _simulate_seeds(claim: Claim, spec: Power, row: pd.Series, cells: pd.DataFrame, seed_sd: float,
                    out: dict[str, Any], figures: Path, rng: np.random.Generator, draws: int) -> dict[str, Any]:  # fmt: skip
    """Size, power and seeds needed of the seeds rule over ``len(cells)`` seeds (module docstring, "Seeds")."""
    from dataclasses import replace

    from helpers.claims_seeds import seeds_interval

    rule, t, d, s = spec.rule, claim.threshold, claim.direction, len(cells)
    out["seed_sd"] = round(seed_sd, 6)
    if isinstance(rule, SimulatedRule):
        seeded = replace(rule, seeds=s)
        out.update(units=f"{s} seeds x {rule.units()}", null="worlds: " + ", ".join(rule.nulls), draws=rule.draws,
                   effect="world: effect", size=seeded.holds_rate(claim, "null", rng),
                   power=seeded.holds_rate(claim, "effect", rng))  # fmt: skip
        out = _finish(out)
        if not out["decidable"]:
            out["needed"] = "a rule or sample not simulated here (only the published seeds are)"
        return out
    out.update(_paper_decision(claim, spec))
    se = float(np.sqrt(np.mean(((cells["high"] - cells["low"]) / (2 * Z)) ** 2)))
    if isinstance(rule, ShareRule):
        n = int(rule.n or row["setups"])
        low, high = exact_bounds(n)
        effect, per_seed = spec.effect, rule.units(n)

        def rate(p: float, m: int) -> float:
            ps = np.clip(p + rng.normal(0, seed_sd, (draws, m)), 0, 1) if seed_sd > 0 else np.full((draws, m), p)
            k = rng.binomial(n, np.clip(ps, 0, 1))
            _, lo, hi = seeds_interval(k / n, (high[k] - low[k]) / (2 * Z))
            return float(holds_mask(np.clip(lo, 0, 1), np.clip(hi, 0, 1), t, d).mean())
    else:
        theta = np.atleast_1d(np.asarray(spec.effect, float)) if spec.effect is not None else None
        effect = None if theta is None else float(rule._reduce(theta)) if isinstance(rule, GroupsRule) else float(theta[0])
        per_seed = rule.units(int(rule.groups or len(theta))) if isinstance(rule, GroupsRule) else rule.units(
            len(pd.read_csv(figures / "claims" / f"{row['notebook']}.{claim.id}.csv")[rule.column].dropna()))

        def rate(v: float, m: int) -> float:
            y = v + rng.normal(0, seed_sd, (draws, m)) + rng.normal(0, se, (draws, m))
            _, lo, hi = seeds_interval(y, np.full_like(y, se))
            return float(holds_mask(lo, hi, t, d).mean())

    out.update(units=f"{s} seeds x {per_seed}, se {se:.3g} per seed", null=t, effect=effect, size=rate(t, s),
               power=_power(lambda v: rate(v, s), effect, t, d))  # fmt: skip
    out["needed"] = _needed(lambda m: (rate(t, m), _power(lambda v: rate(v, m), effect, t, d)), s,
                            lambda m: f"{m} seeds", step=lambda m: m + 1, limit=30)  # fmt: skip
    return _finish(out)


def _paper_decision(claim: Claim, spec: Power) -> dict[str, Any]:
    """The claim's rule on the paper's own per-unit numbers (share or mean rules with ``paper_units``)."""
    from helpers.claims import bootstrap_decision, share_decision

    if spec.paper_units is None or isinstance(spec.rule, (GroupsRule, SimulatedRule)):
        return {"paper_estimate": float("nan"), "paper_verdict": ""}
    values = np.asarray(spec.paper_units, float)
    if isinstance(spec.rule, ShareRule):
        decision = share_decision(values.astype(bool))
    else:
        decision = bootstrap_decision(lambda i: float(values[i].mean()), len(values))
    return {"paper_estimate": round(decision.estimate, 6), "paper_verdict": claim.verdict(decision)}


def _power(rate: Callable[[float], float], effect: Any, t: float, d: str) -> float:
    return rate(float(effect)) if effect is not None and _meets(float(effect), t, d) else float("nan")


def _needed(rates: Callable[[int], tuple[float, float]], start: int, label: Callable[[int], str], *,
            step: Callable[[int], int], limit: int, start_known: tuple[float, float] | None = None,
            seed_sd: float = 0.0) -> str:  # fmt: skip
    """The smallest sample (from ``start``, growing by ``step`` up to ``limit``) with size <= 0.05 and power >= 0.8;
    "" when the current one has them, "none up to <limit>" when none does."""
    m, (size, power) = start, start_known or rates(start)
    if size <= MAX_SIZE and power >= MIN_POWER:
        return ""
    if not np.isfinite(power):
        return "n/a: the paper's own numbers do not meet the criterion"
    while m < limit:
        m = step(m)
        size, power = rates(m)
        if size <= MAX_SIZE and power >= MIN_POWER:
            return label(m)
    return f"none up to {label(limit)}" + (f": the seed spread ({seed_sd:.3g}) needs seeds as a resampling level"
                                            if seed_sd > 0 else "")


def _finish(out: dict[str, Any]) -> dict[str, Any]:
    size, power = float(out["size"]), float(out["power"])
    out["size"] = round(size, 4) if np.isfinite(size) else float("nan")
    out["power"] = round(power, 4) if np.isfinite(power) else float("nan")
    out["decidable"] = bool(np.isfinite(size) and size <= MAX_SIZE and np.isfinite(power) and power >= MIN_POWER)
    return {k: out.get(k, "") for k in POWER_COLUMNS}


def power_table(registries: Mapping[str, tuple[tuple[Claim, ...], Mapping[str, Power]]], *, figures: str | Path,
                draws: int = 2000, only: set[str] | None = None) -> pd.DataFrame:  # fmt: skip
    """One :func:`simulate` row per registered claim (``{name: (CLAIMS, POWER)}``); a claim without a spec is an
    error (every rule's error rates are part of its verdict)."""
    rows = []
    for name, (claims, specs) in registries.items():
        missing = sorted(c.id for c in claims if c.id not in specs)
        if missing:
            raise InputValidationError(f"{name}: claims without a Power spec: {missing}")
        for c in claims:
            if only is None or c.id in only:
                rows.append(simulate(c, specs[c.id], figures=figures, draws=draws, seed=_stable_seed(c.id)))
    return pd.DataFrame(rows, columns=POWER_COLUMNS)


def _stable_seed(text: str) -> int:
    return int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little") % (2**32)


def apply_power(claims: pd.DataFrame, power: pd.DataFrame | None) -> pd.DataFrame:
    """``claims`` with ``size``, ``power``, ``needed``, ``paper_estimate`` and ``paper_verdict`` joined from ``power``
    and the verdict ``underpowered``
    where the rule cannot decide at its sample (``interval_verdict`` keeps what the interval said)."""
    df = claims.copy()
    df["interval_verdict"] = df["verdict"]
    if power is None or not len(power):
        return df
    p = power.set_index("id")
    for col in ("size", "power", "needed", "paper_estimate", "paper_verdict", "units"):
        df[col] = df["id"].map(p[col]) if col in p else float("nan")
    known = df["id"].isin(p.index)
    decidable = p["decidable"].map(lambda v: str(v).strip().lower() in ("true", "1")).astype(bool)
    weak = known & ~df["id"].map(decidable).fillna(False).astype(bool)
    df.loc[weak & (df["verdict"] != "untested"), "verdict"] = "underpowered"
    return df
