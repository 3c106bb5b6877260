"""Seeded text perturbations with five severities, for synthetic meta-sets of shifted text sets.

Paper 5 (Meta-Distribution Energy, Sec. 4.1 and App. A, "MNLI setup") builds its text meta-set from naturally
different corpora; here, as for images (CIFAR-10-C), a labelled test set is shifted synthetically by perturbations
that keep the label (sentiment) but make the input harder to read:

=================  =======================================================  ==================================
name               what it does                                             severity 1 … 5 parameter
=================  =======================================================  ==================================
word_dropout       deletes each word with probability p                     p = 0.1, 0.2, 0.35, 0.5, 0.7
char_typos         one typo (swap / delete / substitute / insert a letter)  p = 0.05, 0.1, 0.2, 0.35, 0.5
                   in each word with probability p
local_shuffle      shuffles words inside consecutive windows of w words     w = 2, 3, 5, 8, 15
truncate           keeps the first fraction f of the words                  f = 0.8, 0.6, 0.4, 0.25, 0.1
filler_insertion   inserts a neutral filler word after each word w.p. p     p = 0.1, 0.25, 0.5, 0.8, 1.2
=================  =======================================================  ==================================

Words are whitespace-separated tokens (punctuation stays attached).  Every function is deterministic given
``seed``: one ``numpy.random.Generator`` walks the texts in order.  A perturbation never returns an empty text
(at least one word is kept).

Examples
--------
>>> perturb(["a truly great film"], "truncate", 3)  # severity 3 keeps ceil(0.4 * 4) = 2 words
['a truly']
>>> perturb(["a truly great film"], "word_dropout", 1, seed=0) == perturb(["a truly great film"], "word_dropout", 1, seed=0)
True
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence

import numpy as np

from helpers.errors import InputValidationError, UnknownNameError

__all__ = [
    "TEXT_PERTURBATIONS",
    "FILLER_WORDS",
    "list_text_perturbations",
    "perturbation_parameter",
    "word_dropout",
    "char_typos",
    "local_shuffle",
    "truncate",
    "filler_insertion",
    "perturb",
    "compose_text",
    "random_text_composition",
]

FILLER_WORDS = ("the", "a", "and", "so", "then", "also", "just", "well", "really", "there")
_LETTERS = string.ascii_lowercase


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InputValidationError(
            "texts: expected a sequence of strings, got a single str (wrap it in a list)"
        )
    out = list(texts)
    bad = [type(t).__name__ for t in out if not isinstance(t, str)]
    if bad:
        raise InputValidationError(f"texts: expected strings, got {bad[0]}")
    return out


def _check_prob(p: float, name: str, *, upper: float = 1.0) -> float:
    p = float(p)
    if not (0.0 <= p <= upper):
        raise InputValidationError(f"{name}: expected a value in [0, {upper}], got {p!r}")
    return p


def _map_words(texts: list[str], seed: int | None, fn: Callable[[list[str], np.random.Generator], list[str]]):
    """``fn(words, rng) -> words`` on each text that has words (one generator, seeded once, in text order); texts
    without words come back unchanged."""
    rng = np.random.default_rng(seed)
    return [" ".join(fn(words, rng)) if (words := t.split()) else t for t in texts]


def word_dropout(texts: Sequence[str], p: float, *, seed: int | None = 0) -> list[str]:
    """Delete each word independently with probability ``p`` (at least one word is kept)."""
    texts, p = _check_texts(texts), _check_prob(p, "p")

    def drop(words, rng):
        keep = rng.random(len(words)) >= p
        if not keep.any():
            keep[rng.integers(len(words))] = True
        return [w for w, k in zip(words, keep) if k]

    return _map_words(texts, seed, drop)


def _typo(word: str, rng: np.random.Generator) -> str:
    letters = [i for i, c in enumerate(word) if c.isalpha()]
    if len(letters) < 2:
        return word
    op = int(rng.integers(4))
    i = letters[int(rng.integers(len(letters) - 1))]
    c = _LETTERS[int(rng.integers(26))]
    if op == 0:  # swap two adjacent characters
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:  # delete
        return word[:i] + word[i + 1 :]
    if op == 2:  # substitute
        return word[:i] + c + word[i + 1 :]
    return word[:i] + c + word[i:]  # insert


def char_typos(texts: Sequence[str], p: float, *, seed: int | None = 0) -> list[str]:
    """Give each word (with at least two letters) one random typo with probability ``p``."""
    texts, p = _check_texts(texts), _check_prob(p, "p")

    def typos(words, rng):
        hit = rng.random(len(words)) < p
        return [_typo(w, rng) if h else w for w, h in zip(words, hit)]

    return _map_words(texts, seed, typos)


def local_shuffle(texts: Sequence[str], window: int, *, seed: int | None = 0) -> list[str]:
    """Shuffle the words inside consecutive, non-overlapping windows of ``window`` words (1 = unchanged)."""
    texts = _check_texts(texts)
    if int(window) != window or window < 1:
        raise InputValidationError(f"window: expected a positive integer, got {window!r}")
    window = int(window)

    def shuffle(words, rng):
        starts = range(0, len(words), window)
        perm = np.concatenate([start + rng.permutation(min(window, len(words) - start)) for start in starts])
        return [words[i] for i in perm]

    return _map_words(texts, seed, shuffle)


def truncate(texts: Sequence[str], keep: float, *, seed: int | None = 0) -> list[str]:
    """Keep the first ``ceil(keep * n_words)`` words (at least one); ``seed`` is accepted and unused."""
    texts, keep = _check_texts(texts), _check_prob(keep, "keep")
    return _map_words(texts, seed, lambda words, rng: words[: max(1, int(np.ceil(keep * len(words))))])


def filler_insertion(texts: Sequence[str], p: float, *, seed: int | None = 0) -> list[str]:
    """After each word insert ``Poisson(p)`` neutral filler words (:data:`FILLER_WORDS`); ``p`` may exceed 1."""
    texts, p = _check_texts(texts), _check_prob(p, "p", upper=10.0)

    def insert(words, rng):
        pieces = []
        for w, c in zip(words, rng.poisson(p, len(words))):
            pieces.append(w)
            pieces.extend(FILLER_WORDS[j] for j in rng.integers(len(FILLER_WORDS), size=int(c)))
        return pieces

    return _map_words(texts, seed, insert)


TEXT_PERTURBATIONS: dict[str, tuple[Callable[..., list[str]], tuple]] = {
    "word_dropout": (word_dropout, (0.1, 0.2, 0.35, 0.5, 0.7)),
    "char_typos": (char_typos, (0.05, 0.1, 0.2, 0.35, 0.5)),
    "local_shuffle": (local_shuffle, (2, 3, 5, 8, 15)),
    "truncate": (truncate, (0.8, 0.6, 0.4, 0.25, 0.1)),
    "filler_insertion": (filler_insertion, (0.1, 0.25, 0.5, 0.8, 1.2)),
}


def list_text_perturbations() -> list[str]:
    """Names of the registered text perturbations."""
    return list(TEXT_PERTURBATIONS)


def perturbation_parameter(name: str, severity: int) -> float | int:
    """The parameter a perturbation uses at ``severity`` (1..5), see the module table."""
    if name not in TEXT_PERTURBATIONS:
        raise UnknownNameError("text perturbation", name, list(TEXT_PERTURBATIONS))
    if int(severity) != severity or not 1 <= severity <= 5:
        raise InputValidationError(f"severity: expected an integer in 1..5, got {severity!r}")
    return TEXT_PERTURBATIONS[name][1][int(severity) - 1]


def perturb(texts: Sequence[str], name: str, severity: int, *, seed: int | None = 0) -> list[str]:
    """Apply the perturbation ``name`` at ``severity`` (1..5) to every text, deterministically given ``seed``."""
    param = perturbation_parameter(name, severity)
    return TEXT_PERTURBATIONS[name][0](texts, param, seed=seed)


def compose_text(
    texts: Sequence[str], steps: Sequence[tuple[str, int]], *, seed: int | None = 0
) -> list[str]:
    """Apply several perturbations in order, e.g. ``[("char_typos", 2), ("word_dropout", 3)]``.

    Each step gets its own child seed of ``seed`` (``numpy.random.SeedSequence.spawn``).
    """
    out = _check_texts(texts)
    children = np.random.SeedSequence(seed).spawn(len(steps))
    for (name, severity), child in zip(steps, children):
        out = perturb(out, name, severity, seed=int(child.generate_state(1)[0]))
    return out


def random_text_composition(
    texts: Sequence[str],
    *,
    n_ops: int = 2,
    seed: int | None = 0,
    names: Sequence[str] | None = None,
    severities: Sequence[int] = (1, 2, 3, 4, 5),
) -> tuple[list[str], list[tuple[str, int]]]:
    """Apply ``n_ops`` distinct perturbations drawn at random (names and severities), as in the image meta-sets.

    Returns the perturbed texts and the list of ``(name, severity)`` steps applied.
    """
    pool = list(names) if names is not None else list_text_perturbations()
    for n in pool:
        perturbation_parameter(n, 1)
    if not 1 <= n_ops <= len(pool):
        raise InputValidationError(f"n_ops: expected a value in 1..{len(pool)}, got {n_ops}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(pool), size=n_ops, replace=False)
    steps = [(pool[i], int(rng.choice(list(severities)))) for i in chosen]
    return compose_text(texts, steps, seed=int(rng.integers(2**31))), steps
