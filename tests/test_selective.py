"""helpers.selective: hand-computed accuracy–coverage curves, AUC/AURC, paper-2 diagnostics, DiSCA/DiDMA/NiDMA."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.selective import (
    TOLERANCES,
    accuracy_at_coverage,
    accuracy_coverage_curve,
    auc,
    auc_failure_cases,
    aurc,
    computation_score_cost,
    computation_score_params,
    condense_curve,
    curve_area,
    didma,
    disca,
    disca_table,
    e_aurc,
    first_drop_threshold,
    fluctuations,
    maxprob,
    nidma,
    optimal_aurc,
    plateau,
    selective_risk,
    tail_accuracy,
    tail_inversion,
)

# Non-monotone curve (all confidences distinct):
#   confidence 0.95 0.90 0.80 0.70 0.60 0.55
#   correct       1    0    1    1    0    1
#   accuracy   1/1  1/2  2/3  3/4  3/5  4/6   at coverage 1/6 … 6/6
NM_CONF = [0.95, 0.90, 0.80, 0.70, 0.60, 0.55]
NM_CORR = [1, 0, 1, 1, 0, 1]


def test_non_monotone_curve_points_and_auc():
    c = accuracy_coverage_curve(NM_CONF, NM_CORR)
    np.testing.assert_allclose(c.coverage, np.arange(1, 7) / 6)
    np.testing.assert_allclose(c.accuracy, [1, 1 / 2, 2 / 3, 3 / 4, 3 / 5, 4 / 6])
    np.testing.assert_allclose(c.threshold, NM_CONF)
    # AUC = mean of the six prefix accuracies = (1 + .5 + .6667 + .75 + .6 + .6667) / 6 = 4.18333 / 6
    expected = (1 + 1 / 2 + 2 / 3 + 3 / 4 + 3 / 5 + 4 / 6) / 6
    assert auc(NM_CONF, NM_CORR) == pytest.approx(expected)
    assert aurc(NM_CONF, NM_CORR) == pytest.approx(1 - expected)
    assert auc(curve=c) == pytest.approx(expected)


def test_non_monotone_fluctuations_and_disca():
    # accuracy levels floored to 1 %: 1.00, 0.50, 0.66, 0.75, 0.60, 0.66 (every point is a change point)
    # increases: 0.50->0.66 (c1 .90, c2 .80): (d2-d1)/c = .16/.10 = 1.6
    #            0.66->0.75 (c1 .80, c2 .70): .09/.10 = 0.9
    #            0.60->0.66 (c1 .60, c2 .55): .06/.05 = 1.2
    # weights n-i+1 = 3, 2, 1 -> penalty = (3*1.6 + 2*0.9 + 1*1.2) / 6 = 7.8 / 6 = 1.3
    fl = fluctuations(NM_CONF, NM_CORR)
    assert fl.count == 3
    np.testing.assert_allclose(fl.d1, [0.50, 0.66, 0.60])
    np.testing.assert_allclose(fl.d2, [0.66, 0.75, 0.66])
    np.testing.assert_allclose(fl.c1, [0.90, 0.80, 0.60])
    np.testing.assert_allclose(fl.c2, [0.80, 0.70, 0.55])
    np.testing.assert_allclose(fl.coverage, [3 / 6, 4 / 6, 6 / 6])
    assert fl.penalty == pytest.approx(1.3)
    assert fl.magnitude == pytest.approx(0.16 + 0.09 + 0.06)
    # a: accuracy first < 1 at the 2nd point (threshold 0.90); b(0.95) is the same point.
    # DiSCA = (1/3)/0.9 + (1/3)/0.9 - (1/3)*1.3 = 0.740741 - 0.433333 = 0.307407
    r = disca(NM_CONF, NM_CORR, tolerance=0.95)
    assert (r.a, r.b, r.n_fluctuations) == (0.90, 0.90, 3)
    assert r.score == pytest.approx(2 / 3 / 0.9 - 1.3 / 3)
    # b(0.5): accuracy never goes below 0.5 (0.5 is not < 0.5) -> lowest confidence 0.55
    r50 = disca(NM_CONF, NM_CORR, tolerance=0.5)
    assert r50.b == 0.55
    assert r50.score == pytest.approx(1 / 3 / 0.9 + 1 / 3 / 0.55 - 1.3 / 3)


def test_raw_fluctuations_without_condensing():
    # decimals=None compares raw accuracies: same three increases here, d's are exact fractions
    fl = fluctuations(NM_CONF, NM_CORR, decimals=None)
    np.testing.assert_allclose(fl.d2 - fl.d1, [2 / 3 - 1 / 2, 3 / 4 - 2 / 3, 4 / 6 - 3 / 5])


def test_condensing_merges_points_in_same_level():
    # 200 correct then one wrong: accuracies 1, ..., 1, 200/201 = 0.995 -> level 0.99; then one correct
    # 201/202 = 0.99505 -> still level 0.99: a raw increase that the 1 % levels do not count.
    conf = np.linspace(1.0, 0.5, 202)
    corr = np.r_[np.ones(200), 0, 1]
    assert fluctuations(conf, corr, decimals=None).count == 1
    assert fluctuations(conf, corr).count == 0
    pts = condense_curve(accuracy_coverage_curve(conf, corr))
    np.testing.assert_allclose(pts.level, [1.0, 0.99])
    assert pts.coverage.tolist() == [1 / 202, 201 / 202]


def test_ties_enter_together_and_input_order_does_not_matter():
    # confidence 0.9 | 0.7 0.7 0.7 | 0.5 ; correct 1 | 1 0 0 | 1
    # blocks: cov .2 acc 1 ; cov .8 acc 2/4 ; cov 1 acc 3/5
    conf = np.array([0.9, 0.7, 0.7, 0.7, 0.5])
    corr = np.array([1, 1, 0, 0, 1])
    c = accuracy_coverage_curve(conf, corr)
    np.testing.assert_allclose(c.coverage, [0.2, 0.8, 1.0])
    np.testing.assert_allclose(c.accuracy, [1.0, 0.5, 0.6])
    assert c.answered.tolist() == [1, 4, 5]
    # AUC = .2*1 + .6*.5 + .2*.6 = 0.62
    assert auc(conf, corr) == pytest.approx(0.62)
    for perm in itertools.permutations(range(5)):
        p = list(perm)
        assert auc(conf[p], corr[p]) == pytest.approx(0.62)
        assert accuracy_coverage_curve(conf[p], corr[p]).accuracy.tolist() == c.accuracy.tolist()
    # selective risk: coverage .2 -> first block (risk 0); .21 or .5 -> the tie block must enter whole (risk .5)
    assert selective_risk(conf, corr, coverage=0.2) == 0.0
    assert selective_risk(conf, corr, coverage=0.21) == pytest.approx(0.5)
    assert selective_risk(conf, corr, coverage=0.5) == pytest.approx(0.5)
    assert selective_risk(conf, corr, coverage=1.0) == pytest.approx(0.4)
    assert accuracy_at_coverage(curve=c, coverage=0.8) == pytest.approx(0.5)
    # a: the tie block is the first point below 100 % -> 0.7; fluctuation .50 -> .60 between 0.7 and 0.5
    r = disca(conf, corr)
    assert r.a == 0.7 and r.n_fluctuations == 1
    assert r.third == pytest.approx((0.60 - 0.50) / 0.2 / 3)


def _brute_aurc(conf, corr):
    """Reference: for each distinct threshold t (high to low) the answered set is {conf >= t}; the risk of that
    set holds on the coverage interval added by t."""
    conf, corr = np.asarray(conf, float), np.asarray(corr, bool)
    n, total, prev_cov = len(conf), 0.0, 0.0
    for t in sorted(set(conf.tolist()), reverse=True):
        answered = [i for i in range(n) if conf[i] >= t]
        risk = sum(1 for i in answered if not corr[i]) / len(answered)
        cov = len(answered) / n
        total += (cov - prev_cov) * risk
        prev_cov = cov
    return total


@pytest.mark.parametrize("seed", range(6))
def test_aurc_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 40
    conf = np.round(rng.uniform(0.5, 1.0, n), 1 if seed % 2 else 3)  # odd seeds: many ties
    corr = rng.random(n) < conf
    assert aurc(conf, corr) == pytest.approx(_brute_aurc(conf, corr))
    assert auc(conf, corr) + aurc(conf, corr) == pytest.approx(1.0)
    assert e_aurc(conf, corr) >= -1e-12


def test_distinct_confidences_aurc_is_mean_prefix_risk():
    rng = np.random.default_rng(3)
    conf = rng.permutation(np.linspace(0.5, 1, 30))
    corr = rng.random(30) < 0.7
    order = np.argsort(-conf)
    risks = [1 - corr[order[: i + 1]].mean() for i in range(30)]
    assert aurc(conf, corr) == pytest.approx(np.mean(risks))


def test_perfect_model():
    # every answer correct: AUC 1, AURC 0, no fluctuation; a and b fall back to the lowest MaxProb 0.6
    conf, corr = [0.9, 0.8, 0.7, 0.6], [1, 1, 1, 1]
    assert auc(conf, corr) == 1.0 and aurc(conf, corr) == 0.0 and e_aurc(conf, corr) == 0.0
    r = disca(conf, corr, tolerance=0.9)
    assert (r.a, r.b, r.n_fluctuations, r.third) == (0.6, 0.6, 0, 0.0)
    assert r.score == pytest.approx(2 / 3 / 0.6)  # 1.1111
    assert first_drop_threshold(accuracy_coverage_curve(conf, corr), 1.0) == 0.6


def test_perfect_ranking_has_zero_e_aurc():
    # correct answers first: risks 0, 0, 1/3, 1/2 -> AURC = (1/3 + 1/2)/4 = 0.208333 = AURC*
    conf, corr = [0.9, 0.8, 0.7, 0.6], [1, 1, 0, 0]
    assert aurc(conf, corr) == pytest.approx((1 / 3 + 1 / 2) / 4)
    assert optimal_aurc(corr) == pytest.approx((1 / 3 + 1 / 2) / 4)
    assert e_aurc(conf, corr) == pytest.approx(0.0, abs=1e-12)
    # reversed ranking: risks 1, 1, 2/3, 1/2 -> AURC = 3.1667/4; E-AURC = (3.1667 - 0.8333)/4 = 0.58333
    assert e_aurc(conf, [0, 0, 1, 1]) == pytest.approx((1 + 1 + 2 / 3 + 1 / 2 - 1 / 3 - 1 / 2) / 4)
    # one block of ties for everything: risk 0.5 over all coverage
    assert aurc([0.7] * 4, corr) == pytest.approx(0.5)


def test_plateau_diagnostics():
    # confidence .99 .99 | .98 .98 | .97 .97 ; correct 1 1 | 1 0 | 1 0
    # curve: cov 1/3 acc 1 ; cov 2/3 acc 3/4 ; cov 1 acc 4/6
    conf = [0.99, 0.99, 0.98, 0.98, 0.97, 0.97]
    corr = [1, 1, 1, 0, 1, 0]
    p = plateau(conf, corr, min_coverage=0.5)
    assert p["confidence_range"] == pytest.approx(0.02)
    assert p["confidence_min"] == 0.97 and p["confidence_max"] == 0.99
    assert p["error_confidence_mean"] == pytest.approx(0.975)
    assert p["accuracy_range_tail"] == pytest.approx(3 / 4 - 4 / 6)
    assert p["confidence_range_tail"] == pytest.approx(0.01)
    assert np.isnan(plateau([0.9, 0.8], [1, 1])["error_confidence_mean"])


def test_c_floor_for_nearly_equal_maxprobs():
    # levels 1.00, 0.50, 0.66; the increase is between thresholds .9993 and .9990: c1-c2 = .0003 -> floored .001
    # penalty = (0.66-0.50)/0.001 = 160; DiSCA = 2/3/0.9993 - 160/3
    conf, corr = [0.9995, 0.9993, 0.9990], [1, 0, 1]
    fl = fluctuations(conf, corr)
    assert fl.c.tolist() == [0.001]
    assert fl.penalty == pytest.approx(160.0)
    assert disca(conf, corr).score == pytest.approx(2 / 3 / 0.9993 - 160 / 3)
    assert fluctuations(conf, corr, c_floor=0.0001).penalty == pytest.approx(0.16 / 0.0003)


def test_disca_weights_and_table():
    # only the first term: x=1 -> 1/a
    assert disca(NM_CONF, NM_CORR, x=1, y=0, z=0).score == pytest.approx(1 / 0.9)
    # the paper's x = y = z = 0.33 is accepted (sum 0.99)
    assert disca(NM_CONF, NM_CORR, x=0.33, y=0.33, z=0.33).score == pytest.approx(0.66 / 0.9 - 0.33 * 1.3)
    tab = disca_table({"m": (NM_CONF, NM_CORR)})
    assert list(tab.columns) == [f"<{t:.2f}" for t in TOLERANCES]
    assert tab.loc["m", "<0.95"] == pytest.approx(disca(NM_CONF, NM_CORR, tolerance=0.95).score)


@pytest.mark.parametrize("seed", range(4))
def test_disca_rows_non_decreasing_as_tolerance_falls(seed):
    # b(tau) is the first crossing below tau; a lower tau is crossed at the same point or later (lower MaxProb),
    # so y/b and DiSCA can only grow from "<0.95" to "<0.55" (as in every row of the paper's Table 2)
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, 300)
    corr = rng.random(300) < conf
    row = disca_table({"m": (conf, corr)}).loc["m"].to_numpy()
    assert np.all(np.diff(row) >= -1e-12)


def test_tail_inversion_hand_built():
    # A: wrong on its most confident answer, right on the other 9:
    #    accuracies 0, 1/2, 2/3, 3/4, 4/5, 5/6, 6/7, 7/8, 8/9, 9/10 -> AUC = 7.0710/10 = 0.70710
    # B: right on the first 3, wrong on the next 5, right on the last 2:
    #    accuracies 1, 1, 1, 3/4, 3/5, 3/6, 3/7, 3/8, 4/9, 5/10 -> AUC = 6.5972/10 = 0.65972
    # tail (coverage <= 0.3): A = (0 + 1/2 + 2/3)/3 = 0.3889 ; B = 1  -> inversion
    conf = np.linspace(0.99, 0.55, 10)
    a_corr = np.r_[0, np.ones(9)]
    b_corr = np.array([1, 1, 1, 0, 0, 0, 0, 0, 1, 1])
    ca, cb = accuracy_coverage_curve(conf, a_corr), accuracy_coverage_curve(conf, b_corr)
    acc_a = [0, 1 / 2, 2 / 3, 3 / 4, 4 / 5, 5 / 6, 6 / 7, 7 / 8, 8 / 9, 9 / 10]
    acc_b = [1, 1, 1, 3 / 4, 3 / 5, 3 / 6, 3 / 7, 3 / 8, 4 / 9, 5 / 10]
    t = tail_inversion(ca, cb, max_coverage=0.3)
    assert t["auc_a"] == pytest.approx(np.mean(acc_a)) and t["auc_b"] == pytest.approx(np.mean(acc_b))
    assert t["tail_a"] == pytest.approx((0 + 1 / 2 + 2 / 3) / 3) and t["tail_b"] == pytest.approx(1.0)
    assert t["inversion"]
    assert not tail_inversion(ca, cb, max_coverage=1.0)["inversion"]  # the full range is just the AUC
    assert tail_accuracy(ca, max_coverage=0.15) == pytest.approx((0 * 0.1 + 0.5 * 0.05) / 0.15)
    cases = auc_failure_cases({"A": (conf, a_corr), "B": (conf, b_corr)}, max_coverage=0.3)
    tail = cases[cases.kind == "tail"]
    assert tail[["model_a", "model_b"]].values.tolist() == [["A", "B"]]
    # A has 9 accuracy increases, B two (0.37 -> 0.44 -> 0.50): A also fails the fluctuation check
    assert "fluctuation" in set(cases.kind)
    assert cases.model_a.eq("A").all()  # B never has the higher AUC


def test_curve_area_partial():
    c = accuracy_coverage_curve(NM_CONF, NM_CORR)
    # (1/6, 3/6] covers points 2 and 3: (1/6)(1/2) + (1/6)(2/3)
    assert curve_area(c, lo=1 / 6, hi=3 / 6) == pytest.approx((1 / 2 + 2 / 3) / 6)
    assert curve_area(c, of="risk") == pytest.approx(aurc(curve=c))


def test_computation_didma_nidma():
    # Appendix B's example: optimal 1M parameters -> 2M scores 0.5, 500k scores 2
    np.testing.assert_allclose(computation_score_params([2e6, 5e5], optimal_params=1e6), [0.5, 2.0])
    assert computation_score_params(1e6) == 1.0
    assert computation_score_cost(0.02, reference_cost=0.01) == pytest.approx(0.5)
    assert didma(0.6, 0.5) == pytest.approx(0.55)
    assert didma(0.6, 2.0, p=0.8, q=0.2) == pytest.approx(0.48 + 0.4)
    assert nidma(0.55, 0.7) == pytest.approx(0.625)
    np.testing.assert_allclose(
        nidma(np.array([1.0, 0.0]), np.array([0.0, 1.0]), u=0.25, v=0.75), [0.25, 0.75]
    )


def test_maxprob():
    np.testing.assert_allclose(maxprob([[0.2, 0.8], [0.6, 0.4]]), [0.8, 0.6])


@pytest.mark.parametrize(
    "conf, corr, match",
    [
        ([0.9, np.nan], [1, 0], "finite"),
        ([0.9, 0.8], [1, 0, 1], "same length"),
        ([0.9, 0.8], [1, 2], "0/1"),
        ([[0.9, 0.8]], [1], "1-D"),
        ([], [], "at least 1"),
        ([0.9, 0.8], ["yes", "no"], "booleans"),
    ],
)
def test_bad_inputs(conf, corr, match):
    with pytest.raises(InputValidationError, match=match):
        accuracy_coverage_curve(conf, corr)


def test_bad_options():
    with pytest.raises(InputValidationError, match="positive"):
        disca([0.9, 0.0], [1, 0])
    with pytest.raises(InputValidationError, match="x \\+ y \\+ z = 1"):
        disca(NM_CONF, NM_CORR, x=0.5, y=0.5, z=0.5)
    with pytest.raises(InputValidationError, match=">= 0"):
        disca(NM_CONF, NM_CORR, x=1.5, y=-0.5, z=0.0)
    with pytest.raises(InputValidationError, match="tolerance"):
        disca(NM_CONF, NM_CORR, tolerance=1.5)
    with pytest.raises(InputValidationError, match="coverage"):
        selective_risk(NM_CONF, NM_CORR, coverage=0.0)
    with pytest.raises(InputValidationError, match="decimals"):
        fluctuations(NM_CONF, NM_CORR, decimals=-1)
    with pytest.raises(InputValidationError, match="c_floor"):
        fluctuations(NM_CONF, NM_CORR, c_floor=0)
    with pytest.raises(InputValidationError, match="not both"):
        auc(NM_CONF, NM_CORR, curve=accuracy_coverage_curve(NM_CONF, NM_CORR))
    with pytest.raises(InputValidationError, match="SelectiveCurve"):
        tail_accuracy((NM_CONF, NM_CORR))
    with pytest.raises(InputValidationError, match="lo, hi"):
        curve_area(accuracy_coverage_curve(NM_CONF, NM_CORR), lo=0.5, hi=0.5)
    with pytest.raises(InputValidationError, match="p \\+ q = 1"):
        didma(1.0, 1.0, p=0.9, q=0.9)
    with pytest.raises(InputValidationError, match="u \\+ v = 1"):
        nidma(1.0, 1.0, u=0.2, v=0.2)
    with pytest.raises(InputValidationError, match="n_params"):
        computation_score_params(0)
    with pytest.raises(InputValidationError, match="reference_cost"):
        computation_score_cost(1.0, reference_cost=-1)
    with pytest.raises(InputValidationError, match="kinds"):
        auc_failure_cases({"a": (NM_CONF, NM_CORR), "b": (NM_CONF, NM_CORR)}, kinds=("bogus",))
    with pytest.raises(InputValidationError, match="at least 2"):
        auc_failure_cases({"a": (NM_CONF, NM_CORR)})
