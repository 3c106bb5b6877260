"""How much an observed interval coverage on a few shifted sets can say: binomial checks of coverage targets.

An interval method evaluated on ``n`` held-out sets covers the true accuracy on ``k`` of them.  If the sets were
independent draws and the method's coverage were exactly ``level``, ``k`` would be Binomial(``n``, ``level``).  Two
consequences, computed here:

* :func:`coverage_confidence_interval` -- the exact (Clopper-Pearson) interval for the coverage behind ``k`` of
  ``n``: on 18 sets, 15 covered (0.83) is consistent with anything from 0.59 to 0.96 at 95 % confidence.
* :func:`calibrated_pass_probability` -- the probability that an interval whose coverage is *exactly* ``level``
  shows an empirical coverage of at least ``target`` on every family, :math:`\\prod_f
  P(\\mathrm{Bin}(n_f, \\text{level}) \\ge \\lceil \\text{target} \\cdot n_f \\rceil)`.  A target such as "≥ 0.85 at
  nominal 0.90 on every family" is missed by a perfectly calibrated interval whenever this is well below 1; meeting
  it reliably takes intervals that over-cover.

Sets of one shift family share a source model and a kind of shift, so they are not independent; positive
dependence spreads ``k`` further, so both numbers here are the optimistic (narrowest) case.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from scipy.stats import beta, binom

from helpers.errors import InputValidationError

__all__ = ["coverage_confidence_interval", "calibrated_pass_probability", "sets_needed"]


def _check_fraction(value: float, name: str, *, open_interval: bool = True) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise InputValidationError(f"{name}: expected a fraction, got {value!r}")
    v = float(value)
    ok = 0.0 < v < 1.0 if open_interval else 0.0 <= v <= 1.0
    if not ok:
        raise InputValidationError(f"{name}: expected a fraction in {'(0, 1)' if open_interval else '[0, 1]'}, got {value!r}")
    return v


def _check_count(value: int, name: str, *, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputValidationError(f"{name}: expected an integer count, got {value!r}")
    v = int(value)
    if v < minimum:
        raise InputValidationError(f"{name}: expected a count >= {minimum}, got {value!r}")
    return v


def sets_needed(n_sets: int, *, target: float = 0.85) -> int:
    """Smallest number of covered sets among ``n_sets`` whose fraction reaches ``target``: ⌈target · n⌉ (with a
    1e-9 tolerance, so 0.85 · 20 needs 17, not 18)."""
    n = _check_count(n_sets, "n_sets", minimum=1)
    t = _check_fraction(target, "target", open_interval=False)
    return max(0, math.ceil(t * n - 1e-9))


def coverage_confidence_interval(covered: int, n_sets: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson interval for the coverage probability behind ``covered`` of ``n_sets`` sets.

    Lower end ``Beta(α/2; k, n − k + 1)`` (0 when ``k = 0``), upper end ``Beta(1 − α/2; k + 1, n − k)`` (1 when
    ``k = n``), with ``α = 1 − confidence``; it contains the true coverage with probability ≥ ``confidence`` when
    the sets are independent.

    Returns
    -------
    (lower, upper) : tuple of float
        Fractions in [0, 1].
    """
    n = _check_count(n_sets, "n_sets", minimum=1)
    k = _check_count(covered, "covered", minimum=0)
    if k > n:
        raise InputValidationError(f"covered: expected at most n_sets = {n}, got {covered!r}")
    a = 1.0 - _check_fraction(confidence, "confidence")
    lo = 0.0 if k == 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def calibrated_pass_probability(
    n_sets: Mapping[str, int], *, level: float = 0.9, target: float = 0.85
) -> dict[str, float]:
    """Probability that an interval of exact coverage ``level`` reaches ``target`` on each family and on all.

    Per family ``f`` with ``n_f`` independent sets: ``P(Bin(n_f, level) ≥ ⌈target · n_f⌉)``; ``"all"``: their
    product (families independent).

    Parameters
    ----------
    n_sets : mapping
        Family name -> number of held-out sets (≥ 1).
    level, target : float, keyword-only
        The interval's true coverage and the empirical coverage the target asks for, fractions.

    Returns
    -------
    dict
        ``{family: probability, ..., "all": product}``.
    """
    if not isinstance(n_sets, Mapping) or not n_sets:
        raise InputValidationError(f"n_sets: expected a non-empty mapping family -> number of sets, got {n_sets!r}")
    if "all" in n_sets:
        raise InputValidationError("n_sets: 'all' is reserved for the product over families")
    p = _check_fraction(level, "level")
    out: dict[str, float] = {}
    for fam, n in n_sets.items():
        need = sets_needed(n, target=target)
        out[str(fam)] = float(binom.sf(need - 1, int(n), p))
    out["all"] = float(math.prod(out.values()))
    return out
