"""The error rates of every claim's decision rule, at the sample the default profile decides it on.

A verdict is worth the error rate of the verdict given.  Each claim carries a :class:`Power`: how its rule samples
(``rule``, :mod:`helpers.claims.rules`), the paper's reported effect with its source, a minimal effect of interest
where the paper's own number does not meet the criterion, and whether its seeds share their units.
:func:`simulate` runs the rule in two worlds:

* **null** — the claim false at the edge of its criterion (the quantity at the threshold; for a maximum that must
  stay below it, one group at the threshold and the others at the paper's values).  **size** = P(holds | null):
  it certifies a "holds" when <= :data:`MAX_SIZE` = 0.05.
* **effect** — the claim true at the paper's effect (or, where the paper's own number does not meet the criterion,
  at the minimal effect of interest ``mei``).  **power** = P(holds | effect), which says whether not deciding means
  anything (>= :data:`MIN_POWER` = 0.80: ``undecided``, else ``underpowered``), and **false_fail** = P(fails |
  effect), which certifies a "fails" when <= :data:`MAX_FALSE_FAIL` = 0.05.

Every rate carries its draws and a Monte-Carlo interval (:class:`helpers.claims.rules.Rate`); summary rules take
:data:`DRAWS` = 2,000 draws per world, and :mod:`helpers.claims.verdicts` decides on each rate's conservative end.

**Seeds share their units.**  Every seed of a notebook re-trains its models on the same sets and test examples: the
units' sampling error is one draw for all seeds, and only the training differs.  A claim decided over ``S`` seeds
(:mod:`helpers.claims.seeds`) is simulated that way: one draw of the units (k0 ~ Binomial(n, p) for a share, or
U ~ N(0, se²)), then per seed its estimate moved by N(0, seed_sd²) and its own interval.  ``seed_sd`` is the SD of
the seeds' estimates (with shared units their spread is the seeds' alone).  A claim whose seeds redraw their units
(``units="redrawn"``: it resamples models that each seed trains anew) is simulated with independent draws per seed
and ``seed_sd`` as the spread beyond each seed's own noise.  A one-run rule (a claim the seeds table does not decide)
draws its true value with a seed shift N(0, seed_sd²): the claim is about the mean over seeds.

``needed`` is the sample that would give size <= 0.05 and power >= 0.80 (more setups or units for a one-run rule,
more seeds, up to 30, for a seeds rule), or "none up to ..." where none does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from helpers.claims.registry import Claim
from helpers.claims.rules import (
    GroupsRule,
    MeanRule,
    PointRule,
    Rate,
    ShareRule,
    SimulatedRule,
    exact_bounds,
    fails_mask,
    holds_mask,
    meets,
)
from helpers.errors import InputValidationError

__all__ = ["MAX_SIZE", "MAX_FALSE_FAIL", "MIN_POWER", "DRAWS", "MEI_SHARE", "POWER_COLUMNS", "Power", "simulate", "power_table"]

MAX_SIZE = 0.05
MAX_FALSE_FAIL = 0.05
MIN_POWER = 0.80
DRAWS = 2000
#: the minimal effect of interest of a share that must exceed one half, where the paper's own number does not
#: (fixed before any rate was read at it): a clear majority, 15 points above the threshold
MEI_SHARE = "a clear majority: 15 points above the criterion's one half (the project's rule for a share whose " \
    "paper number does not meet its criterion, fixed before its rates were read)"
Z = 1.959963984540054
#: the columns of ``figures/claims_power.csv``
POWER_COLUMNS = ["id", "paper", "rule", "units", "seeds_share_units", "threshold", "direction", "null", "effect",
                 "effect_source", "mei", "power_at", "seed_sd", "size", "size_draws", "size_high", "power",
                 "power_draws", "power_low", "false_fail", "false_fail_draws", "false_fail_high", "decidable", "needed",
                 "paper_estimate", "paper_verdict", "note"]  # fmt: skip


@dataclass(frozen=True)
class Power:
    """How a claim's rule is simulated.

    Parameters
    ----------
    rule : ShareRule | MeanRule | GroupsRule | SimulatedRule | PointRule
    effect : float or tuple of float
        The paper's reported value of the claim's quantity (per group for a :class:`GroupsRule`); ignored by a
        :class:`SimulatedRule` (its world draws it).
    effect_source : str
        Where the effect comes from: the paper's table or section, or ``"ours: ..."`` with the reading, where the
        paper gives words only.
    seeds : bool
        The quantity comes from trained models: its per-seed spread enters the draws.
    paper_units : sequence, optional
        The paper's own per-unit numbers for a share or mean rule: the rule run on them gives ``paper_estimate`` and
        ``paper_verdict``.
    mei : float or tuple of float, optional
        The minimal effect of interest, stated before its result, where the paper's own number does not meet the
        criterion: power and false-fail rate are read there (``power_at`` "mei").  ``mei_source`` says why.
    units : {"shared", "redrawn"}
        What the seeds share: "shared" (the same sets and examples every seed) or "redrawn" (each seed resamples
        models it trains anew).
    """

    rule: ShareRule | MeanRule | GroupsRule | SimulatedRule | PointRule
    effect: float | tuple[float, ...] | None
    effect_source: str
    seeds: bool = False
    note: str = ""
    paper_units: tuple | None = None
    mei: float | tuple[float, ...] | None = None
    mei_source: str = ""
    units: str = "shared"

    def __post_init__(self) -> None:
        if self.units not in ("shared", "redrawn"):
            raise InputValidationError(f"units: expected 'shared' or 'redrawn', got {self.units!r}")
        if self.mei is not None and not self.mei_source.strip():
            raise InputValidationError("mei_source: a minimal effect of interest needs its reason")


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


def seed_sd_of(seeds: pd.DataFrame | None, cid: str, *, shared: bool = True) -> float:
    """The seed-to-seed SD of the claim's true value from its per-seed estimates in the seeds table.

    With shared units the seeds' estimates differ by their training alone: their SD.  With redrawn units part of
    their spread is each seed's own sampling: var(estimates) - mean((interval width / 3.92)²), floored at 0."""
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
    if shared:
        return float(np.std(est, ddof=1))
    return float(math.sqrt(max(0.0, np.var(est, ddof=1) - np.mean(within))))


def _worlds(claim: Claim, spec: Power) -> tuple[Any, str]:
    """The value the effect world takes and where it comes from: the paper's effect where it meets the criterion,
    else the minimal effect of interest, else none."""
    def ok(v: Any) -> bool:
        if v is None:
            return False
        x = np.atleast_1d(np.asarray(v, float))
        red = spec.rule.reduced(x) if isinstance(spec.rule, GroupsRule) else x[0]
        return meets(float(red), claim.threshold, claim.direction)

    if isinstance(spec.rule, SimulatedRule):
        return "world: effect", "paper"
    if ok(spec.effect):
        return spec.effect, "paper"
    if ok(spec.mei):
        return spec.mei, "mei"
    return None, ""


def _put(out: dict[str, Any], name: str, rate: Rate) -> None:
    out[name], out[f"{name}_draws"] = rate.value, rate.draws
    out[f"{name}_{'low' if name == 'power' else 'high'}"] = rate.low if name == "power" else rate.high


def simulate(claim: Claim, spec: Power, *, figures: str | Path, draws: int = DRAWS, seed: int = 0) -> dict[str, Any]:
    """Size, power, false-fail rate and the sample needed for ``claim``'s rule, its sample read from ``figures``.

    Returns one row of :data:`POWER_COLUMNS`.  ``draws`` is the number of simulated outcomes per world of the
    summary rules (a :class:`SimulatedRule` takes its own, fewer, draws: each one runs the claim's bootstrap)."""
    figures = Path(figures)
    rng = np.random.default_rng(seed)
    claims = pd.read_csv(figures / "claims.csv")
    seeds = pd.read_csv(figures / "claims_seeds.csv") if (figures / "claims_seeds.csv").exists() else None
    row = _row_of(claims, claim.id)
    shared = spec.units == "shared"
    seed_sd = seed_sd_of(seeds, claim.id, shared=shared) if spec.seeds else 0.0
    rule, t, d = spec.rule, claim.threshold, claim.direction
    value, at = _worlds(claim, spec)
    out = {"id": claim.id, "paper": claim.paper, "rule": rule.name, "threshold": t, "direction": d,
           "effect": spec.effect, "effect_source": spec.effect_source, "seed_sd": round(seed_sd, 6),
           "seeds_share_units": shared, "mei": "" if spec.mei is None else spec.mei, "power_at": at,
           "needed": "", "note": _note(spec)}  # fmt: skip
    nan = Rate.unknown()
    if isinstance(rule, PointRule):
        out.update(units=rule.units(), null="", needed=rule.needed)
        for name in ("size", "power", "false_fail"):
            _put(out, name, nan)
        return _finish(out)
    cells = _seeded(claim, row, seeds)
    if cells is not None:
        return _simulate_seeds(claim, spec, row, cells, out, figures, rng, draws, value)
    if isinstance(rule, SimulatedRule):
        return _simulated_row(claim, rule, out, rng, shared=True, units=rule.units(), sample="sample is")
    needs_row = isinstance(rule, MeanRule) or (isinstance(rule, ShareRule) and rule.n is None) or (
        isinstance(rule, GroupsRule) and rule.se is None)
    if row is None and needs_row:
        raise InputValidationError(f"claim {claim.id!r}: no published row in {figures / 'claims.csv'}; the rule's "
                                   "sample is read from it (or give it in the rule: ShareRule(n=...), "
                                   "GroupsRule(se=...))")  # fmt: skip
    out.update(_paper_decision(claim, spec))
    if isinstance(rule, (ShareRule, MeanRule)):
        if isinstance(rule, ShareRule):
            n, sd, label, step, limit = int(rule.n or row["setups"]), 0.0, "setups", (lambda m: m + 1), 400
            one = lambda v, m: rule.outcomes(claim, v, m, seed_sd, rng, draws)  # noqa: E731
        else:
            values = pd.read_csv(figures / "claims" / f"{row['notebook']}.{claim.id}.csv")[rule.column].dropna()
            n, sd, label, step = len(values), float(values.std(ddof=1)), "units", (lambda m: 2 * m)
            limit = 64 * n
            one = lambda v, m: rule.outcomes(claim, v, m, sd, seed_sd, rng, draws)  # noqa: E731
        null = t
        units = rule.units(n) + (f", unit sd {sd:.3g}" if isinstance(rule, MeanRule) else "")
        rates = lambda m: (one(t, m)[0], *_effect_rates(lambda v: one(v, m), value))  # noqa: E731
        start, m_label = n, lambda m: f"{m} {label}"
    else:
        theta = np.resize(np.atleast_1d(np.asarray(spec.effect, float)), int(rule.groups or np.size(spec.effect)))
        g = len(theta)
        se = rule.se if rule.se is not None else (
            (float(row["high"]) - float(row["low"])) / (2 * Z) * (math.sqrt(g) if rule.reduce == "mean" else 1.0))
        edge = _edge(claim, rule, theta)
        target = None if value is None else np.resize(np.atleast_1d(np.asarray(value, float)), g)

        def rates(scale: int) -> tuple[Rate, Rate, Rate]:
            s = se / math.sqrt(scale)
            size = rule.outcomes(claim, edge, s, seed_sd, rng, draws)[0]
            return (size, *_effect_rates(lambda v: rule.outcomes(claim, v, s, seed_sd, rng, draws), target))

        units, start, step, limit = rule.units(g) + f", se {se:.3g} per group", 1, (lambda m: 2 * m), 64
        m_label = lambda m: f"{m}x the units per group"  # noqa: E731
        null, out["effect"] = tuple(np.round(edge, 6)), tuple(np.round(theta, 6))
    size, power, false_fail = rates(start)
    out.update(units=units, null=null)
    for name, rate in (("size", size), ("power", power), ("false_fail", false_fail)):
        _put(out, name, rate)
    out["needed"] = _needed(lambda m: rates(m)[:2], start, m_label, step=step, limit=limit,
                            known=(size, power), seed_sd=seed_sd)  # fmt: skip
    return _finish(out)


def _simulated_row(claim: Claim, rule: SimulatedRule, out: dict[str, Any], rng: np.random.Generator, *,
                   shared: bool, units: str, sample: str) -> dict[str, Any]:  # fmt: skip
    """The row of a :class:`SimulatedRule` (over its ``seeds``): its own worlds give size, power and false-fail."""
    size, _ = rule.outcomes(claim, "null", rng, shared=shared)
    power, false_fail = rule.outcomes(claim, "effect", rng, shared=shared)
    out.update(units=units, null="worlds: " + ", ".join(rule.nulls), effect="world: effect")
    for name, rate in (("size", size), ("power", power), ("false_fail", false_fail)):
        _put(out, name, rate)
    out = _finish(out)
    if not out["decidable"]:
        out["needed"] = f"a rule or sample not simulated here (only the published {sample})"
    return out


def _effect_rates(outcomes: Callable[[Any], tuple[Rate, Rate]], value: Any) -> tuple[Rate, Rate]:
    """(power, false-fail) in the effect world; unknown where no effect world exists."""
    if value is None:
        return Rate.unknown(), Rate.unknown()
    return outcomes(value)


def _note(spec: Power) -> str:
    parts = [spec.note] if spec.note else []
    if spec.mei is not None:
        parts.append(f"minimal effect of interest {spec.mei}: {spec.mei_source}")
    return "; ".join(parts)


def _seeded(claim: Claim, row: pd.Series | None, seeds: pd.DataFrame | None) -> pd.DataFrame | None:
    """The per-seed outcomes ``claim`` is decided over (:func:`helpers.claims.seeds.decide_over_seeds`), if any: at
    least three seeds in the seeds table, published with the run (``seeds`` of its row), not superseded."""
    from helpers.claims.seeds import MIN_SEEDS, seed_cells

    if row is None or seeds is None or claim.superseded_by or claim.untested:
        return None
    published = pd.to_numeric(pd.Series([row.get("seeds")]), errors="coerce").fillna(1).iloc[0]
    hit = seeds[seeds["id"] == claim.id]
    if published < MIN_SEEDS or not len(hit):
        return None
    cells = seed_cells(hit.iloc[0])
    return cells if len(cells) >= MIN_SEEDS else None


def _seeds_outcomes(claim: Claim, est: np.ndarray, low: np.ndarray, high: np.ndarray, shared: bool,
                    bounds: tuple[float, float] | None) -> tuple[Rate, Rate]:  # fmt: skip
    """(holds, fails) of the seeds rule over rows of per-seed estimates and intervals (draws x S)."""
    from helpers.claims.seeds import seeds_interval, shared_seeds_interval

    if shared:
        _, lo, hi = shared_seeds_interval(est, low, high)
    else:
        _, lo, hi = seeds_interval(est, (high - low) / (2 * Z))
    if bounds is not None:
        lo, hi = np.clip(lo, *bounds), np.clip(hi, *bounds)
    n = len(est)
    return (Rate.of(holds_mask(lo, hi, claim.threshold, claim.direction).sum(), n),
            Rate.of(fails_mask(lo, hi, claim.threshold, claim.direction).sum(), n))  # fmt: skip


def _simulate_seeds(claim: Claim, spec: Power, row: pd.Series, cells: pd.DataFrame, out: dict[str, Any],
                    figures: Path, rng: np.random.Generator, draws: int, value: Any) -> dict[str, Any]:  # fmt: skip
    """Size, power, false-fail and seeds needed of the seeds rule over ``len(cells)`` seeds (module docstring)."""
    rule, t, s, shared = spec.rule, claim.threshold, len(cells), spec.units == "shared"
    seed_sd = float(out["seed_sd"])
    if isinstance(rule, SimulatedRule):
        return _simulated_row(claim, replace(rule, seeds=s), out, rng, shared=shared,
                              units=f"{s} seeds x {rule.units()}", sample="seeds are")  # fmt: skip
    out.update(_paper_decision(claim, spec))
    se = float(np.sqrt(np.mean(((cells["high"] - cells["low"]) / (2 * Z)) ** 2)))
    if isinstance(rule, ShareRule):
        n = int(rule.n or row["setups"])
        per_seed, effect = rule.units(n), value
        cp_low, cp_high = exact_bounds(n)

        def outcomes(p: float, m: int) -> tuple[Rate, Rate]:
            if shared:  # one draw of the setups for all seeds; each seed's training moves its count
                k0 = rng.binomial(n, min(max(p, 0.0), 1.0), (draws, 1))
                k = np.clip(np.rint(k0 + n * rng.normal(0, seed_sd, (draws, m))), 0, n).astype(int)
            else:
                k = rng.binomial(n, np.clip(p + rng.normal(0, seed_sd, (draws, m)), 0, 1))
            return _seeds_outcomes(claim, k / n, cp_low[k], cp_high[k], shared, (0.0, 1.0))
    else:
        theta = None if value is None else np.atleast_1d(np.asarray(value, float))
        effect = None if theta is None else float(rule.reduced(theta)) if isinstance(rule, GroupsRule) else float(
            theta[0])
        per_seed = rule.units(int(rule.groups or np.size(spec.effect))) if isinstance(rule, GroupsRule) else (
            rule.units(len(pd.read_csv(figures / "claims" / f"{row['notebook']}.{claim.id}.csv")[rule.column]
                           .dropna())))  # fmt: skip

        def outcomes(v: float, m: int) -> tuple[Rate, Rate]:
            units = rng.normal(0, se, (draws, 1)) if shared else rng.normal(0, se, (draws, m))
            y = v + units + rng.normal(0, seed_sd, (draws, m))
            return _seeds_outcomes(claim, y, y - Z * se, y + Z * se, shared, None)

    def rates(m: int) -> tuple[Rate, Rate, Rate]:
        return (outcomes(t, m)[0], *_effect_rates(lambda v: outcomes(float(v), m), effect))

    size, power, false_fail = rates(s)
    out.update(units=f"{s} seeds x {per_seed}, se {se:.3g} per seed" + ("" if shared else ", units redrawn"),
               null=t, effect=effect if effect is not None else spec.effect)  # fmt: skip
    for name, rate in (("size", size), ("power", power), ("false_fail", false_fail)):
        _put(out, name, rate)
    out["needed"] = _needed(lambda m: rates(m)[:2], s, lambda m: f"{m} seeds", step=lambda m: m + 1, limit=30,
                            known=(size, power), seed_sd=0.0)  # fmt: skip
    return _finish(out)


def _paper_decision(claim: Claim, spec: Power) -> dict[str, Any]:
    """The claim's rule on the paper's own per-unit numbers (share or mean rules with ``paper_units``)."""
    from helpers.claims.decision import bootstrap_decision, share_decision

    if spec.paper_units is None or isinstance(spec.rule, (GroupsRule, SimulatedRule)):
        return {"paper_estimate": float("nan"), "paper_verdict": ""}
    values = np.asarray(spec.paper_units, float)
    if isinstance(spec.rule, ShareRule):
        decision = share_decision(values.astype(bool))
    else:
        decision = bootstrap_decision(lambda i: float(values[i].mean()), len(values))
    return {"paper_estimate": round(decision.estimate, 6), "paper_verdict": claim.verdict(decision)}


def _needed(rates: Callable[[int], tuple[Rate, Rate]], start: int, label: Callable[[int], str], *,
            step: Callable[[int], int], limit: int, known: tuple[Rate, Rate], seed_sd: float = 0.0) -> str:  # fmt: skip
    """The smallest sample (from ``start``, growing by ``step`` up to ``limit``) with size <= 0.05 and power >= 0.8;
    "" when the current one has them, "none up to <limit>" when none does."""
    m, (size, power) = start, known
    if size.value <= MAX_SIZE and power.value >= MIN_POWER:
        return ""
    if not np.isfinite(power.value):
        return "n/a: the paper's own numbers do not meet the criterion"
    while m < limit:
        m = step(m)
        size, power = rates(m)
        if size.value <= MAX_SIZE and power.value >= MIN_POWER:
            return label(m)
    return f"none up to {label(limit)}" + (f": the seed spread ({seed_sd:.3g}) needs seeds as a resampling level"
                                            if seed_sd > 0 else "")


def _finish(out: dict[str, Any]) -> dict[str, Any]:
    for col in ("size", "size_high", "power", "power_low", "false_fail", "false_fail_high"):
        v = float(out[col])
        out[col] = round(v, 4) if np.isfinite(v) else float("nan")
    out["decidable"] = bool(np.isfinite(out["size_high"]) and out["size_high"] <= MAX_SIZE
                            and np.isfinite(out["power_low"]) and out["power_low"] >= MIN_POWER)  # fmt: skip
    return {k: out.get(k, "") for k in POWER_COLUMNS}


def power_table(claims: Iterable[tuple[Claim, Power]], *, figures: str | Path, draws: int = DRAWS,
                only: set[str] | None = None) -> pd.DataFrame:  # fmt: skip
    """One :func:`simulate` row per ``(claim, its Power)`` (``only``: those ids); a claim without a spec is an
    error (every rule's error rates are part of its verdict)."""
    rows = []
    for c, spec in claims:
        if spec is None:
            raise InputValidationError(f"claim {c.id!r}: no Power spec (every rule's error rates are part of its "
                                       "verdict)")  # fmt: skip
        if only is None or c.id in only:
            rows.append(simulate(c, spec, figures=figures, draws=draws, seed=_stable_seed(c.id)))
    return pd.DataFrame(rows, columns=POWER_COLUMNS)


def _stable_seed(text: str) -> int:
    """A seed from the whole claim id (CRC-32): the same id draws the same numbers on every machine."""
    import zlib

    return zlib.crc32(text.encode())
