"""MSGS-, HANS- and PAWS-style generators (paper 4, §5-6): determinism, balance, in-domain vs OOD features."""

from __future__ import annotations

import pandas as pd
import pytest

from helpers.data.hans import hans_examples, hans_training_set
from helpers.data.msgs import (
    ADJECTIVES,
    FEATURES,
    INOCULATION_MIXES,
    IRREGULAR,
    REGULAR,
    msgs_examples,
    msgs_training_set,
)
from helpers.data.paws import clean_sentences, paws_examples, paws_training_set
from helpers.errors import InputValidationError, UnknownNameError
from helpers.models.text import tokenize

IRR = {v[0] for v in IRREGULAR}
ING = {v[1] for v in IRREGULAR + REGULAR}


def _ling(feature: str, words: list[str]) -> bool:
    if feature == "morph":
        return any(w in IRR for w in words)
    if feature == "verb":
        return any(w in ING for w in words)  # not w.endswith("ing"): "king" is a noun
    return any(w in ADJECTIVES for w in words)


@pytest.mark.parametrize("feature", FEATURES)
def test_msgs_features_and_labels(feature):
    amb = msgs_examples(feature, n=201, kind="ambiguous", seed=0)
    ood = msgs_examples(feature, n=200, kind="ood", seed=0)
    assert amb.label.sum() == 101 and ood.label.sum() == 100
    for frame, kind in ((amb, "ambiguous"), (ood, "ood")):
        for text, label, ling, surf, crit in frame[
            ["text", "label", "ling", "surface", "critical"]
        ].itertuples(index=False):
            words = text.split()
            assert tokenize(text) == words
            assert _ling(feature, words) == bool(ling)
            assert ("the" in words) == bool(surf)
            assert 0 <= crit[1] < len(words)
            if kind == "ambiguous":  # both features predict the label
                assert ling == surf == label
            else:  # they disagree; the label follows the linguistic feature
                assert ling != surf and label == ling
    if feature == "morph":
        assert all(t.split()[c[1]] in IRR for t, c, y in ood[["text", "critical", "label"]].values if y == 1)
    if feature == "adject":
        assert all(
            t.split()[c[1]] in ADJECTIVES for t, c, y in ood[["text", "critical", "label"]].values if y
        )


@pytest.mark.parametrize("feature", FEATURES)
@pytest.mark.parametrize("kind", ["ambiguous", "inoc_L", "inoc_S", "ood"])
def test_msgs_the_never_in_the_critical_window(feature, kind):
    """The surface word "the" is never within ±1 word of the critical word (original MSGS test splits), in every
    split, so the window factor cannot sum the surface cue's own attribution."""
    frame = msgs_examples(feature, n=400, kind=kind, seed=5)
    n_the = 0
    for text, crit in frame[["text", "critical"]].itertuples(index=False):
        words = text.split()
        i = crit[1]
        assert "the" not in words[max(0, i - 1) : i + 2], (text, i)
        n_the += "the" in words
    assert n_the == int(frame["surface"].sum()) > 0  # the check is not vacuous


def test_msgs_deterministic_and_mixes():
    a = msgs_training_set("morph", n=500, mix="2%L+1%S", seed=3)
    b = msgs_training_set("morph", n=500, mix="2%L+1%S", seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert a.kind.value_counts().to_dict() == {"ambiguous": 485, "inoc_L": 10, "inoc_S": 5}
    s = a[a.kind == "inoc_S"]
    assert (s.label == s.surface).all() and (s.ling != s.surface).all()
    assert set(INOCULATION_MIXES) == {"none", "2%L", "2%S", "2%L+1%S", "1%L+2%S", "2%L+2%S"}
    assert not msgs_examples("verb", n=50, kind="ood", seed=1).equals(
        msgs_examples("verb", n=50, kind="ood", seed=2)
    )
    with pytest.raises(UnknownNameError):
        msgs_training_set("morph", n=10, mix="5%L")
    with pytest.raises(UnknownNameError):
        msgs_examples("tense", n=10, kind="ood")
    with pytest.raises(InputValidationError):
        msgs_examples("morph", n=0, kind="ood")


def _overlap(p: str, h: str) -> bool:
    return set(h.split()) <= set(p.split())


def test_hans_in_domain_overlap_predicts_entailment():
    d = hans_examples("in_domain", n=300, seed=0)
    assert d.label.sum() == 150
    assert all(_overlap(p, h) == bool(y) for p, h, y in d[["premise", "hypothesis", "label"]].values)
    for p, h in d[["premise", "hypothesis"]].values:
        assert tokenize(p) == p.split() and tokenize(h) == h.split()


@pytest.mark.parametrize("name", ["sub", "con"])
def test_hans_ood_full_overlap_both_labels(name):
    d = hans_examples(name, n=200, seed=0)
    assert d.label.sum() == 100
    for p, h, c in d[["premise", "hypothesis", "control"]].values:
        assert _overlap(p, h)  # the heuristic says "entailed" for every example → 50% accuracy
        if name == "sub":
            assert f" {h} " in f" {p} "  # contiguous subsequence
        for seg, i in c:
            assert seg == 0 and p.split()[i] in {"if", "unless", "whether", "or", "not", "since", "because",
                                                 "although", "hoped", "thought", "believed", "knew", "realized",
                                                 "forgot"}  # fmt: skip
    if name == "con":
        assert all(len(c) for c in d.control)
    pd.testing.assert_frame_equal(d, hans_examples(name, n=200, seed=0))


def test_hans_training_inoculation():
    t = hans_training_set(n=400, inoculation=0.05, seed=0)
    assert len(t) == 400 and t.set.value_counts().to_dict() == {"in_domain": 380, "sub": 10, "con": 10}
    with pytest.raises(InputValidationError):
        hans_training_set(n=10, inoculation=1.5)
    with pytest.raises(UnknownNameError):
        hans_examples("lexical", n=5)


SENTS = [
    [("The", "DET"), ("cat", "NOUN"), ("chased", "VERB"), ("a", "DET"), ("small", "ADJ"), ("dog", "NOUN"),
     ("in", "ADP"), ("the", "DET"), ("garden", "NOUN"), (".", ".")],
    [("Investors", "NOUN"), ("sold", "VERB"), ("the", "DET"), ("shares", "NOUN"), ("of", "ADP"), ("the", "DET"),
     ("company", "NOUN"), ("quickly", "ADV"), ("yesterday", "NOUN")],
    [("Short", "ADJ"), ("one", "NUM"), (".", ".")],
]  # fmt: skip


def test_paws_pairs():
    sents = clean_sentences(SENTS)
    assert len(sents) == 2 and sents[0][0] == ("the", "DET")
    ood = paws_examples(sents, "ood", n=40, seed=0)
    ind = paws_examples(sents, "in_domain", n=40, seed=0)
    assert ood.label.sum() == 20 and ind.label.sum() == 20
    for s1, s2, y, sw in ood[["s1", "s2", "label", "swapped"]].values:
        a, b = s1.split(), s2.split()
        if y == 0:  # a swap: same multiset of words, different order, swapped words at the recorded places
            assert sorted(a) == sorted(b) and a != b
            (_, i), (_, j) = sw[0], sw[1]
            assert a[i] == b[j] and a[j] == b[i]
        else:
            assert set(b) <= set(a) and not sw
    for s1, s2, y in ind[["s1", "s2", "label"]].values:  # in-domain: full overlap ⇔ paraphrase
        assert (set(s2.split()) <= set(s1.split())) == bool(y)
    pd.testing.assert_frame_equal(ood, paws_examples(sents, "ood", n=40, seed=0))
    t = paws_training_set(sents, n=100, inoculation=0.1, seed=0)
    assert (t.set == "ood").sum() == 10
    with pytest.raises(InputValidationError):
        clean_sentences(SENTS[2:])
    with pytest.raises(UnknownNameError):
        paws_examples(sents, "qqp", n=4)
