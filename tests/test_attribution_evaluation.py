"""Bootstrap pairwise ranking evaluation (paper 4, Appendix B) on cases with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.attribution import (
    baseline_scores,
    bootstrap_indices,
    guess_accuracy,
    informative_pairs,
    pairwise_ranking_accuracy,
    ranking_table,
)
from helpers.errors import InputValidationError, UnknownNameError


def test_perfect_and_reversed_scores():
    acc = [0.9, 0.5, 0.7]
    scores = np.array([[3.0] * 20, [1.0] * 20, [2.0] * 20])
    r = pairwise_ranking_accuracy(scores, acc)
    assert r.accuracy == 1.0 and len(r.pairs) == 3 and (r.pairs.accuracy == 1.0).all()
    assert pairwise_ranking_accuracy(scores, acc, higher_is_better=False).accuracy == 0.0


def test_ties_count_half_or_fail():
    scores = np.ones((2, 30))
    assert pairwise_ranking_accuracy(scores, [0.8, 0.6]).accuracy == 0.5
    assert pairwise_ranking_accuracy(scores, [0.8, 0.6], ties="fail").accuracy == 0.0


def test_known_bootstrap_probability():
    """Model A correct on all examples, model B on a fraction q: P(A ranked above B | 10 draws) = 1 − q^10
    (ties = B also all correct, counted half): accuracy = 1 − q^10 / 2."""
    n, k = 100, 80
    a = np.ones(n)
    b = np.r_[np.ones(k), np.zeros(n - k)]
    r = pairwise_ranking_accuracy(np.vstack([a, b]), [1.0, 0.8], n_boot=20000, size=10, seed=1)
    assert r.accuracy == pytest.approx(1 - 0.8**10 / 2, abs=0.01)


def test_equal_true_accuracy_pairs_are_skipped():
    r = pairwise_ranking_accuracy(np.random.default_rng(0).random((3, 10)), [0.5, 0.5, 0.7])
    assert len(r.pairs) == 2
    assert np.isnan(pairwise_ranking_accuracy(np.ones((2, 5)), [0.5, 0.5]).accuracy)


def test_bootstrap_indices_deterministic():
    a = bootstrap_indices(50, n_boot=500, size=10, seed=3)
    assert a.shape == (500, 10) and a.min() >= 0 and a.max() < 50
    assert np.array_equal(a, bootstrap_indices(50, n_boot=500, size=10, seed=3))


def test_baselines():
    probs = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.4, 0.6], [0.3, 0.7]]])
    y = [0, 0]
    acc, hib = baseline_scores("ACC", probs=probs, labels=y)
    assert hib and acc.tolist() == [[1, 0], [0, 0]]
    np.testing.assert_allclose(baseline_scores("CONF", probs=probs, labels=y)[0], [[0.9, 0.8], [0.6, 0.7]])
    np.testing.assert_allclose(baseline_scores("CONF-GT", probs=probs, labels=y)[0], [[0.9, 0.2], [0.4, 0.3]])
    rnd = baseline_scores("RANDOM", probs=probs, labels=y, seed=0)[0]
    assert rnd.shape == (2, 2)
    with pytest.raises(UnknownNameError):
        baseline_scores("NOPE", probs=probs, labels=y)
    with pytest.raises(InputValidationError):
        baseline_scores("ACC", probs=probs, labels=[0, 0, 1])


def test_random_baseline_near_half():
    acc = np.linspace(0.5, 0.9, 5)
    probs = np.full((5, 200, 2), 0.5)
    accs = []
    for seed in range(20):  # one seed's population carries a small fixed bias; its expectation is 1/2
        scores, hib = baseline_scores("RANDOM", probs=probs, labels=np.zeros(200, int), seed=seed)
        accs.append(pairwise_ranking_accuracy(scores, acc, higher_is_better=hib, seed=seed).accuracy)
    assert np.mean(accs) == pytest.approx(0.5, abs=0.03)


def test_guess():
    assert guess_accuracy([0.9, 0.5, 0.7], best=0) == pytest.approx(2.5 / 3)
    assert guess_accuracy([0.9, 0.5, 0.7], best=1) == pytest.approx(0.5 / 3)
    assert guess_accuracy([0.9, 0.8, 0.7, 0.6], best=0) == pytest.approx(4.5 / 6)
    with pytest.raises(InputValidationError):
        guess_accuracy([0.9, 0.5], best=2)
    with pytest.raises(InputValidationError):
        guess_accuracy([0.9, 0.5], best="largest")


@pytest.mark.parametrize("n, expected", [(3, 2.5 / 3), (4, 4.5 / 6), (5, 7 / 10)])
def test_guess_truly_best_reading(n, expected):
    """The paper's reading: the truly best model is guessed -> [(n-1) + C(n-1,2)/2] / C(n,2) = 83.3/75/70 %."""
    acc = np.random.default_rng(n).permutation(np.linspace(0.5, 0.9, n))
    assert guess_accuracy(acc, best="truly best") == pytest.approx(expected)
    assert guess_accuracy(acc, best=int(np.argmax(acc))) == pytest.approx(expected)


def test_informative_pairs_hand_computed():
    # n = 500, Agresti-Caffo: p~ = (x + 1) / 502 = .5, .51992, .69920
    # SE(.5, .51992) = sqrt(.25/502 + .24961/502) = 0.0316 -> 2 SE = 0.063 > 0.0199: a tie
    # SE(.5, .69920) = sqrt(.25/502 + .21032/502) = 0.0303 -> 2 SE = 0.061 < 0.1992: informative
    m = informative_pairs([0.5, 0.52, 0.7], 500)
    expected = np.array([[False, False, True], [False, False, True], [True, True, False]])
    np.testing.assert_array_equal(m, expected)
    assert not informative_pairs([1.0, 1.0], 50).any()  # equal accuracies: SE 0, never informative
    assert informative_pairs([0.5, 0.52], 20_000).all() == False  # noqa: E712  (diagonal stays False)
    assert informative_pairs([0.5, 0.52], 20_000)[0, 1]  # SE 0.005: now 0.02 > 2 SE
    # 4 errors vs 0 in 500: Wald SE = sqrt(.008 * .992 / 500) = .00398, 2 SE = .00797 < .008 would call it real;
    # Agresti-Caffo: p~ = 5/502, 1/502, SE = .00486, 2 SE = .0097 > .00797: a tie
    assert not informative_pairs([0.008, 0.0], 500)[0, 1]
    with pytest.raises(InputValidationError):
        informative_pairs([0.5, 1.2], 10)
    with pytest.raises(InputValidationError):
        informative_pairs([0.5, 0.6], 0)


def test_pair_mask_restricts_the_scored_pairs():
    acc = [0.9, 0.5, 0.7]
    scores = np.array([[3.0] * 20, [2.5] * 20, [2.0] * 20])  # right on (0,1), (0,2); wrong on (1,2)
    full = pairwise_ranking_accuracy(scores, acc, n_boot=10)
    assert full.accuracy == pytest.approx(2 / 3)
    mask = np.ones((3, 3), dtype=bool)
    mask[1, 2] = mask[2, 1] = False
    part = pairwise_ranking_accuracy(scores, acc, n_boot=10, pair_mask=mask)
    assert part.accuracy == 1.0 and len(part.pairs) == 2
    assert guess_accuracy(acc, best=1, pair_mask=mask) == pytest.approx(0.0 / 2 + 0.5 / 2)
    with pytest.raises(InputValidationError):
        pairwise_ranking_accuracy(scores, acc, pair_mask=np.ones((2, 2), dtype=bool))


def test_ranking_table_shares_samples():
    acc = [0.9, 0.6]
    s = np.random.default_rng(0).random((2, 40))
    summary, pairs = ranking_table({"A": (s, True), "B": (s, True), "C": (s, False)}, acc)
    a, b, c = summary.accuracy
    assert a == b and a + c == pytest.approx(1.0)
    assert set(pairs.method) == {"A", "B", "C"}


def test_bad_input():
    with pytest.raises(InputValidationError):
        pairwise_ranking_accuracy(np.ones((1, 5)), [0.5])
    with pytest.raises(InputValidationError):
        pairwise_ranking_accuracy(np.ones((2, 5)), [0.5])
    with pytest.raises(InputValidationError):
        pairwise_ranking_accuracy(np.ones((2, 5)), [0.5, 0.6], ties="coin")
    with pytest.raises(InputValidationError):
        ranking_table({"A": (np.ones((2, 5)), True), "B": (np.ones((2, 6)), True)}, [0.5, 0.6])
