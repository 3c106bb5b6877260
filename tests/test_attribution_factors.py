"""Factor functions on hand-made attribution vectors (paper 4, §5 and §6.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.attribution import FACTORS, factor_matrix, factor_values
from helpers.attribution.factors import (
    const_factor,
    first_tok,
    index_diff,
    max_diff,
    normalize,
    sum_diff,
    swap_avg,
    swap_max_diff,
    window_factor,
)
from helpers.errors import InputValidationError, UnknownNameError

# premise "the cat sat" <sep> hypothesis "the cat"
A = [0.1, 0.4, -0.2, 0.05, 0.3, -0.1]
SEG = [0, 0, 0, 0, 1, 1]
SP = [False, False, False, True, False, False]
TOK = ["the", "cat", "sat", "<sep>", "The", "cat"]


def test_normalize():
    np.testing.assert_allclose(normalize([1, -3]), [0.25, -0.75])
    np.testing.assert_allclose(normalize([0, 0]), [0, 0])
    np.testing.assert_allclose(normalize([2, 1], kind=None), [2, 1])
    with pytest.raises(InputValidationError):
        normalize([1], kind="l2")
    with pytest.raises(InputValidationError):
        normalize([])
    with pytest.raises(InputValidationError):
        normalize([np.nan])


def test_window_factor():
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert window_factor(a, 2) == 9.0  # 2 + 3 + 4
    assert window_factor(a, 0) == 3.0  # clipped: 1 + 2
    assert window_factor(a, 4) == 9.0  # 4 + 5
    assert window_factor(a, 2, width=0) == 3.0
    assert window_factor(a, 2, width=2) == 15.0
    with pytest.raises(InputValidationError):
        window_factor(a, 5)
    with pytest.raises(InputValidationError):
        window_factor(a, 1, width=-1)


def test_pair_factors_by_hand():
    assert max_diff(A, SEG, SP) == pytest.approx(0.4 - 0.3)
    assert sum_diff(A, SEG, SP) == pytest.approx((0.1 + 0.4 - 0.2) - (0.3 - 0.1))  # sep excluded
    # shared words: "the" (0.1 vs 0.3, case-insensitive) and "cat" (0.4 vs -0.1)
    assert index_diff(A, SEG, TOK, SP) == pytest.approx((0.1 - 0.3) + (0.4 + 0.1))
    assert first_tok(A, SEG, SP) == pytest.approx(0.05)
    # CLS at 0 and SEP at 3 in segment 0 (HF layout): the separator, not CLS
    assert first_tok([9.0, 1, 2, 7.0, 3], [0, 0, 0, 0, 1], [True, False, False, True, False]) == 7.0


def test_index_diff_repeated_and_no_shared():
    a = [1.0, 3.0, 0.0, 2.0]
    assert index_diff(a, [0, 0, 1, 1], ["x", "x", "y", "x"], None) == pytest.approx(2.0 - 2.0)
    assert index_diff(a, [0, 0, 1, 1], ["x", "x", "y", "z"], None) == 0.0


def test_control_and_swap_factors():
    a = [0.5, -0.2, 0.1, 0.0, -0.4, 0.3]
    assert const_factor(a, [0, 2]) == pytest.approx(0.6)
    assert const_factor(a, []) == 0.0
    assert swap_avg(a, [1, 4]) == pytest.approx(-0.3)
    assert swap_avg(a, []) == 0.0
    # S1 swapped {1, 2}: highest magnitude -0.2; S2 swapped {4, 5}: -0.4
    assert swap_max_diff(a, [1, 2], [4, 5]) == pytest.approx(-0.2 - (-0.4))
    assert swap_max_diff(a, [], [4]) == 0.0
    with pytest.raises(InputValidationError):
        swap_avg(a, [6])


def test_pair_factor_needs_two_segments():
    with pytest.raises(InputValidationError):
        max_diff([1.0, 2.0], [0, 0], None)
    with pytest.raises(InputValidationError):
        sum_diff([1.0, 2.0], [0], None)


def _frame():
    rows = []
    for model, scale in (("m1", 1.0), ("m2", 2.0)):
        for ex in range(2):
            for pos, (a, s, sp, t) in enumerate(zip(A, SEG, SP, TOK)):
                rows.append((ex, model, "ig", s, pos, t, sp, a * scale * (ex + 1), 0))
    return pd.DataFrame(
        rows,
        columns=["example", "model", "method", "segment", "position", "token", "special", "score", "target"],
    )


def test_factor_values_frame_and_normalisation():
    f = _frame()
    meta = pd.DataFrame(
        {
            "critical": [(0, 1), (1, 0)],
            "control": [[(0, 0)], []],
            "swapped": [[(0, 1), (1, 1)], [(0, 0), (1, 0)]],
        }
    )
    total = np.abs(A).sum()
    v = factor_values(f, "SUM-DIFF", normalize_kind="l1")
    # normalisation removes the model/example scale: all four values equal
    np.testing.assert_allclose(v.value, ((0.3) - (0.2)) / total)
    raw = factor_values(f, "SUM-DIFF", normalize_kind=None)
    assert raw.set_index(["model", "example"]).value.loc[("m2", 1)] == pytest.approx(0.1 * 4)
    w = factor_values(f, "IRREG", meta=meta, normalize_kind=None)
    # example 0: critical word 1 of segment 0 → window over positions 0..2
    assert w.set_index(["model", "example"]).value.loc[("m1", 0)] == pytest.approx(0.3)
    # example 1: word 0 of segment 1 = position 4 → positions 3..5, doubled scale
    assert w.set_index(["model", "example"]).value.loc[("m1", 1)] == pytest.approx(2 * 0.25)
    c = factor_values(f, "CONST", meta=meta, normalize_kind=None)
    assert c.set_index(["model", "example"]).value.loc[("m1", 0)] == pytest.approx(0.1)
    s = factor_values(f, "SWAP-MAX-DIFF", meta=meta, normalize_kind=None)
    assert s.set_index(["model", "example"]).value.loc[("m1", 0)] == pytest.approx(0.4 - (-0.1))
    m = factor_matrix(w, ["m2", "m1"])
    assert m.shape == (2, 2) and m[0, 0] == pytest.approx(2 * 0.3)


def test_factor_values_errors():
    f = _frame()
    with pytest.raises(UnknownNameError):
        factor_values(f, "NOPE")
    with pytest.raises(InputValidationError):
        factor_values(f, "CONST")  # needs meta
    with pytest.raises(InputValidationError):
        factor_values(f, "IRREG", meta=pd.DataFrame({"critical": [(0, 7), (0, 0)]}))
    with pytest.raises(InputValidationError):
        factor_matrix(factor_values(f, "MAX-DIFF"), ["m1", "m3"])


def test_directions_documented():
    assert FACTORS["IRREG"].higher_is_better and FACTORS["CONST"].higher_is_better
    assert not FACTORS["MAX-DIFF"].higher_is_better and not FACTORS["INDEX-DIFF"].higher_is_better


def test_word_column_maps_word_indices_to_every_piece():
    """With sub-word tokens (``word`` column) a (segment, word) pair selects all of the word's pieces."""
    from helpers.attribution.factors import token_positions

    g = pd.DataFrame({"position": range(7), "segment": [0, 0, 0, 0, 0, 1, 1],
                      "special": [True, False, False, False, True, False, True],
                      "word": [-1, 0, 1, 1, -1, 0, -1]})  # fmt: skip
    assert token_positions(g, [(0, 1)]) == [2, 3]
    assert token_positions(g, [(1, 0), (0, 0)]) == [5, 1]
    with pytest.raises(InputValidationError):
        token_positions(g, [(1, 1)])
    a = np.array([0.0, 0.1, 0.2, 0.3, 0.0, 0.4, 0.0])
    assert swap_avg(a, token_positions(g, [(0, 1), (1, 0)])) == pytest.approx(0.3)
