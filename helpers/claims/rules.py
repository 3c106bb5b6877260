"""How each kind of claim rule is simulated: the outcome of a rule in a world where its quantity has a given value.

Every simulation counts both outcomes a verdict can certify: how often the rule's interval says **holds** and how
often it says **fails** (:func:`holds_mask`, :func:`fails_mask`), each as a :class:`Rate` with the draws behind it
and its Monte-Carlo interval (an exact sum has no Monte-Carlo error: ``draws`` 0).  :mod:`helpers.claims.power` runs
these in the null world (size), the world of the paper's effect (power, false-fail rate) and over seeds.

=================  ==================================================================================================
``ShareRule``      the share of ``n`` setups that meet a condition, its exact Clopper–Pearson interval
                   (:func:`helpers.claims.share_decision`); a draw is k ~ Binomial(n, p).
``MeanRule``       the mean of ``n`` per-unit values (a column of the claim's detail), its percentile bootstrap
                   (:func:`helpers.claims.bootstrap_decision`); a draw is ``n`` units N(mu, sd²).
``GroupsRule``     a max / min / mean over groups of group statistics that are means over many units, the stratified
                   bootstrap of :func:`helpers.claims.bootstrap_groups`; a group's estimate is drawn N(theta_g, se²)
                   and a replicate N(estimate_g, se²).
``SimulatedRule``  the claim's own ``decide`` on inputs drawn from ``world(rng, kind)`` (``kind`` "null" or
                   "effect"), for rules no summary captures.
``PointRule``      a count or reading without a sampling interval: no error rate exists.
=================  ==================================================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from helpers.claims.registry import Claim
from helpers.errors import InputValidationError

__all__ = ["Rate", "ShareRule", "MeanRule", "GroupsRule", "SimulatedRule", "PointRule", "holds_mask", "fails_mask",
           "exact_bounds", "meets"]  # fmt: skip


@dataclass(frozen=True)
class Rate:
    """A simulated rate: ``value`` = count / draws, or an exact probability (``draws`` 0).

    ``low`` / ``high`` are its 95 % Clopper–Pearson Monte-Carlo interval (the value itself when exact, NaN when
    unknown): decisions take the conservative end.

    >>> r = Rate.of(0, 72)
    >>> r.value, round(r.high, 4)
    (0.0, 0.0499)
    >>> Rate.exact(0.02).high
    0.02
    """

    value: float
    draws: int = 0

    @classmethod
    def of(cls, count: float, draws: int) -> Rate:
        return cls(float(count) / draws if draws else float("nan"), int(draws))

    @classmethod
    def exact(cls, value: float) -> Rate:
        return cls(float(value), 0)

    @classmethod
    def unknown(cls) -> Rate:
        return cls(float("nan"), 0)

    def _bounds(self) -> tuple[float, float]:
        if not np.isfinite(self.value):
            return float("nan"), float("nan")
        if self.draws == 0:
            return self.value, self.value
        from helpers.claims.decision import clopper_pearson

        return clopper_pearson(int(round(self.value * self.draws)), self.draws)

    @property
    def low(self) -> float:
        return self._bounds()[0]

    @property
    def high(self) -> float:
        return self._bounds()[1]

    def worst(self, other: Rate) -> Rate:
        """The larger of two rates (the size over several null worlds)."""
        if not np.isfinite(other.value) or (np.isfinite(self.value) and self.value >= other.value):
            return self
        return other


def holds_mask(low: np.ndarray, high: np.ndarray, threshold: float, direction: str) -> np.ndarray:
    """Vectorised :func:`helpers.claims.verdict` == "holds" (NaN bounds never hold)."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    ok = {">=": low >= threshold, ">": low > threshold, "<=": high <= threshold, "<": high < threshold}[direction]
    return ok & np.isfinite(low) & np.isfinite(high)


def fails_mask(low: np.ndarray, high: np.ndarray, threshold: float, direction: str) -> np.ndarray:
    """Vectorised :func:`helpers.claims.verdict` == "fails" (NaN bounds never fail)."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    bad = {">=": high < threshold, ">": high <= threshold, "<=": low > threshold, "<": low >= threshold}[direction]
    return bad & np.isfinite(low) & np.isfinite(high)


def exact_bounds(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The Clopper–Pearson 95 % interval of k / n for every k = 0..n (:func:`helpers.claims.clopper_pearson`)."""
    from scipy.stats import beta

    k = np.arange(n + 1)
    low = np.where(k == 0, 0.0, beta.ppf(0.025, np.maximum(k, 1), n - k + 1))
    high = np.where(k == n, 1.0, beta.ppf(0.975, k + 1, np.maximum(n - k, 1)))
    return low, high


def meets(value: float, threshold: float, direction: str) -> bool:
    """``value <direction> threshold``: whether a quantity of this value satisfies the criterion."""
    return {">=": value >= threshold, ">": value > threshold, "<=": value <= threshold, "<": value < threshold}[direction]


def _rates(low: np.ndarray, high: np.ndarray, claim: Claim) -> tuple[Rate, Rate]:
    n = int(np.size(low))
    return (Rate.of(holds_mask(low, high, claim.threshold, claim.direction).sum(), n),
            Rate.of(fails_mask(low, high, claim.threshold, claim.direction).sum(), n))  # fmt: skip


@dataclass(frozen=True)
class ShareRule:
    """Share of ``n`` setups with an exact binomial interval; ``n`` from the claim's published ``setups``."""

    n: int | None = None
    name = "share"

    def units(self, n: int) -> str:
        return f"{n} setups"

    def outcomes(self, claim: Claim, p: float, n: int, seed_sd: float, rng: np.random.Generator,
                 draws: int) -> tuple[Rate, Rate]:  # fmt: skip
        """(holds, fails) of one run at true share ``p``: exact Σ_k P(k) [verdict(k)] without a seed spread."""
        from scipy.stats import binom

        low, high = exact_bounds(n)
        if seed_sd <= 0:
            pk = binom.pmf(np.arange(n + 1), n, min(max(p, 0.0), 1.0))
            return (Rate.exact(float(np.sum(pk * holds_mask(low, high, claim.threshold, claim.direction)))),
                    Rate.exact(float(np.sum(pk * fails_mask(low, high, claim.threshold, claim.direction)))))  # fmt: skip
        k = rng.binomial(n, np.clip(p + rng.normal(0, seed_sd, draws), 0, 1))
        return _rates(low[k], high[k], claim)


@dataclass(frozen=True)
class MeanRule:
    """Mean of the per-unit values in ``column`` of the claim's detail, percentile bootstrap over the units."""

    column: str
    n_boot: int = 1000
    name = "mean"

    def units(self, n: int) -> str:
        return f"{n} units (rows of the detail)"

    def outcomes(self, claim: Claim, mu: float, n: int, sd: float, seed_sd: float, rng: np.random.Generator,
                 draws: int) -> tuple[Rate, Rate]:  # fmt: skip
        centre = mu + (rng.normal(0, seed_sd, (draws, 1)) if seed_sd > 0 else 0.0)
        units = centre + rng.normal(0, sd, (draws, n))
        counts = rng.multinomial(n, np.full(n, 1 / n), self.n_boot)  # one resample per row: n_boot x n counts
        reps = units @ counts.T / n  # (draws, n_boot) bootstrap means
        low, high = np.quantile(reps, [0.025, 0.975], axis=1)
        return _rates(low, high, claim)


@dataclass(frozen=True)
class GroupsRule:
    """``reduce`` ("max", "min", "mean") over ``groups`` group estimates, each a mean over many units (``of`` says
    which, and what the interval resamples); ``se`` per group from the published interval unless given."""

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

    def reduced(self, x: np.ndarray) -> np.ndarray:
        """The rule's reduction over the last axis."""
        return {"max": np.max, "min": np.min, "mean": np.mean}[self.reduce](x, axis=-1)

    def outcomes(self, claim: Claim, theta: np.ndarray, se: float, seed_sd: float, rng: np.random.Generator,
                 draws: int) -> tuple[Rate, Rate]:  # fmt: skip
        g = len(theta)
        shift = rng.normal(0, seed_sd, (draws, 1)) if seed_sd > 0 else 0.0
        est = theta[None, :] + shift + rng.normal(0, se, (draws, g))
        low, high = np.empty(draws), np.empty(draws)
        for start in range(0, draws, 250):  # chunks keep the replicates' array small
            part = est[start:start + 250]
            reps = self.reduced(part[:, None, :] + rng.normal(0, se, (len(part), self.n_boot, g)))
            low[start:start + 250], high[start:start + 250] = np.quantile(reps, [0.025, 0.975], axis=1)
        return _rates(low, high, claim)


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

    def outcomes(self, claim: Claim, kind: str, rng: np.random.Generator, *, shared: bool = True
                 ) -> tuple[Rate, Rate]:  # fmt: skip
        """(holds, fails) over draws of world ``kind``; for "null" the holds rate is the worst of the null worlds
        :attr:`nulls` (the claim false at the edge in several ways).  Over ``seeds`` > 1 seeds that share their
        units the seeds' outcomes are one draw of the world (a seed spread only widens the seeds rule's interval);
        with redrawn units each seed is an independent draw, decided by :func:`helpers.claims.seeds_decision`."""
        if kind == "null":
            rates = [self._outcomes(claim, k, rng, self.draws, shared) for k in self.nulls]
            holds = rates[0][0]
            for h, _ in rates[1:]:
                holds = holds.worst(h)
            return holds, rates[0][1]
        return self._outcomes(claim, kind, rng, self.effect_draws or self.draws, shared)

    def _outcomes(self, claim: Claim, kind: str, rng: np.random.Generator, draws: int, shared: bool
                  ) -> tuple[Rate, Rate]:  # fmt: skip
        if self.seeds > 1 and not shared:
            from helpers.claims.decision import verdict
            from helpers.claims.seeds import seeds_decision

            def one() -> str:
                ds = [claim.run(**self.world(rng, kind))[0] for _ in range(self.seeds)]
                d = seeds_decision([x.estimate for x in ds], [x.low for x in ds], [x.high for x in ds], shared=False)
                return verdict(d.low, d.high, claim.threshold, claim.direction)

            said = [one() for _ in range(draws)]
        else:
            said = [claim.run(**self.world(rng, kind))[1] for _ in range(draws)]
        return Rate.of(said.count("holds"), draws), Rate.of(said.count("fails"), draws)


@dataclass(frozen=True)
class PointRule:
    """A count or reading without a sampling interval (its interval is the point): no error rate can be given, so
    the claim is ``underpowered`` until its rule resamples its units."""

    units_text: str
    needed: str = "an interval over its units (the rule has none)"
    name = "point"

    def units(self, _: int = 0) -> str:
        return self.units_text
