"""HANS-style NLI generator: lexical overlap ⇒ entailment in-domain, broken by subsequence / constituent sets.

McCoy et al. (2019, "Right for the wrong reasons") show NLI models adopt the heuristics *lexical overlap*,
*subsequence* and *constituent* ⇒ entailment; paper 4 (§6) ranks models on the HANS subsequence (HANS-SUB) and
constituent (HANS-CON) sets.  We generate, with the vocabulary of HANS (professions, simple past verbs):

* ``"in_domain"`` (the MNLI stand-in): entailed pairs whose hypothesis is made of premise words (conjunctions,
  "since/because/although" clauses, "knew that" complements) and non-entailed pairs whose hypothesis brings a new
  noun or verb -- so "every hypothesis word occurs in the premise" predicts entailment perfectly in-domain;
* ``"sub"`` (HANS-SUB): the hypothesis is a contiguous subsequence of the premise; entailed
  ("the N1 and the N2 V" → "the N2 V") or not ("the N1 near the N2 V" → "the N2 V", "the N1 that saw the N2 V"
  → "the N2 V");
* ``"con"`` (HANS-CON): the hypothesis is a full clause (constituent) of the premise; entailed under "since /
  because / although / knew that", not entailed under "if / unless / whether or not / hoped that / thought that".

Labels: 1 = entailment, 0 = non-entailment, balanced.  Columns: ``premise, hypothesis, label, set, template,
control`` where ``control`` lists ``(0, word_index)`` of the premise's control words (used by the CONST factor;
empty when there is none).  Sentences are lower-case words separated by spaces (commas are separate words), so
:func:`helpers.models.text.tokenize` returns exactly these words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError, UnknownNameError

__all__ = ["SETS", "hans_examples", "hans_training_set"]

SETS = ("in_domain", "sub", "con")
NOUNS = (
    "doctor lawyer actor senator artist banker student judge author manager tourist secretary athlete president "
    "scientist professor"
).split()
INTRANSITIVE = "slept danced ran waited arrived left laughed shouted stopped smiled".split()
TRANSITIVE = "saw helped called thanked believed recognized paid advised introduced supported".split()
ENTAIL_ADV = ["since", "because", "although"]
NONENTAIL_ADV = ["if", "unless", "whether or not"]
ENTAIL_VERB = ["knew", "realized", "forgot"]
NONENTAIL_VERB = ["hoped", "thought", "believed"]


def _np(rng, k, exclude=()):
    pool = [n for n in NOUNS if n not in exclude]
    return [str(x) for x in rng.choice(pool, size=k, replace=False)]


def _entailed_in_domain(rng) -> tuple[list[str], list[str], str, list[int]]:
    n1, n2, n3 = _np(rng, 3)
    v1, v2 = (str(x) for x in rng.choice(INTRANSITIVE, size=2, replace=False))
    t = int(rng.integers(0, 4))
    if t == 0:  # conjunction of subjects
        p = ["the", n1, "and", "the", n2, v1]
        h = ["the", n2 if rng.random() < 0.5 else n1, v1]
        return p, h, "conj_subj", []
    if t == 1:  # conjunction of clauses
        p = ["the", n1, v1, "and", "the", n2, v2]
        h = ["the", n1, v1] if rng.random() < 0.5 else ["the", n2, v2]
        return p, h, "conj_clause", []
    if t == 2:  # entailing adverbial clause
        adv = str(rng.choice(ENTAIL_ADV))
        p = [adv, "the", n1, v1, ",", "the", n2, str(rng.choice(TRANSITIVE)), "the", n3]
        return p, ["the", n1, v1], "adv_entail", [0]
    verb = str(rng.choice(ENTAIL_VERB))  # factive complement
    p = ["the", n2, verb, "that", "the", n1, v1]
    return p, ["the", n1, v1], "factive", [2]


def _nonentailed_in_domain(rng) -> tuple[list[str], list[str], str, list[int]]:
    p, h, template, control = _entailed_in_domain(rng)
    h = list(h)
    if rng.random() < 0.5:  # a noun absent from the premise
        h[1] = _np(rng, 1, exclude=set(p))[0]
    else:  # a verb absent from the premise
        h[-1] = str(rng.choice([v for v in INTRANSITIVE if v not in p]))
    return p, h, template + "_new_word", control


def _sub(rng, entailed: bool) -> tuple[list[str], list[str], str, list[int]]:
    n1, n2, n3 = _np(rng, 3)
    v1, v2 = (str(x) for x in rng.choice(INTRANSITIVE, size=2, replace=False))
    if entailed:
        if rng.random() < 0.5:
            return ["the", n1, "and", "the", n2, v1], ["the", n2, v1], "sub_conj", []
        return ["the", n1, v1, "and", "the", n2, v2], ["the", n1, v1], "sub_clause", []
    if rng.random() < 0.5:
        prep = str(rng.choice(["near", "behind", "beside"]))
        return ["the", n1, prep, "the", n2, v1], ["the", n2, v1], "sub_pp", []
    tv = str(rng.choice(TRANSITIVE))
    return ["the", n1, "that", tv, "the", n2, v1], ["the", n2, v1], "sub_relative", []


def _con(rng, entailed: bool) -> tuple[list[str], list[str], str, list[int]]:
    n1, n2, n3 = _np(rng, 3)
    v1 = str(rng.choice(INTRANSITIVE))
    if rng.random() < 0.5:
        adv = str(rng.choice(ENTAIL_ADV if entailed else NONENTAIL_ADV)).split()
        p = adv + ["the", n1, v1, ",", "the", n2, str(rng.choice(TRANSITIVE)), "the", n3]
        return p, ["the", n1, v1], "con_adverb", list(range(len(adv)))
    verb = str(rng.choice(ENTAIL_VERB if entailed else NONENTAIL_VERB))
    return ["the", n2, verb, "that", "the", n1, v1], ["the", n1, v1], "con_verb", [2]


def hans_examples(set_name: str, *, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` label-balanced examples of one set (``"in_domain"``, ``"sub"`` or ``"con"``), seeded."""
    if set_name not in SETS:
        raise UnknownNameError("HANS set", set_name, list(SETS))
    if n < 1:
        raise InputValidationError(f"n: expected ≥ 1, got {n}")
    rng = np.random.default_rng([seed, SETS.index(set_name), 7])
    labels = np.array([1] * (n - n // 2) + [0] * (n // 2))
    rng.shuffle(labels)
    rows = []
    for y in labels:
        if set_name == "in_domain":
            p, h, t, c = _entailed_in_domain(rng) if y else _nonentailed_in_domain(rng)
        elif set_name == "sub":
            p, h, t, c = _sub(rng, bool(y))
        else:
            p, h, t, c = _con(rng, bool(y))
        rows.append((" ".join(p), " ".join(h), int(y), set_name, t, [(0, i) for i in c]))
    return pd.DataFrame(rows, columns=["premise", "hypothesis", "label", "set", "template", "control"])


def hans_training_set(*, n: int, inoculation: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """In-domain training data with a fraction ``inoculation`` replaced by HANS-style examples (half SUB, half CON).

    Inoculation (Liu et al. 2019; paper 4, §4.1 and Appendix A) uses examples from separate seeds than the OOD
    evaluation sets.
    """
    if not 0.0 <= inoculation < 1.0:
        raise InputValidationError(f"inoculation: expected a fraction in [0, 1), got {inoculation}")
    k = round(inoculation * n)
    parts = [hans_examples("in_domain", n=n - k, seed=seed)]
    if k:
        parts.append(hans_examples("sub", n=k - k // 2, seed=seed + 1001))
        parts.append(hans_examples("con", n=k // 2, seed=seed + 1002))
    return pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)
