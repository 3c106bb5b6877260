"""Text perturbations (paper 5 text meta-set): hand-computed cases, determinism, severity ordering, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.data.text_perturb import (
    FILLER_WORDS,
    char_typos,
    compose_text,
    filler_insertion,
    list_text_perturbations,
    local_shuffle,
    perturb,
    perturbation_parameter,
    random_text_composition,
    truncate,
    word_dropout,
)
from helpers.errors import InputValidationError, UnknownNameError

TEXTS = [
    "the film was a quiet and moving portrait of a family in crisis",
    "terrible acting , a boring plot and far too long",
    "",
    "ok",
]


def test_truncate_hand_computed():
    assert truncate(["a b c d e"], 0.4) == ["a b"]  # ceil(0.4 * 5) = 2
    assert truncate(["a b c d e"], 0.0) == ["a"]  # at least one word
    assert truncate(["a b c"], 1.0) == ["a b c"]
    assert perturb(["a b c d e f g h i j"], "truncate", 5) == ["a"]  # keep 0.1 -> 1 word


@pytest.mark.parametrize("name", list_text_perturbations())
def test_deterministic_and_seed_dependent(name):
    a = perturb(TEXTS, name, 4, seed=3)
    assert a == perturb(TEXTS, name, 4, seed=3)
    assert len(a) == len(TEXTS)
    assert a[2] == ""  # empty text stays empty
    if name != "truncate":
        assert perturb(TEXTS * 5, name, 4, seed=3) != perturb(TEXTS * 5, name, 4, seed=4)


@pytest.mark.parametrize("name", list_text_perturbations())
def test_never_empties_a_text(name):
    out = perturb(["a b c"] * 50, name, 5, seed=0)
    assert all(t.split() for t in out)


def test_zero_rates_are_identity():
    assert word_dropout(TEXTS, 0.0) == [" ".join(t.split()) for t in TEXTS]
    assert char_typos(TEXTS, 0.0) == [" ".join(t.split()) for t in TEXTS]
    assert local_shuffle(TEXTS, 1) == [" ".join(t.split()) for t in TEXTS]
    assert filler_insertion(TEXTS, 0.0) == [" ".join(t.split()) for t in TEXTS]


def test_local_shuffle_keeps_words_inside_their_window():
    words = [f"w{i}" for i in range(20)]
    out = local_shuffle([" ".join(words)], 5, seed=1)[0].split()
    assert sorted(out) == sorted(words)
    for start in range(0, 20, 5):
        assert set(out[start : start + 5]) == set(words[start : start + 5])


def test_word_dropout_rate_and_order():
    text = " ".join(f"w{i}" for i in range(2000))
    out = word_dropout([text], 0.35, seed=0)[0].split()
    assert abs(len(out) / 2000 - 0.65) < 0.04
    assert out == sorted(out, key=lambda w: int(w[1:]))  # order kept


def test_char_typos_change_one_letter_per_hit():
    out = char_typos(["abcdef"] * 200, 1.0, seed=0)
    assert all(abs(len(o) - 6) <= 1 and o != "" for o in out)
    assert sum(o != "abcdef" for o in out) > 150  # a swap of equal letters is impossible here: all differ


def test_filler_insertion_only_adds_filler_words():
    out = filler_insertion(["good movie"], 1.2, seed=0)[0].split()
    assert [w for w in out if w not in FILLER_WORDS] == ["good", "movie"]


@pytest.mark.parametrize("name", ["word_dropout", "truncate", "filler_insertion"])
def test_severity_monotone_in_length_change(name):
    text = [" ".join(f"w{i}" for i in range(300))]
    lengths = [len(perturb(text, name, s, seed=0)[0].split()) for s in range(1, 6)]
    diffs = np.diff(lengths)
    assert (diffs >= 0).all() if name == "filler_insertion" else (diffs <= 0).all()


def test_compose_and_random_composition():
    steps = [("char_typos", 2), ("word_dropout", 3)]
    assert compose_text(TEXTS, steps, seed=5) == compose_text(TEXTS, steps, seed=5)
    assert compose_text(TEXTS, [], seed=5) == TEXTS
    out, got = random_text_composition(
        TEXTS, n_ops=2, seed=7, names=["truncate", "local_shuffle", "char_typos"]
    )
    assert len(got) == 2 and len({n for n, _ in got}) == 2
    again, got_again = random_text_composition(
        TEXTS, n_ops=2, seed=7, names=["truncate", "local_shuffle", "char_typos"]
    )
    assert (out, got) == (again, got_again)


def test_bad_input():
    with pytest.raises(InputValidationError):
        perturb("a single string", "truncate", 1)
    with pytest.raises(InputValidationError):
        perturb([1, 2], "truncate", 1)
    with pytest.raises(UnknownNameError):
        perturb(TEXTS, "nope", 1)
    with pytest.raises(InputValidationError):
        perturbation_parameter("truncate", 6)
    with pytest.raises(InputValidationError):
        word_dropout(TEXTS, 1.5)
    with pytest.raises(InputValidationError):
        local_shuffle(TEXTS, 0)
    with pytest.raises(InputValidationError):
        random_text_composition(TEXTS, n_ops=3, names=["truncate", "char_typos"])
