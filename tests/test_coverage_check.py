"""Binomial checks of interval-coverage targets (helpers.benchmark.coverage_check): hand cases, an independent
reference by exact binomial sums, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.benchmark.coverage_check import (
    calibrated_pass_probability,
    coverage_confidence_interval,
    sets_needed,
)
from helpers.errors import InputValidationError


def _tail_at_least(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def _bisect(f, lo: float = 0.0, hi: float = 1.0) -> float:
    """Root of an increasing f on [lo, hi]."""
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def test_sets_needed_is_the_ceiling_with_float_tolerance():
    assert sets_needed(20, target=0.85) == 17  # 0.85 * 20 is 17.000000000000004 in floating point
    assert sets_needed(18, target=0.85) == 16 and sets_needed(8, target=0.85) == 7
    assert sets_needed(12, target=0.85) == 11 and sets_needed(5, target=0.0) == 0


def test_clopper_pearson_hand_cases_and_exact_binomial_reference():
    lo, hi = coverage_confidence_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-12)
    lo, hi = coverage_confidence_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10), abs=1e-12)
    for k, n in [(15, 18), (7, 8), (89, 92), (1, 3)]:
        lo, hi = coverage_confidence_interval(k, n, confidence=0.95)
        # the ends solve P(X >= k | lo) = 0.025 and P(X <= k | hi) = 0.025, by exact sums
        ref_lo = _bisect(lambda p, k=k, n=n: _tail_at_least(k, n, p) - 0.025)
        ref_hi = _bisect(lambda p, k=k, n=n: 0.025 - (1 - _tail_at_least(k + 1, n, p)))
        assert lo == pytest.approx(ref_lo, abs=1e-9) and hi == pytest.approx(ref_hi, abs=1e-9)
        assert lo < k / n < hi
    assert coverage_confidence_interval(15, 18, confidence=0.5)[0] > coverage_confidence_interval(15, 18)[0]


def test_pass_probability_hand_cases_and_product():
    p = calibrated_pass_probability({"a": 2, "b": 1}, level=0.9, target=0.85)
    assert p["a"] == pytest.approx(0.81) and p["b"] == pytest.approx(0.9) and p["all"] == pytest.approx(0.729)
    p = calibrated_pass_probability({"imdb": 18}, level=0.9, target=0.85)  # needs 16 of 18
    assert p["imdb"] == pytest.approx(_tail_at_least(16, 18, 0.9), abs=1e-12)
    # an interval that covers more than the target asks passes more often; a target of 0 always passes
    assert calibrated_pass_probability({"x": 18}, level=0.99)["x"] > p["imdb"]
    assert calibrated_pass_probability({"x": 18}, target=0.0)["all"] == pytest.approx(1.0)


def test_pass_probability_matches_simulation():
    rng = np.random.default_rng(0)
    sizes = {"a": 12, "b": 8, "c": 18}
    sims = {f: rng.binomial(n, 0.9, size=200_000) >= sets_needed(n) for f, n in sizes.items()}
    p = calibrated_pass_probability(sizes)
    for f in sizes:
        assert p[f] == pytest.approx(sims[f].mean(), abs=0.005)
    assert p["all"] == pytest.approx(np.logical_and.reduce(list(sims.values())).mean(), abs=0.005)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: coverage_confidence_interval(5, 0), "n_sets: expected a count >= 1"),
        (lambda: coverage_confidence_interval(6, 5), "covered: expected at most n_sets = 5"),
        (lambda: coverage_confidence_interval(-1, 5), "covered: expected a count >= 0"),
        (lambda: coverage_confidence_interval(2.5, 5), "covered: expected an integer count"),
        (lambda: coverage_confidence_interval(True, 5), "covered: expected an integer count"),
        (lambda: coverage_confidence_interval(2, 5, confidence=95), r"confidence: expected a fraction in \(0, 1\)"),
        (lambda: coverage_confidence_interval(2, 5, confidence=float("nan")), "confidence: expected a fraction"),
        (lambda: calibrated_pass_probability({}), "n_sets: expected a non-empty mapping"),
        (lambda: calibrated_pass_probability([("a", 3)]), "n_sets: expected a non-empty mapping"),
        (lambda: calibrated_pass_probability({"all": 3}), "'all' is reserved"),
        (lambda: calibrated_pass_probability({"a": 0}), "n_sets: expected a count >= 1"),
        (lambda: calibrated_pass_probability({"a": 3}, level=1.0), r"level: expected a fraction in \(0, 1\)"),
        (lambda: calibrated_pass_probability({"a": 3}, target=1.5), r"target: expected a fraction in \[0, 1\]"),
        (lambda: calibrated_pass_probability({"a": 3}, level="0.9"), "level: expected a fraction"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(InputValidationError, match=match):
        call()
