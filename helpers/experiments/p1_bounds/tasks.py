"""Task definitions for paper 1's reproduction: training pairs, dev pairs and labelled ID / OOD test sets.

Each task is a seq2seq problem with string ``(input, output)`` pairs (whitespace-tokenised):

* ``scan`` (Lake & Baroni 2018): ID = SCAN simple split; OOD = the test sets of the length split and of the two
  add-primitive splits (``jump``: gold ≈ 0 for seq2seq models; ``turn left``: the one SCAN generalisation split
  that they largely solve, so the bounds face a non-trivial OOD accuracy).  The SCAN splits are different
  partitions of the same 20,910 commands, so a parser trained on the simple split's training set would have
  *seen* many OOD test commands.  We therefore train (and test ID) only on commands that are in the training part
  of **all four** splits (output length ≤ 22 actions, ``jump`` and ``turn left`` only as primitives), which keeps
  every OOD test set disjoint from training.  Lake & Baroni's add-primitive training files repeat their primitive
  command (``jump``: 1,467 of 14,670 lines; ``turn left``: 2,189 of 21,890; 10 % each), and that repetition is
  what lets a parser learn the primitive it must then compose; so the training set gets each primitive repeated
  in the share its split's training file has (:func:`scan_primitive_lines`), on top of the subsampled commands.
  The primitives are kept out of the ID test set and the dev set (they are training lines here).
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

import dataclasses
import gzip
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from helpers.errors import InputValidationError

__all__ = [
    "Seq2SeqTask",
    "load_task",
    "add_test_sets",
    "assign_test_files",
    "TASKS",
    "render_scan_output",
    "discriminator_text",
]

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
    tag_set : tuple of str or None
        Tagging tasks (POS): the tags seen in training.  Decoding then emits exactly one of them per input word
        (:meth:`decode_constraints`), as a tagger must; ``None`` for free seq2seq tasks.
    """

    name: str
    train: Pairs
    dev: Pairs
    test_sets: dict[str, Pairs]
    shift: dict[str, str]
    max_new_tokens: int
    info: dict = field(default_factory=dict)
    output_per_input: float | None = None
    tag_set: tuple[str, ...] | None = None

    @property
    def is_tagging(self) -> bool:
        """A tagging task: the output is one tag of :attr:`tag_set` per input word."""
        return self.tag_set is not None

    def decode_constraints(self, inputs: Sequence[str], *, dictionary_min_count: int | None = None) -> dict:
        """Keyword arguments of :func:`helpers.seq2seq.parser.beam_search` for these inputs: a tagging task emits
        exactly one tag of :attr:`tag_set` per input word (read from the inputs only); other tasks are free.

        With ``dictionary_min_count`` a word seen at least that often in the *training* pairs may only get one of
        its training tags (:func:`helpers.seq2seq.tagging.tag_dictionary`; no dev or test tag is read)."""
        if not self.is_tagging:
            return {}
        out = {"output_lengths": [len(x.split()) for x in inputs], "allowed_tokens": list(self.tag_set)}
        if dictionary_min_count is not None:
            from helpers.seq2seq.tagging import position_tags, tag_dictionary

            words, tags = zip(*self.train)
            out["position_tokens"] = position_tags(inputs, tag_dictionary(words, tags, min_count=dictionary_min_count))
        return out

    def decode_budget(self, inputs: Sequence[str]) -> int:
        """Decoding budget for a set with these inputs: ``max(max_new_tokens, 2 + ⌈r · longest input⌉)`` with r =
        :attr:`output_per_input` (inputs only: no gold output is read)."""
        if self.is_tagging and inputs:
            return max(self.max_new_tokens, 2 + max(len(x.split()) for x in inputs))
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
    the discriminator's WordPiece input short (1 piece per action instead of ~5).

    Any other token a parser emits (e.g. the input word ``jump``, when input and output share a vocabulary) is
    written in brackets (``[jump]``), so that it never reads as an action: a wrong output never renders like a
    correct one."""
    return " ".join(_SCAN_SHORT.get(t, f"[{t}]") for t in output.split())


def discriminator_text(task: str) -> Callable[[str], str]:
    """How ``task``'s outputs are written for the discriminators: SCAN's actions as short words
    (:func:`render_scan_output`), every other task's outputs unchanged."""
    return render_scan_output if task == "scan" else _unchanged


def _unchanged(output: str) -> str:
    return output


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


#: Lake & Baroni's add-primitive splits and the primitive command each one's training file repeats
ADD_PRIMITIVES = {"addprim_jump": "jump", "addprim_turn_left": "turn left"}


def scan_primitive_lines(splits: dict[str, Sequence], n_other: int) -> Pairs:
    """Repeated primitive lines for a SCAN training set of ``n_other`` other commands.

    Each add-primitive split k's training file holds its primitive command c_k times among L_k lines, a share
    s_k = c_k / L_k (``jump`` 1,467 / 14,670, ``turn left`` 2,189 / 21,890, both .10).  With the primitives
    added, the training set has N = n_other / (1 − Σ s_k) lines, of which round(s_k · N) are primitive k, so each
    primitive has the share it has in its own split's training file.

    Parameters
    ----------
    splits : dict of split name -> training pairs
        The training part of each split in :data:`ADD_PRIMITIVES` (pairs with ``.input`` / ``.output``).
    n_other : int
        Number of non-primitive training lines.

    Returns
    -------
    list of (input, output)
        The primitive lines (``("jump", "I_JUMP")`` ...), primitive by primitive.
    """
    shares, outputs = {}, {}
    for split, prim in ADD_PRIMITIVES.items():
        lines = [(p.input, p.output) for p in splits[split] if p.input == prim]
        if not lines:
            raise InputValidationError(f"splits[{split!r}]: expected training lines of the primitive {prim!r}")
        shares[prim], outputs[prim] = len(lines) / len(splits[split]), lines[0][1]
    total = n_other / (1.0 - sum(shares.values()))
    return [(prim, outputs[prim]) for prim, share in shares.items() for _ in range(int(round(share * total)))]


def _scan(n_train, n_dev, n_test, rng, max_words, seed):
    from helpers.data import load_scan

    simple, length = load_scan("simple"), load_scan("length")
    jump, left = load_scan("addprim_jump"), load_scan("addprim_turn_left")
    ok = {p.input for p in length["train"]} & {p.input for p in jump["train"]} & {p.input for p in left["train"]}
    ok -= set(ADD_PRIMITIVES.values())  # training lines (repeated below), so neither ID test nor dev
    pool = [p for p in simple["train"] if p.input in ok]
    id_test = [p for p in simple["test"] if p.input in ok]
    pool = _sample(pool, None, rng)
    perm = rng.permutation(len(pool))
    dev = [pool[i] for i in perm[: n_dev or 0]]
    train = [pool[i] for i in perm[n_dev or 0 :]]
    train = _sample(train, n_train, rng)
    train += scan_primitive_lines({"addprim_jump": jump["train"], "addprim_turn_left": left["train"]}, len(train))
    tests = {
        "SCAN-simple": _sample(id_test, n_test, _test_rng(seed, "SCAN-simple")),
        "SCAN-length": _sample(length["test"], n_test, _test_rng(seed, "SCAN-length")),
        "SCAN-jump": _sample(jump["test"], n_test, _test_rng(seed, "SCAN-jump")),
        "SCAN-turn-left": _sample(left["test"], n_test, _test_rng(seed, "SCAN-turn-left")),
    }
    shift = {"SCAN-simple": "ID", "SCAN-length": "OOD", "SCAN-jump": "OOD", "SCAN-turn-left": "OOD"}
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
    from helpers.data import (
        brown_to_universal,
        has_contraction,
        load_brown,
        load_treebank,
        load_ud_ewt,
        penn_to,
    )
    from helpers.data.pos import to_universal

    def ewt(part: str) -> Pairs:  # Penn XPOS -> universal with the same en-ptb map as the WSJ sample ("to": TO)
        return _tagged(to_universal(penn_to(load_ud_ewt(part=part, tag="xpos")), source="en-ptb"), max_words)

    def brown() -> list:  # Penn conventions, as the training tags (paper 1: PTB-3's Brown); no contracted tokens
        return brown_to_universal([s for s in load_brown(tagset="brown") if not has_contraction(s)], conventions="ptb")

    wsj = _tagged(load_treebank(tagset="universal"), max_words)
    perm = rng.permutation(len(wsj))
    n_hold = max(1, len(wsj) // 5)
    test_part = [wsj[i] for i in perm[:n_hold]]
    dev_part = [wsj[i] for i in perm[n_hold : 2 * n_hold]]
    train_part = [wsj[i] for i in perm[2 * n_hold :]]
    tests = {
        "POS-WSJ": _sample(test_part, n_test, _test_rng(seed, "POS-WSJ")),
        "POS-Brown": _sample(_tagged(brown(), max_words), n_test, _test_rng(seed, "POS-Brown")),
        "POS-EWT": _sample(ewt("test"), n_test, _test_rng(seed, "POS-EWT")),
    }
    shift = {"POS-WSJ": "ID", "POS-Brown": "OOD", "POS-EWT": "ID"}
    train = _sample(train_part + ewt("train"), n_train, rng)
    return train, _sample(dev_part + ewt("dev"), n_dev, rng), tests, shift


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
        Subsample the training set / every test set to this many pairs (``None`` = all).  SCAN: ``n_train``
        commands plus the add-primitive splits' repeated primitives (:func:`scan_primitive_lines`: 2,500 -> 3,125
        lines, 312 ``jump`` and 312 ``turn left``).
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
    tag_set = tuple(sorted({t for _, o in train for t in o.split()})) if name == "pos" else None
    return Seq2SeqTask(
        name, train, dev, tests, shift, _budget(train, dev), output_per_input=_length_ratio(train, dev),
        tag_set=tag_set,
    )


def _read_extra(path: Path, tagging: bool) -> list[tuple[str, str | None]]:
    """One user test set: CoNLL-U for a tagging task (universal tags; words only when every tag is ``_``), else
    ``input<TAB>output`` / ``input`` lines."""
    from helpers.data import read_conllu, read_seq2seq_tsv
    from helpers.data.pos import parse_conllu

    if not tagging:
        return read_seq2seq_tsv(path)
    if path.suffix not in (".conllu", ".gz"):
        raise InputValidationError(f"{path}: a POS test set must be a CoNLL-U file (.conllu or .conllu.gz)")
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as fh:
        sents = parse_conllu(fh.read(), source=str(path))
    if sents and all(t == "_" for sent in sents for t in sent.upos):  # unlabelled: words only
        return [(" ".join(sent.words), None) for sent in sents]
    return _tagged(read_conllu(path, tags="universal"), None)  # validates the tags, maps UPOS -> universal


def add_test_sets(
    task: Seq2SeqTask,
    paths: Sequence[str | Path],
    *,
    shift: str = "extra",
    n_test: int | None = None,
    max_words: int | None = None,
    seed: int = 0,
) -> Seq2SeqTask:
    """A copy of ``task`` with your own test sets added, named by their file stem.

    Parameters
    ----------
    task : Seq2SeqTask
    paths : sequence of str or path
        CoNLL-U files for a tagging task (``pos``; UPOS mapped to the 12 universal tags; a file whose tags are all
        ``_`` is an unlabelled set), ``input<TAB>output`` (or ``input``-only, unlabelled) TSV files otherwise.
    shift : str, keyword-only
        Shift label of the new sets (default ``"extra"``: they are reported, but not counted in the ID / OOD claims).
    n_test, max_words, seed : keyword-only
        As for the built-in sets, so that a user set's gold accuracy compares with theirs: a tagging set keeps
        the sentences of at most ``max_words`` words, then every set is subsampled to ``n_test`` pairs (its own
        seeded stream, :func:`_test_rng`).  ``None`` keeps the set whole (the notebook's
        ``extra_test_sets_whole=True``).

    Unlabelled sets carry ``None`` as gold: they get bounds and label-free estimates, never accuracies.  Nothing
    here reaches the parser's or the discriminators' training data or decoding budget.
    """
    tests, shifts = dict(task.test_sets), dict(task.shift)
    for p in paths:
        path = Path(p)
        name = path.name.split(".")[0]
        if name in tests:
            raise InputValidationError(f"{path}: a test set named {name!r} already exists in task {task.name!r}")
        pairs = _read_extra(path, task.is_tagging)
        if task.is_tagging and max_words is not None:
            kept = [p for p in pairs if len(p[0].split()) <= max_words]
            if not kept:
                raise InputValidationError(
                    f"{path}: none of its {len(pairs)} sentences has at most {max_words} words (pos_max_words); "
                    f"raise it, or keep the set whole with extra_test_sets_whole=True"
                )
            pairs = kept
        if n_test is not None and len(pairs) > n_test:
            idx = np.sort(_test_rng(seed, name).choice(len(pairs), size=int(n_test), replace=False))
            pairs = [pairs[i] for i in idx]
        if task.is_tagging and pairs[0][1] is not None:
            unknown = sorted({t for _, o in pairs for t in o.split()} - set(task.tag_set))
            if unknown:
                raise InputValidationError(f"{path}: tags {unknown} are not among the task's tags {task.tag_set}")
        tests[name], shifts[name] = pairs, shift
    return dataclasses.replace(task, test_sets=tests, shift=shifts)


def assign_test_files(files: Sequence[str] | dict[str, Sequence[str]], tasks: Sequence[str]) -> dict[str, list[str]]:
    """Which task each user test file belongs to (the notebook's ``extra_test_sets`` parameter).

    ``files`` is either a dict ``task -> [paths]`` or a plain list: CoNLL-U files (``.conllu``, ``.conllu.gz``) go
    to ``pos``, other files (TSV) to the one seq2seq task among ``tasks`` (a dict is needed when both ``scan`` and
    ``cogs`` run).  Every named task must be among ``tasks``.
    """
    if isinstance(files, dict):
        out = {str(k): [str(p) for p in v] for k, v in files.items()}
    else:
        if isinstance(files, str):
            raise InputValidationError(f"extra_test_sets: expected a list of paths or a dict task -> paths, got {files!r}")
        out: dict[str, list[str]] = {}
        seq = [t for t in tasks if t != "pos"]
        for p in map(str, files):
            if p.endswith((".conllu", ".conllu.gz")):
                task = "pos"
            elif len(seq) == 1:
                task = seq[0]
            else:
                raise InputValidationError(
                    f"extra_test_sets: cannot tell which of the tasks {seq or list(tasks)} {p!r} belongs to; pass a "
                    "dict such as {'scan': ['my_set.tsv']}"
                )
            out.setdefault(task, []).append(p)
    unknown = sorted(set(out) - set(tasks))
    if unknown:
        wanted = ", ".join([*tasks, *unknown])
        raise InputValidationError(
            f"extra_test_sets: tasks {unknown} are not run (tasks = {list(tasks)}); add them, e.g. "
            f"-p 'tasks=[{wanted}]'"
        )
    return out
