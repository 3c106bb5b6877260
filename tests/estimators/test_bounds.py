"""Tests of helpers.estimators.bounds (paper 1: discriminator-ensemble bounds, Maxprob (Oracle))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import bounds as b
from helpers.estimators.base import Estimate

# A 4 x 3 vote matrix worked out by hand (1 = discriminator says Correct).
#
#            d0 d1 d2 | any (Ensemble_correct) | all (Ensemble_incorrect) | gold
#   ex0       1  1  1 |          1             |            1             |  1
#   ex1       1  0  1 |          1             |            0             |  0
#   ex2       0  0  0 |          0             |            0             |  0
#   ex3       1  1  0 |          1             |            0             |  1
#
# upper = 3/4, lower = 1/4, Mean_bounds = 1/2
# single accuracies (Eq. 1): d0 = 3/4, d1 = 2/4, d2 = 2/4 -> Mean_discrim = (3/4 + 1/2 + 1/2) / 3 = 7/12
# gold accuracy = 2/4 = 1/2 -> AE(Mean_bounds) = 0, AE(Mean_discrim) = 1/12, gold within [1/4, 3/4]
#
# Correct-Recall = TC / (TC + FI) over gold-correct {ex0, ex3}; Incorrect-Recall = TI / (TI + FC) over {ex1, ex2}
#   upper (any) : ex0 1, ex3 1 -> CR = 1;   ex1 1 (FC), ex2 0 (TI) -> IR = 1/2
#   lower (all) : ex0 1, ex3 0 -> CR = 1/2; ex1 0, ex2 0           -> IR = 1
#   d0 [1,1,0,1]: CR = 1,   IR = 1/2
#   d1 [1,0,0,1]: CR = 1,   IR = 1
#   d2 [1,1,0,0]: CR = 1/2, IR = 1/2
VOTES = np.array([[1, 1, 1], [1, 0, 1], [0, 0, 0], [1, 1, 0]])
GOLD = np.array([1, 0, 0, 1])


def test_hand_computed_bounds():
    np.testing.assert_array_equal(b.ensemble_correct(VOTES), [True, True, False, True])
    np.testing.assert_array_equal(b.ensemble_incorrect(VOTES), [True, False, False, False])
    np.testing.assert_allclose(b.discriminator_accuracies(VOTES), [0.75, 0.5, 0.5])
    assert b.upper_bound(VOTES) == pytest.approx(0.75)
    assert b.lower_bound(VOTES) == pytest.approx(0.25)
    assert b.mean_bounds(VOTES) == pytest.approx(0.5)
    assert b.mean_discrim(VOTES) == pytest.approx(7 / 12)


def test_hand_computed_table():
    t = b.bounds_table(VOTES, GOLD).set_index("estimate")
    assert list(t.index) == [
        "upper",
        "lower",
        "mean_bounds",
        "mean_discrim",
        "single_0",
        "single_1",
        "single_2",
        "gold",
    ]
    np.testing.assert_allclose(t["accuracy"], [0.75, 0.25, 0.5, 7 / 12, 0.75, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(
        t.loc[["upper", "lower", "single_0", "single_1", "single_2"], "correct_recall"], [1, 0.5, 1, 1, 0.5]
    )
    np.testing.assert_allclose(
        t.loc[["upper", "lower", "single_0", "single_1", "single_2"], "incorrect_recall"],
        [0.5, 1, 0.5, 1, 0.5],
    )
    # AE only for point estimates and singles, like the paper's tables ("-" for bounds)
    assert math.isnan(t.loc["upper", "abs_error"]) and math.isnan(t.loc["lower", "abs_error"])
    assert t.loc["mean_bounds", "abs_error"] == pytest.approx(0.0)
    assert t.loc["mean_discrim", "abs_error"] == pytest.approx(1 / 12)
    assert t.loc["single_0", "abs_error"] == pytest.approx(0.25)
    assert bool(t.loc["gold", "within_bounds"]) is True
    assert math.isnan(t.loc["mean_bounds", "correct_recall"])
    assert (t["n"] == 4).all()


def test_table_without_gold_has_no_recalls():
    t = b.bounds_table(VOTES)
    assert "gold" not in set(t["estimate"])
    assert t["correct_recall"].isna().all() and t["abs_error"].isna().all()


def test_estimator_contract():
    est = b.DiscriminatorBounds().fit().estimate(votes=VOTES)
    assert isinstance(est, Estimate)
    assert (est.lower, est.upper, est.accuracy, est.n) == (0.25, 0.75, 0.5, 4)
    assert est.details["mean_discrim"] == pytest.approx(7 / 12)
    assert est.details["n_discriminators"] == 3
    frame = est.to_frame()
    assert {"accuracy", "lower", "upper", "detail_mean_discrim", "detail_mean_bounds"} <= set(frame.columns)

    est2 = b.DiscriminatorBounds(point="mean_discrim").estimate(votes=VOTES)
    assert est2.accuracy == pytest.approx(7 / 12)
    assert (est2.lower, est2.upper) == (0.25, 0.75)
    assert b.DiscriminatorBounds().to_frame(votes=VOTES, gold=GOLD).equals(b.bounds_table(VOTES, GOLD))
    assert b.DiscriminatorBounds(point="mean_discrim").get_params() == {"point": "mean_discrim"}


@pytest.mark.parametrize("seed", range(20))
def test_invariants_random_votes(seed):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(1, 50), rng.integers(1, 7)
    votes = rng.random((n, k)) < rng.random()
    up, lo = b.upper_bound(votes), b.lower_bound(votes)
    singles = b.discriminator_accuracies(votes)
    assert lo <= singles.min() + 1e-12 and singles.max() <= up + 1e-12  # every single discriminator between
    assert lo <= b.mean_bounds(votes) <= up
    assert lo <= b.mean_discrim(votes) <= up
    # column order does not matter
    perm = rng.permutation(k)
    assert b.upper_bound(votes[:, perm]) == up and b.lower_bound(votes[:, perm]) == lo
    # adding a discriminator can only widen the bounds
    extra = np.column_stack([votes, rng.random(n) < 0.5])
    assert b.upper_bound(extra) >= up and b.lower_bound(extra) <= lo


def test_degenerate_votes():
    ones = np.ones((5, 3), dtype=int)
    assert b.upper_bound(ones) == b.lower_bound(ones) == b.mean_bounds(ones) == 1.0
    zeros = np.zeros((5, 3), dtype=bool)
    assert b.upper_bound(zeros) == b.lower_bound(zeros) == 0.0
    single = np.array([[1], [0], [1], [1]])
    assert b.upper_bound(single) == b.lower_bound(single) == b.mean_discrim(single) == 0.75


@pytest.mark.parametrize(
    ("votes", "match"),
    [
        (np.array([1, 0, 1]), r"votes: expected a 2-D .*reshape\(-1, 1\)"),
        (np.ones((2, 2, 2)), "votes: expected a 2-D"),
        (np.array([[1, 2], [0, 1]]), "votes: expected only 0/1"),
        (np.array([[1, 0.5], [0, 1]]), "votes: expected only 0/1"),
        (np.array([[1, np.nan], [0, 1]]), "votes: expected only 0/1"),
        (np.zeros((0, 3)), "votes: expected at least one value"),
        (np.array([["a", "b"]]), "votes: expected 0/1 or booleans"),
    ],
)
def test_bad_votes(votes, match):
    with pytest.raises(InputValidationError, match=match):
        b.upper_bound(votes)
    with pytest.raises(InputValidationError, match="votes"):
        b.DiscriminatorBounds().estimate(votes=votes)


def test_bad_gold_and_point():
    with pytest.raises(InputValidationError, match="gold: expected 4 values"):
        b.bounds_table(VOTES, [1, 0, 1])
    with pytest.raises(InputValidationError, match="gold: expected only 0/1"):
        b.bounds_table(VOTES, [1, 0, 2, 1])
    with pytest.raises(InputValidationError, match="point: expected one of"):
        b.DiscriminatorBounds(point="median").estimate(votes=VOTES)
    with pytest.raises(InputValidationError, match="point"):
        b.DiscriminatorBounds(point="median").fit()
    with pytest.raises(TypeError):
        b.DiscriminatorBounds().estimate(VOTES)


# ----------------------------------------------------------------------------------------- Maxprob (Oracle)
#
# confidence = [0.9, 0.8, 0.3, 0.6], gold = [1, 0, 0, 1]; "Correct" iff confidence > γ.
# Candidate γ: -inf, 0.3, 0.6, 0.8, 0.9
#   CR(γ)  (gold-correct confs 0.6, 0.9 above γ): 1,   1,   1/2, 1/2, 0
#   IR(γ)  (gold-incorrect confs 0.3, 0.8 <= γ) : 0,   1/2, 1/2, 1,   1
#   acc(γ) (confs above γ, of 4)                : 1,   3/4, 1/2, 1/4, 0
CONF = np.array([0.9, 0.8, 0.3, 0.6])


def test_maxprob_oracle_hand_computed():
    # CR target 0.9 -> closest CR = 1 at γ in {-inf, 0.3}; ties -> smallest γ -> upper = acc(-inf) = 1
    # IR target 0.6 -> closest IR = 1/2 at γ in {0.3, 0.6}; ties -> largest γ -> lower = acc(0.6) = 1/2
    est = b.maxprob_oracle_bounds(CONF, GOLD, correct_recall_target=0.9, incorrect_recall_target=0.6)
    assert (est.upper, est.lower, est.accuracy) == (1.0, 0.5, 0.75)
    assert est.details["threshold_upper"] == -np.inf and est.details["threshold_lower"] == 0.6
    assert est.details["correct_recall_achieved"] == 1.0 and est.details["incorrect_recall_achieved"] == 0.5
    # targets exactly reachable: CR = 1/2 -> γ in {0.6, 0.8} -> smallest 0.6 -> upper 1/2;
    # IR = 1 -> γ in {0.8, 0.9} -> largest 0.9 -> lower 0
    est = b.maxprob_oracle_bounds(CONF, GOLD, correct_recall_target=0.5, incorrect_recall_target=1.0)
    assert (est.upper, est.lower) == (0.5, 0.0)


def test_maxprob_oracle_targets_from_votes():
    # VOTES give CR(upper) = 1 and IR(lower) = 1 (see the table above) -> upper = 1, lower = 0
    est = b.maxprob_oracle_bounds(CONF, GOLD, votes=VOTES)
    assert est.details["correct_recall_target"] == 1.0 and est.details["incorrect_recall_target"] == 1.0
    assert (est.upper, est.lower) == (1.0, 0.0)
    assert est.details["uses_gold_labels"] is True


@pytest.mark.parametrize("seed", range(5))
def test_maxprob_oracle_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 80
    conf = np.round(rng.random(n), 2)  # ties on purpose
    gold = rng.random(n) < conf  # confident outputs more often correct
    cr_t, ir_t = rng.random(), rng.random()
    est = b.maxprob_oracle_bounds(conf, gold, correct_recall_target=cr_t, incorrect_recall_target=ir_t)
    # brute force over all candidate thresholds with plain Python loops
    cands = [-np.inf, *sorted(set(conf.tolist()))]
    best_up, best_lo = None, None
    for gamma in cands:
        pred = conf > gamma
        cr = sum(p and g for p, g in zip(pred, gold)) / gold.sum()
        ir = sum((not p) and (not g) for p, g in zip(pred, gold)) / (~gold).sum()
        acc = pred.mean()
        if best_up is None or abs(cr - cr_t) < best_up[0] - 1e-15:
            best_up = (abs(cr - cr_t), acc)
        if best_lo is None or abs(ir - ir_t) <= best_lo[0] + 1e-15:
            best_lo = (abs(ir - ir_t), acc)
    assert est.upper == pytest.approx(best_up[1])
    assert est.lower == pytest.approx(best_lo[1])


def test_maxprob_oracle_bad_inputs():
    with pytest.raises(InputValidationError, match="gold: expected at least one Correct and one Incorrect"):
        b.maxprob_oracle_bounds(CONF, [1, 1, 1, 1], correct_recall_target=0.5, incorrect_recall_target=0.5)
    with pytest.raises(InputValidationError, match="give either votes or both targets"):
        b.maxprob_oracle_bounds(CONF, GOLD, votes=VOTES, correct_recall_target=0.5)
    with pytest.raises(InputValidationError, match="both are required"):
        b.maxprob_oracle_bounds(CONF, GOLD, correct_recall_target=0.5)
    with pytest.raises(InputValidationError, match="correct_recall_target: expected a recall in"):
        b.maxprob_oracle_bounds(CONF, GOLD, correct_recall_target=90, incorrect_recall_target=0.5)
    with pytest.raises(InputValidationError, match="confidence"):
        b.maxprob_oracle_bounds([0.9, np.nan, 0.3, 0.6], GOLD, votes=VOTES)
    with pytest.raises(InputValidationError, match="votes: expected 4 rows"):
        b.maxprob_oracle_bounds(CONF, GOLD, votes=VOTES[:3])
    with pytest.raises(InputValidationError, match="gold: expected 4 values"):
        b.maxprob_oracle_bounds(CONF, GOLD[:3], votes=VOTES)


# ------------------------------------------------------------------------------------ bracketed_gold_range
def test_bracketed_gold_range_hand_computed():
    # lower: false-Correct rate 1 - .9 = .1, false-Incorrect rate 1 - .8 = .2 -> g_min = .1 / (.1 + .2) = 1/3
    # upper: 1 - .6 = .4 and 1 - .95 = .05 -> g_max = .4 / (.4 + .05) = 8/9
    lo, hi = b.bracketed_gold_range(upper_cr=0.95, upper_ir=0.6, lower_cr=0.8, lower_ir=0.9)
    assert lo == pytest.approx(1 / 3) and hi == pytest.approx(8 / 9)
    # perfect sides put no limit; the hand-made 4 x 3 matrix above: upper CR 1, IR 1/2; lower CR 1/2, IR 1
    assert b.bracketed_gold_range(upper_cr=1.0, upper_ir=0.5, lower_cr=0.5, lower_ir=1.0) == (0.0, 1.0)
    assert b.bracketed_gold_range(upper_cr=1.0, upper_ir=1.0, lower_cr=1.0, lower_ir=1.0) == (0.0, 1.0)


@pytest.mark.parametrize("seed", range(20))
def test_bracketed_gold_range_agrees_with_the_bounds(seed):
    """On random votes the identity holds exactly: lower <= gold iff gold >= g_min, upper >= gold iff gold <= g_max."""
    rng = np.random.default_rng(seed)
    gold = rng.random(60) < rng.uniform(0.1, 0.9)
    gold[:2] = [True, False]
    votes = (rng.random((60, 4)) < np.where(gold[:, None], 0.8, 0.3)).astype(int)
    t = b.bounds_table(votes, gold).set_index("estimate")
    lo, hi = b.bracketed_gold_range(
        upper_cr=t.loc["upper", "correct_recall"], upper_ir=t.loc["upper", "incorrect_recall"],
        lower_cr=t.loc["lower", "correct_recall"], lower_ir=t.loc["lower", "incorrect_recall"],
    )
    g = gold.mean()
    assert (t.loc["lower", "accuracy"] <= g + 1e-12) == (g >= lo - 1e-12)
    assert (t.loc["upper", "accuracy"] >= g - 1e-12) == (g <= hi + 1e-12)


def test_bracketed_gold_range_nan_and_bad_input():
    lo, hi = b.bracketed_gold_range(upper_cr=float("nan"), upper_ir=0.5, lower_cr=0.5, lower_ir=0.9)
    assert math.isnan(hi) and lo == pytest.approx(0.1 / 0.6)
    with pytest.raises(InputValidationError, match="fraction, not percent"):
        b.bracketed_gold_range(upper_cr=97.0, upper_ir=0.5, lower_cr=0.5, lower_ir=0.9)
    with pytest.raises(InputValidationError, match="lower_ir"):
        b.bracketed_gold_range(upper_cr=0.9, upper_ir=0.5, lower_cr=0.5, lower_ir="0.9")
    with pytest.raises(InputValidationError, match="upper_ir"):
        b.bracketed_gold_range(upper_cr=0.9, upper_ir=True, lower_cr=0.5, lower_ir=0.9)
