"""Tagging as seq2seq: the most-frequent-tag baseline and token-level scores of a tag-sequence prediction.

A seq2seq POS "parser" maps a sentence to its tag sequence (paper 1's POS-WSJ / POS-Brown tasks).  Its sentence
exact match only means something next to the trivial tagger that gives every word the tag it carried most often
in training (words never seen get the most frequent tag overall), and next to token accuracy, which exact match
hides.  Both functions here work on whitespace-tokenised strings: ``"The dog barks"`` -> ``"DET NOUN VERB"``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from helpers.errors import InputValidationError

__all__ = ["MostFrequentTagger", "tagging_scores", "tag_dictionary", "position_tags"]


def _word_tag_counts(sentences: Sequence[str], tags: Sequence[str], *, key=None) -> dict[str, Counter]:
    """``{key(word): Counter(tag)}`` over aligned sentences and tag sequences (one tag per word, checked)."""
    if len(sentences) != len(tags) or not len(sentences):
        raise InputValidationError(
            f"sentences/tags: expected equal, non-zero lengths, got {len(sentences)} and {len(tags)}"
        )
    counts: dict[str, Counter] = defaultdict(Counter)
    for i, (s, t) in enumerate(zip(sentences, tags)):
        words, ts = s.split(), t.split()
        if len(words) != len(ts):
            raise InputValidationError(f"sentence {i}: {len(words)} words but {len(ts)} tags (expected one tag per word)")
        for w, tag in zip(words, ts):
            counts[w if key is None else key(w)][tag] += 1
    return counts


class MostFrequentTagger:
    """Tag each word with its most frequent training tag (ties: the tag that is more frequent overall, then the
    alphabetically first); unseen words get the most frequent tag overall.

    Parameters
    ----------
    lowercase : bool, default False
        Count and look up words lower-cased.

    Attributes
    ----------
    word_tag_ : dict of str -> str
    default_tag_ : str
    """

    def __init__(self, lowercase: bool = False):
        self.lowercase = lowercase

    def _key(self, word: str) -> str:
        return word.lower() if self.lowercase else word

    def fit(self, sentences: Sequence[str], tags: Sequence[str]) -> MostFrequentTagger:
        """Count ``(word, tag)`` pairs over aligned sentences and tag sequences (one tag per word)."""
        counts = _word_tag_counts(sentences, tags, key=self._key)
        overall: Counter = sum(counts.values(), Counter())
        rank = {tag: (-n, tag) for tag, n in overall.items()}
        self.default_tag_ = min(overall, key=rank.__getitem__)
        self.word_tag_ = {w: min(c, key=lambda tag, c=c: (-c[tag], *rank[tag])) for w, c in counts.items()}
        return self

    def predict(self, sentences: Sequence[str]) -> list[str]:
        """One tag per word of every sentence."""
        if not hasattr(self, "word_tag_"):
            raise InputValidationError("MostFrequentTagger: call fit before predict")
        return [
            " ".join(self.word_tag_.get(self._key(w), self.default_tag_) for w in s.split())
            for s in sentences
        ]


def tagging_scores(predictions: Sequence[str], golds: Sequence[str]) -> dict[str, float]:
    """Sentence exact match, token accuracy and the share of predictions with the wrong number of tags.

    Token accuracy = correct tags / gold tags, comparing position by position (a prediction of the wrong length
    scores its overlapping positions; missing or extra tags count as wrong: the denominator is
    ``Σ max(len(pred), len(gold))``).

    Returns
    -------
    dict
        ``exact_match``, ``token_accuracy``, ``wrong_length`` (fractions in [0, 1]) and ``n`` (sentences).
    """
    if len(predictions) != len(golds) or not len(golds):
        raise InputValidationError(
            f"predictions/golds: expected equal, non-zero lengths, got {len(predictions)} and {len(golds)}"
        )
    exact, right, total, wrong_len = [], 0, 0, 0
    for p, g in zip(predictions, golds):
        ps, gs = p.split(), g.split()
        exact.append(ps == gs)
        right += sum(a == b for a, b in zip(ps, gs))
        total += max(len(ps), len(gs))
        wrong_len += len(ps) != len(gs)
    return {
        "exact_match": float(np.mean(exact)),
        "token_accuracy": right / max(1, total),
        "wrong_length": wrong_len / len(golds),
        "n": len(golds),
    }


def tag_dictionary(sentences: Sequence[str], tags: Sequence[str], *, min_count: int = 1) -> dict[str, tuple[str, ...]]:
    """The tags every word carried in training, for the words seen at least ``min_count`` times.

    A decoder limited to these tags for such words (:func:`position_tags`) cannot give ``.`` a noun tag or ``the``
    a verb tag — the constraint of dictionary-based taggers (Merialdo 1994); rarer words keep every tag, since a
    few occurrences do not show all of a word's tags.

    Returns
    -------
    dict of word -> sorted tuple of its training tags
    """
    if isinstance(min_count, bool) or not isinstance(min_count, (int, np.integer)) or min_count < 1:
        raise InputValidationError(f"min_count: expected an integer >= 1, got {min_count!r}")
    counts = _word_tag_counts(sentences, tags)
    return {w: tuple(sorted(c)) for w, c in counts.items() if c.total() >= min_count}


def position_tags(sentences: Sequence[str], dictionary: dict[str, tuple[str, ...]]) -> list[list[tuple[str, ...] | None]]:
    """Per sentence, per word: the admissible tags from ``dictionary`` (``None``: the word is not in it, any tag);
    the ``position_tokens`` of :func:`helpers.seq2seq.parser.beam_search`."""
    return [[dictionary.get(w) for w in s.split()] for s in sentences]
