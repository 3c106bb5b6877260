"""Task definitions for paper 1's reproduction: training pairs, dev pairs and labelled ID / OOD test sets.

Each task is a seq2seq problem with string ``(input, output)`` pairs (whitespace-tokenised):

* ``scan`` (Lake & Baroni 2018): ID = SCAN simple split; OOD = the length split's and the add-primitive-jump
  split's test sets.  The SCAN splits are different partitions of the same 20,910 commands, so a parser trained on
  the simple split's training set would have *seen* many OOD test commands.  We therefore train (and test ID) only
  on commands that are in the training part of **all three** splits (output length ≤ 22 actions and ``jump``
  only as a primitive), which keeps both OOD test sets disjoint from training.
* ``cogs`` (Kim & Linzen 2020; variable-free LFs of Li et al. 2023): ID = COGS test; OOD = the COGS
  generalization set (21 categories) and the SLOG generalization set (17 categories, decrypted in memory).
* ``pos`` (paper 1's POS-WSJ / POS-Brown): POS tagging as seq2seq (sentence -> tag sequence), universal tagset
  (Petrov et al. 2012).  Train / dev / ID test = disjoint parts of the NLTK WSJ sample; OOD = Brown (mapped from
  Brown tags); second ID-like set = UD English-EWT test (its Penn XPOS tags mapped with the same en-ptb map; a
  different genre, web text, so it is a mild domain shift rather than strictly ID).

Subsampling is seeded; every set is a list of ``(input, output)`` tuples.  Training-side data (train, dev) and
each test set draw from their own random streams (``[seed, 0]`` and ``[seed, 1, crc32(set name)]``), so adding or
removing a test set never changes the training data.

No test label reaches training: the decoding budget ``max_new_tokens`` (used when mining the discriminators'
negatives and decoding dev) comes from the train and dev outputs only; a test set is decoded with
:meth:`Seq2SeqTask.decode_budget`, which scales the training-side output/input length ratio by the test *inputs*.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from helpers.errors import InputValidationError

__all__ = ["Seq2SeqTask", "load_task", "TASKS", "render_scan_output"]

TASKS = ("scan", "cogs", "pos")

Pairs = list[tuple[str, str]]


@dataclass
class Seq2SeqTask:
    """Training, dev and test sets of one task.

    Attributes
    ----------
    name : str
    train, dev : list of (input, output)
    test_sets : dict of set name -> list of (input, output)
    shift : dict of set name -> "ID" or "OOD"
    max_new_tokens : int
        Training-side decoding budget: 2 + the longest train / dev output (in tokens).  Test gold outputs never
        enter it.
    output_per_input : float or None
        Largest output/input length ratio (tokens per input word) over train and dev; with it,
        :meth:`decode_budget` lets a test set with longer inputs decode longer outputs.
    """

    name: str
    train: Pairs
    dev: Pairs
    test_sets: dict[str, Pairs]
    shift: dict[str, str]
    max_new_tokens: int
    info: dict = field(default_factory=dict)
    output_per_input: float | None = None

    def decode_budget(self, inputs: Sequence[str]) -> int:
        """Decoding budget for a set with these inputs: ``max(max_new_tokens, 2 + ⌈r · longest input⌉)`` with r =
        :attr:`output_per_input` (inputs only: no gold output is read)."""
        if self.output_per_input is None or not inputs:
            return self.max_new_tokens
        longest = max(len(x.split()) for x in inputs)
        return max(self.max_new_tokens, 2 + math.ceil(self.output_per_input * longest))

    def sizes(self) -> dict[str, int]:
        """Number of pairs in every part."""
        return {
            "train": len(self.train),
            "dev": len(self.dev),
            **{k: len(v) for k, v in self.test_sets.items()},
        }


_SCAN_SHORT = {
    "I_TURN_RIGHT": "right",
    "I_TURN_LEFT": "left",
    "I_JUMP": "jump",
    "I_WALK": "walk",
    "I_RUN": "run",
    "I_LOOK": "look",
}


def render_scan_output(output: str) -> str:
    """SCAN actions as one lower-case word each (``I_TURN_LEFT`` -> ``left``), a lossless rewriting that keeps
    the discriminator's WordPiece input short (1 piece per action instead of ~5)."""
    return " ".join(_SCAN_SHORT.get(t, t.lower()) for t in output.split())


def _sample(pairs: Sequence, n: int | None, rng: np.random.Generator) -> Pairs:
    pairs = [(str(p[0]), str(p[1])) for p in pairs]
    if n is None or n >= len(pairs):
        return pairs
    idx = np.sort(rng.choice(len(pairs), size=int(n), replace=False))
    return [pairs[i] for i in idx]


def _budget(*sets: Pairs) -> int:
    """2 + the longest output of the given (training-side) sets."""
    return 2 + max(len(o.split()) for s in sets for _, o in s)


def _length_ratio(*sets: Pairs) -> float:
    """Largest output/input length ratio over the given (training-side) sets."""
    return max(len(o.split()) / max(1, len(i.split())) for s in sets for i, o in s)


def _test_rng(seed: int, name: str) -> np.random.Generator:
    """The random stream of one test set: independent of the training data and of every other test set."""
    return np.random.default_rng([seed, 1, zlib.crc32(name.encode())])


def _scan(n_train, n_dev, n_test, rng, max_words, seed):
    from helpers.data import load_scan

    simple, length, jump = load_scan("simple"), load_scan("length"), load_scan("addprim_jump")
    ok = {p.input for p in length["train"]} & {p.input for p in jump["train"]}
    pool = [p for p in simple["train"] if p.input in ok]
    id_test = [p for p in simple["test"] if p.input in ok]
    pool = _sample(pool, None, rng)
    perm = rng.permutation(len(pool))
    dev = [pool[i] for i in perm[: n_dev or 0]]
    train = [pool[i] for i in perm[n_dev or 0 :]]
    train = _sample(train, n_train, rng)
    tests = {
        "SCAN-simple": _sample(id_test, n_test, _test_rng(seed, "SCAN-simple")),
        "SCAN-length": _sample(length["test"], n_test, _test_rng(seed, "SCAN-length")),
        "SCAN-jump": _sample(jump["test"], n_test, _test_rng(seed, "SCAN-jump")),
    }
    shift = {"SCAN-simple": "ID", "SCAN-length": "OOD", "SCAN-jump": "OOD"}
    return train, dev, tests, shift


def _cogs(n_train, n_dev, n_test, rng, max_words, seed):
    from helpers.data import load_cogs_gen_varfree, load_cogs_varfree, load_slog

    c = load_cogs_varfree()
    tests = {
        "COGS-test": _sample(c["test"], n_test, _test_rng(seed, "COGS-test")),
        "COGS-gen": _sample(load_cogs_gen_varfree(), n_test, _test_rng(seed, "COGS-gen")),
        "SLOG-gen": _sample(load_slog(lf="varfree"), n_test, _test_rng(seed, "SLOG-gen")),
    }
    shift = {"COGS-test": "ID", "COGS-gen": "OOD", "SLOG-gen": "OOD"}
    return _sample(c["train"], n_train, rng), _sample(c["dev"], n_dev, rng), tests, shift


def _tagged(sents, max_words) -> Pairs:
    out = [(" ".join(w for w, _ in s), " ".join(t for _, t in s)) for s in sents if s]
    out = [p for p in out if len(p[0].split()) == len(p[1].split())]  # words containing spaces are dropped
    return [p for p in out if max_words is None or len(p[0].split()) <= max_words]


def _pos(n_train, n_dev, n_test, rng, max_words, seed):
    from helpers.data import load_brown, load_treebank, load_ud_ewt
    from helpers.data.pos import to_universal

    wsj = _tagged(load_treebank(tagset="universal"), max_words)
    perm = rng.permutation(len(wsj))
    n_hold = max(1, len(wsj) // 5)
    test_part = [wsj[i] for i in perm[:n_hold]]
    dev_part = [wsj[i] for i in perm[n_hold : 2 * n_hold]]
    train_part = [wsj[i] for i in perm[2 * n_hold :]]
    ewt = _tagged(to_universal(load_ud_ewt(part="test", tag="xpos"), source="en-ptb"), max_words)
    tests = {
        "POS-WSJ": _sample(test_part, n_test, _test_rng(seed, "POS-WSJ")),
        "POS-Brown": _sample(_tagged(load_brown(tagset="universal"), max_words), n_test, _test_rng(seed, "POS-Brown")),
        "POS-EWT": _sample(ewt, n_test, _test_rng(seed, "POS-EWT")),
    }
    shift = {"POS-WSJ": "ID", "POS-Brown": "OOD", "POS-EWT": "ID"}
    return _sample(train_part, n_train, rng), _sample(dev_part, n_dev, rng), tests, shift


_LOADERS = {"scan": _scan, "cogs": _cogs, "pos": _pos}


def load_task(
    name: str,
    *,
    n_train: int | None = None,
    n_dev: int = 500,
    n_test: int | None = None,
    max_words: int | None = None,
    seed: int = 0,
) -> Seq2SeqTask:
    """Load one task with seeded subsampling.

    Parameters
    ----------
    name : {"scan", "cogs", "pos"}
    n_train, n_test : int, keyword-only, optional
        Subsample the training set / every test set to this many pairs (``None`` = all).
    n_dev : int, keyword-only
        Dev pairs (ID; for DoC / ATC reference statistics and the discriminator's dev set).
    max_words : int, keyword-only, optional
        POS only: keep sentences of at most this many words (exact match on whole long sentences is rare).
    seed : int, keyword-only
    """
    if name not in _LOADERS:
        raise InputValidationError(f"name: expected one of {TASKS}, got {name!r}")
    for k, v in (("n_train", n_train), ("n_dev", n_dev), ("n_test", n_test)):
        if v is not None and int(v) < 1:
            raise InputValidationError(f"{k}: expected a positive size or None, got {v}")
    rng = np.random.default_rng([seed, 0])  # training side only; test sets have their own streams
    train, dev, tests, shift = _LOADERS[name](n_train, n_dev, n_test, rng, max_words, seed)
    return Seq2SeqTask(
        name, train, dev, tests, shift, _budget(train, dev), output_per_input=_length_ratio(train, dev)
    )
