"""MSGS-style generator: a linguistic feature vs the surface feature "the is in the sentence" (paper 4, §5).

Warstadt et al. (2020, "Learning which features matter") build ambiguous training data where a linguistic feature
and a surface feature both predict the label, and test data where they disagree.  We generate the three settings
paper 4 uses, each paired with the surface feature *"the" occurs in the sentence*:

* ``"morph"`` (MORPH): the main verb is an irregular past form ("drew") vs a regular one ("painted");
* ``"verb"`` (VERB): the main verb is progressive ("was drawing") vs simple past ("drew");
* ``"adject"`` (ADJECT): the sentence contains an adjective vs none.

Sentences follow ``DET [ADJ] NOUN VERB DET [ADJ] NOUN`` (lower-case words, whitespace separated, so that
:func:`helpers.models.text.tokenize` gives back the same words).  Kinds of examples (label 1 = positive):

* ``"ambiguous"``: (linguistic, surface) = (1, 1) → 1 or (0, 0) → 0 -- both features predict the label;
* ``"inoc_L"``: (1, 0) → 1 and (0, 1) → 0 -- favours the linguistic generalisation;
* ``"inoc_S"``: (1, 0) → 0 and (0, 1) → 1 -- favours the surface generalisation;
* ``"ood"``: (1, 0) → 1 and (0, 1) → 0 -- the features disagree; accuracy = rate of linguistic generalisation.

Inoculation mixes (paper 4, Appendix A): ``INOCULATION_MIXES`` maps none, 2%L, 2%S, 2%L+1%S, 1%L+2%S, 2%L+2%S
to the fractions of the training set replaced by ``inoc_L`` / ``inoc_S`` examples.

Every example carries ``critical = (0, word_index)``: the feature-critical word used by the window factor
(the main verb for MORPH/VERB; the adjective, or the noun where it would stand, for ADJECT).

Where "the" goes (every kind, training and test alike; :data:`THE_SLOTS`): never within ±1 word of the critical
word, so the window factor (critical word ±1, paper 4 §5) cannot sum the surface cue's own attribution.  In the
original MSGS test splits "the" sits on a determiner away from the critical word (the first clause's object or the
second clause's subject); our sentences have one clause, so:

* MORPH / VERB: on the subject's determiner (the object's determiner follows the verb directly);
* ADJECT: on the determiner of the noun phrase *without* the critical word (the adjective, or the noun where it
  would stand), which is at least two words away across the verb.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError, UnknownNameError

__all__ = ["FEATURES", "KINDS", "THE_SLOTS", "INOCULATION_MIXES", "msgs_examples", "msgs_training_set"]

FEATURES = ("morph", "verb", "adject")
KINDS = ("ambiguous", "inoc_L", "inoc_S", "ood")
INOCULATION_MIXES: dict[str, tuple[float, float]] = {
    "none": (0.0, 0.0),
    "2%L": (0.02, 0.0),
    "2%S": (0.0, 0.02),
    "2%L+1%S": (0.02, 0.01),
    "1%L+2%S": (0.01, 0.02),
    "2%L+2%S": (0.02, 0.02),
}

NOUNS = "dog cat doctor teacher child farmer pilot king queen girl boy baker student lawyer painter singer".split()
OBJECTS = "book apple car box letter picture ball cake song house chair horse".split()
ADJECTIVES = "big small happy old young tall quiet clever angry brave red green".split()
DETERMINERS = "a some every that this one my his".split()  # never "the"
# (irregular past, progressive)
IRREGULAR = [
    ("drew", "drawing"), ("ate", "eating"), ("wrote", "writing"), ("saw", "seeing"), ("took", "taking"),
    ("broke", "breaking"), ("found", "finding"), ("held", "holding"), ("bought", "buying"), ("caught", "catching"),
    ("chose", "choosing"), ("stole", "stealing"), ("threw", "throwing"), ("hid", "hiding"),
]  # fmt: skip
REGULAR = [
    ("painted", "painting"), ("cleaned", "cleaning"), ("watched", "watching"), ("visited", "visiting"),
    ("liked", "liking"), ("helped", "helping"), ("pushed", "pushing"), ("pulled", "pulling"),
    ("washed", "washing"), ("kicked", "kicking"), ("carried", "carrying"), ("touched", "touching"),
]  # fmt: skip

THE_SLOTS = {
    "morph": "subject determiner",
    "verb": "subject determiner",
    "adject": "determiner of the noun phrase without the critical word",
}
_LABEL = {
    "ambiguous": {(1, 1): 1, (0, 0): 0},
    "inoc_L": {(1, 0): 1, (0, 1): 0},
    "inoc_S": {(1, 0): 0, (0, 1): 1},
    "ood": {(1, 0): 1, (0, 1): 0},
}


def _check(feature: str, kind: str) -> None:
    if feature not in FEATURES:
        raise UnknownNameError("MSGS feature", feature, list(FEATURES))
    if kind not in KINDS:
        raise UnknownNameError("MSGS kind", kind, list(KINDS))


def _sentence(rng: np.random.Generator, feature: str, ling: int, surface: int) -> tuple[list[str], int]:
    """One sentence with the requested feature values; returns (words, critical word index).

    The surface word "the" is placed on a determiner at least two words away from the critical word, as in the
    original MSGS test splits (Warstadt et al., 2020), so that the ±1 window of the IRREG / VERB / ADJ factor
    never contains it (:data:`THE_SLOTS`).
    """
    # adjectives: the feature itself for ADJECT, irrelevant noise (p=0.3 each) otherwise
    if feature == "adject":
        adj_slot = int(rng.integers(0, 2)) if ling else -1
        adj1 = str(rng.choice(ADJECTIVES)) if adj_slot == 0 else None
        adj2 = str(rng.choice(ADJECTIVES)) if adj_slot == 1 else None
        crit_slot = adj_slot if ling else int(rng.integers(0, 2))
    else:
        adj1 = str(rng.choice(ADJECTIVES)) if rng.random() < 0.3 else None
        adj2 = str(rng.choice(ADJECTIVES)) if rng.random() < 0.3 else None
        crit_slot = -1  # the verb, between the two noun phrases
    # determiners: "the" iff surface, on the noun phrase away from the critical word
    the_slot = (1 - crit_slot) if feature == "adject" else 0
    d1, d2 = str(rng.choice(DETERMINERS)), str(rng.choice(DETERMINERS))
    if surface:
        d1, d2 = ("the", d2) if the_slot == 0 else (d1, "the")
    # verb
    if feature == "morph":
        verb = [str(rng.choice([v[0] for v in (IRREGULAR if ling else REGULAR)]))]
    elif feature == "verb":
        pool = IRREGULAR + REGULAR
        pair = pool[int(rng.integers(0, len(pool)))]
        verb = [str(rng.choice(["was", "is"])), pair[1]] if ling else [pair[0]]
    else:
        pool = IRREGULAR + REGULAR
        verb = [pool[int(rng.integers(0, len(pool)))][0]]
    subj = [d1] + ([adj1] if adj1 else []) + [str(rng.choice(NOUNS))]
    obj = [d2] + ([adj2] if adj2 else []) + [str(rng.choice(OBJECTS + NOUNS))]
    words = subj + verb + obj
    if feature == "adject":
        crit = (
            (1 if crit_slot == 0 else len(subj) + len(verb) + 1)
            if ling
            else (len(subj) - 1 if crit_slot == 0 else len(words) - 1)
        )
    else:
        crit = len(subj) + len(verb) - 1  # the (last) main-verb word: "drew" / "drawing"
    return words, crit


def msgs_examples(feature: str, *, n: int, kind: str, seed: int = 0) -> pd.DataFrame:
    """``n`` MSGS-style examples of one kind, label-balanced (n//2 of each label, the odd one positive).

    Returns
    -------
    DataFrame with columns ``text, label, ling, surface, kind, critical`` (``critical`` = ``(0, word_index)``).
    """
    _check(feature, kind)
    if n < 1:
        raise InputValidationError(f"n: expected ≥ 1, got {n}")
    rng = np.random.default_rng([seed, FEATURES.index(feature), KINDS.index(kind)])
    combos = list(_LABEL[kind].items())  # ((ling, surface), label)
    labels = np.array([1] * (n - n // 2) + [0] * (n // 2))
    rng.shuffle(labels)
    rows = []
    for y in labels:
        (ling, surf) = next(c for c, lab in combos if lab == y)
        words, crit = _sentence(rng, feature, ling, surf)
        rows.append((" ".join(words), int(y), int(ling), int(surf), kind, (0, int(crit))))
    return pd.DataFrame(rows, columns=["text", "label", "ling", "surface", "kind", "critical"])


def msgs_training_set(feature: str, *, n: int, mix: str, seed: int = 0) -> pd.DataFrame:
    """Ambiguous training data with an inoculation mix (paper 4, Appendix A), shuffled.

    ``round(frac_L · n)`` ``inoc_L`` and ``round(frac_S · n)`` ``inoc_S`` examples replace ambiguous ones.
    """
    if mix not in INOCULATION_MIXES:
        raise UnknownNameError("inoculation mix", mix, list(INOCULATION_MIXES))
    frac_l, frac_s = INOCULATION_MIXES[mix]
    n_l, n_s = round(frac_l * n), round(frac_s * n)
    parts = [msgs_examples(feature, n=n - n_l - n_s, kind="ambiguous", seed=seed)]
    if n_l:
        parts.append(msgs_examples(feature, n=n_l, kind="inoc_L", seed=seed + 1))
    if n_s:
        parts.append(msgs_examples(feature, n=n_s, kind="inoc_S", seed=seed + 2))
    out = pd.concat(parts, ignore_index=True)
    return out.sample(frac=1.0, random_state=seed).reset_index(drop=True)
