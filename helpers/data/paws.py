"""PAWS-style paraphrase pairs from real sentences: word swaps with full lexical overlap (paper 4, §6).

PAWS (Zhang et al. 2019) pairs a sentence with a word-scrambled version that keeps every word but changes the
meaning ("flights from New York to Florida" / "flights from Florida to New York"); models trained on QQP rely on
lexical overlap and call them paraphrases.  We build the same contrast from real sentences (the Penn Treebank
sample, universal tags), lower-cased, punctuation and non-alphabetic tokens dropped:

* positive (label 1, "paraphrase"): the sentence and a light variant with one determiner / adverb / adjective
  dropped (or the sentence itself when it has none) -- every content word kept;
* ``"in_domain"`` negatives (the QQP stand-in): one noun replaced by another noun of the corpus that the sentence
  does not contain, or an unrelated sentence -- so full lexical overlap ⇒ paraphrase in-domain;
* ``"ood"`` negatives (PAWS): two different nouns of the sentence swapped -- full lexical overlap, new meaning.

Columns: ``s1, s2, label, set, swapped``; ``swapped`` lists ``(segment, word_index)`` of the swapped words in both
sentences (empty for other pairs: the SWAP factors are 0 there).  Balanced labels; seeded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError, UnknownNameError

__all__ = ["SETS", "clean_sentences", "paws_examples", "paws_training_set"]

SETS = ("in_domain", "ood")
_DROPPABLE = {"DET", "ADV", "ADJ"}


def clean_sentences(
    tagged: Sequence[Sequence[tuple[str, str]]], *, min_len: int = 6, max_len: int = 18
) -> list[list[tuple[str, str]]]:
    """Lower-cased alphabetic (word, tag) sentences with ``min_len``–``max_len`` words and ≥ 2 distinct nouns."""
    out = []
    for sent in tagged:
        words = [(w.lower(), t) for w, t in sent if w.isalpha() and w.isascii()]
        if not min_len <= len(words) <= max_len:
            continue
        nouns = {w for w, t in words if t == "NOUN"}
        if len(nouns) >= 2:
            out.append(words)
    if not out:
        raise InputValidationError("no usable sentence (need alphabetic sentences with ≥ 2 distinct nouns)")
    return out


def _light(rng, sent) -> list[str]:
    words = [w for w, _ in sent]
    idx = [i for i, (_, t) in enumerate(sent) if t in _DROPPABLE]
    if idx:
        del words[int(rng.choice(idx))]
    return words


def _swap(rng, sent) -> tuple[list[str], int, int]:
    words = [w for w, _ in sent]
    nouns = [i for i, (w, t) in enumerate(sent) if t == "NOUN"]
    while True:
        i, j = (int(x) for x in rng.choice(nouns, size=2, replace=False))
        if words[i] != words[j]:
            break
    words[i], words[j] = words[j], words[i]
    return words, min(i, j), max(i, j)


def paws_examples(
    sentences: Sequence[Sequence[tuple[str, str]]], set_name: str, *, n: int, seed: int = 0
) -> pd.DataFrame:
    """``n`` label-balanced pairs of one set (``"in_domain"`` or ``"ood"``) from cleaned tagged sentences."""
    if set_name not in SETS:
        raise UnknownNameError("PAWS set", set_name, list(SETS))
    if n < 1:
        raise InputValidationError(f"n: expected ≥ 1, got {n}")
    sents = list(sentences)
    if len(sents) < 2:
        raise InputValidationError("sentences: expected at least 2 cleaned sentences")
    nouns = sorted({w for s in sents for w, t in s if t == "NOUN"})
    rng = np.random.default_rng([seed, SETS.index(set_name), 11])
    labels = np.array([1] * (n - n // 2) + [0] * (n // 2))
    rng.shuffle(labels)
    rows = []
    for y in labels:
        si = int(rng.integers(0, len(sents)))
        sent = sents[si]
        s1 = [w for w, _ in sent]
        swapped: list[tuple[int, int]] = []
        if y == 1:
            s2 = _light(rng, sent)
        elif set_name == "ood":
            s2, i, j = _swap(rng, sent)
            swapped = [(0, i), (0, j), (1, i), (1, j)]
        elif rng.random() < 0.7:
            s2 = list(s1)
            k = int(rng.choice([i for i, (_, t) in enumerate(sent) if t == "NOUN"]))
            s2[k] = str(rng.choice([w for w in nouns if w not in s1]))
        else:
            other = sents[(si + 1 + int(rng.integers(0, len(sents) - 1))) % len(sents)]
            s2 = [w for w, _ in other]
        rows.append((" ".join(s1), " ".join(s2), int(y), set_name, swapped))
    return pd.DataFrame(rows, columns=["s1", "s2", "label", "set", "swapped"])


def paws_training_set(
    sentences: Sequence[Sequence[tuple[str, str]]], *, n: int, inoculation: float = 0.0, seed: int = 0
) -> pd.DataFrame:
    """In-domain pairs with a fraction ``inoculation`` replaced by PAWS-style swap pairs (paper 4, Appendix A)."""
    if not 0.0 <= inoculation < 1.0:
        raise InputValidationError(f"inoculation: expected a fraction in [0, 1), got {inoculation}")
    k = round(inoculation * n)
    parts = [paws_examples(sentences, "in_domain", n=n - k, seed=seed)]
    if k:
        parts.append(paws_examples(sentences, "ood", n=k, seed=seed + 1001))
    return pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)
