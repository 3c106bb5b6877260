"""Part-of-speech datasets: Penn Treebank WSJ sample, Brown, universal-tagset maps and UD English-EWT.

All taggers' corpora come back as lists of sentences, each a list of ``(word, tag)`` tuples. Everything is parsed
with the standard library from the mirrored archives; NLTK is not needed.

References
----------
Marcus, M. et al. (1993). Building a large annotated corpus of English: the Penn Treebank. (NLTK 10% sample)
Francis, W. N. & Kucera, H. (1979). Brown Corpus Manual. (NLTK distribution)
Petrov, S., Das, D. & McDonald, R. (2012). A universal part-of-speech tagset. LREC.
Silveira, N. et al. (2014). A gold standard dependency corpus for English. LREC. (UD English-EWT)
"""

from __future__ import annotations

import gzip
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from helpers.data.files import require
from helpers.data.registry import register_loader
from helpers.errors import InputValidationError

__all__ = [
    "TaggedSentence",
    "ConllSentence",
    "parse_mrg",
    "parse_brown",
    "parse_conllu",
    "load_treebank",
    "load_brown",
    "load_universal_tagset",
    "to_universal",
    "brown_to_universal",
    "has_contraction",
    "BROWN_PTB_CONVENTIONS",
    "penn_to",
    "load_ud_ewt",
    "read_conllu",
    "UNIVERSAL_TAGS",
    "UPOS_TO_UNIVERSAL",
]

TaggedSentence = list[tuple[str, str]]

#: The 12 tags of Petrov et al. (2012).
UNIVERSAL_TAGS = ("VERB", "NOUN", "PRON", "ADJ", "ADV", "ADP", "CONJ", "DET", "NUM", "PRT", "X", ".")

#: The 17 Universal Dependencies UPOS tags -> the 12 tags of Petrov et al. (2012), following how the en-ptb map
#: treats the Penn tags behind each UPOS: PROPN -> NOUN (NNP), AUX -> VERB (MD and auxiliary VB*), SCONJ -> ADP
#: (IN), CCONJ -> CONJ, PART -> PRT (TO, RP, POS), PUNCT -> ".", INTJ and SYM -> X (UH, SYM).
UPOS_TO_UNIVERSAL = {
    "NOUN": "NOUN", "PROPN": "NOUN", "VERB": "VERB", "AUX": "VERB", "ADJ": "ADJ", "ADV": "ADV", "PRON": "PRON",
    "DET": "DET", "ADP": "ADP", "SCONJ": "ADP", "NUM": "NUM", "CCONJ": "CONJ", "PART": "PRT", "PUNCT": ".",
    "INTJ": "X", "SYM": "X", "X": "X",
}  # fmt: skip

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_mrg(text: str, *, keep_traces: bool = False) -> list[TaggedSentence]:
    """Tagged sentences from Penn Treebank bracketed (``.mrg``) text.

    A leaf is ``(TAG word)``; each top-level bracket is one sentence. With ``keep_traces=False`` the empty
    elements tagged ``-NONE-`` (traces, null complementizers) are dropped, as for a POS tagging task.
    """
    sents: list[TaggedSentence] = []
    current: TaggedSentence = []
    depth = 0
    toks = _TOKEN.findall(text)
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t == "(":
            # leaf: ( TAG word )
            if i + 3 < n and toks[i + 1] not in "()" and toks[i + 2] not in "()" and toks[i + 3] == ")":
                tag, word = toks[i + 1], toks[i + 2]
                if keep_traces or tag != "-NONE-":
                    current.append((word, tag))
                i += 4
                continue
            depth += 1
        elif t == ")":
            depth -= 1
            if depth < 0:
                raise InputValidationError("unbalanced brackets in .mrg text")
            if depth == 0 and current:
                sents.append(current)
                current = []
        i += 1
    if depth != 0:
        raise InputValidationError("unbalanced brackets in .mrg text")
    return sents


@register_loader("treebank")
def load_treebank(*, tagset: str = "ptb", keep_traces: bool = False) -> list[TaggedSentence]:
    """Penn Treebank WSJ 10% sample (NLTK ``treebank``, wsj_0001-0199): 3,914 tagged sentences.

    Parsed from ``treebank/combined/wsj_*.mrg`` (the files NLTK's ``treebank.tagged_sents()`` reads), in file
    order.

    Parameters
    ----------
    tagset : {"ptb", "universal"}, keyword-only
        Penn Treebank tags, or the 12 universal tags via the ``en-ptb`` map (unmapped tags such as ``-NONE-`` -> X).
    keep_traces : bool, keyword-only
        Keep ``-NONE-`` empty elements (NLTK keeps them: 100,676 tokens; without them 94,084).
    """
    path = require("treebank", "pos/treebank.zip")
    sents: list[TaggedSentence] = []
    with zipfile.ZipFile(path) as zf:
        names = sorted(n for n in zf.namelist() if n.startswith("treebank/combined/") and n.endswith(".mrg"))
        for name in names:
            sents.extend(parse_mrg(zf.read(name).decode("ascii"), keep_traces=keep_traces))
    return _maybe_universal(sents, tagset, "en-ptb", "ptb")


def parse_brown(text: str) -> list[TaggedSentence]:
    """Tagged sentences from a Brown corpus file: one sentence per non-blank line, tokens ``word/tag``.

    Tags are upper-cased (as NLTK's reader does, and as the ``en-brown`` universal map expects).
    """
    sents = []
    for line in text.splitlines():
        toks = line.split()
        if not toks:
            continue
        sent = []
        for tok in toks:
            word, sep, tag = tok.rpartition("/")
            if not sep:
                raise InputValidationError(f"Brown token without a tag: {tok!r}")
            sent.append((word, tag.upper()))
        sents.append(sent)
    return sents


def _brown_categories(zf: zipfile.ZipFile) -> dict[str, str]:
    cats = {}
    for line in zf.read("brown/cats.txt").decode("ascii").splitlines():
        if line.strip():
            fileid, cat = line.split()
            cats[fileid] = cat
    return cats


@register_loader("brown")
def load_brown(
    *, categories: str | Sequence[str] | None = None, tagset: str = "brown"
) -> list[TaggedSentence]:
    """Brown corpus (NLTK distribution): 57,340 tagged sentences in 15 genres, file order ca01...cr09.

    Parameters
    ----------
    categories : str or sequence of str or None, keyword-only
        Keep only these genres (``news``, ``fiction``, ``learned``, ... from ``cats.txt``); ``None`` = all.
    tagset : {"brown", "universal"}, keyword-only
        Original Brown tags (upper-cased, e.g. ``NP-TL``), or the 12 universal tags via the ``en-brown`` map.
    """
    path = require("brown", "pos/brown.zip")
    sents: list[TaggedSentence] = []
    with zipfile.ZipFile(path) as zf:
        cats = _brown_categories(zf)
        if categories is not None:
            wanted = {categories} if isinstance(categories, str) else set(categories)
            unknown = wanted - set(cats.values())
            if unknown:
                raise InputValidationError(
                    f"unknown Brown categories {sorted(unknown)}; expected some of {sorted(set(cats.values()))}"
                )
        for fileid in sorted(cats):
            if categories is None or cats[fileid] in wanted:
                sents.extend(parse_brown(zf.read(f"brown/{fileid}").decode("ascii")))
    return _maybe_universal(sents, tagset, "en-brown", "brown")


_MAP_CACHE: dict[tuple[str, str], dict[str, str]] = {}


@register_loader("universal_tagset")
def load_universal_tagset(*, source: str = "en-ptb") -> dict[str, str]:
    """Mapping from a fine-grained tagset to the 12 universal tags (Petrov et al. 2012).

    Parameters
    ----------
    source : str, keyword-only
        Map name in ``universal_tagset.zip`` without ``.map``: ``en-ptb`` (Penn Treebank), ``en-brown`` (Brown),
        or any of the other 31 (``de-tiger``, ``fr-paris``, ...).
    """
    path = require("universal_tagset", "pos/universal_tagset.zip")
    key = (str(path), source)
    if key in _MAP_CACHE:
        return dict(_MAP_CACHE[key])
    with zipfile.ZipFile(path) as zf:
        available = sorted(n[len("universal_tagset/") : -4] for n in zf.namelist() if n.endswith(".map"))
        if source not in available:
            raise InputValidationError(f"unknown tagset map {source!r}; expected one of {available}")
        text = zf.read(f"universal_tagset/{source}.map").decode("utf-8")
    mapping: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fine, coarse = line.split("\t")
        mapping[fine] = coarse
    _MAP_CACHE[key] = mapping
    return dict(mapping)


def to_universal(
    sentences: Iterable[Sequence[tuple[str, str]]], *, source: str = "en-ptb", unknown: str = "X"
) -> list[TaggedSentence]:
    """Map tagged sentences to the universal tagset.

    Parameters
    ----------
    sentences : iterable of sequences of (word, tag)
    source : str, keyword-only
        ``en-ptb`` for Penn Treebank tags, ``en-brown`` for Brown tags (see :func:`load_universal_tagset`).
    unknown : str, keyword-only
        Tag for fine tags missing from the map (NLTK's ``map_tag`` also uses ``X``).
    """
    mapping = load_universal_tagset(source=source)
    return [[(w, mapping.get(t, unknown)) for w, t in sent] for sent in sentences]


#: Brown tags whose ``en-brown`` universal class differs from the one ``en-ptb`` gives their Penn Treebank
#: counterpart (Penn tag in the comment).  The Penn Treebank tags Brown with Penn tags (paper 1 evaluates PTB-3's
#: Brown section), so a tagger trained on Penn-tagged data is judged by these classes there.
BROWN_PTB_CONVENTIONS = {
    "PP$": "PRON",  # his, my, their: PRP$ -> PRON (en-brown: DET)
    "WP$": "PRON",  # whose: WP$ -> PRON (en-brown: DET)
    "EX": "DET",  # existential there: EX -> DET (en-brown: PRT)
    "ABN": "DET",  # all, half (pre-quantifiers): PDT / DT -> DET (en-brown: PRT)
    "UH": "X",  # interjections: UH -> X (en-brown: PRT)
}

_BROWN_AFFIXES = ("-TL", "-HL", "-NC")  # title, headline, cited: the same word class


def penn_to(sentences: Iterable[Sequence[tuple[str, str]]]) -> list[TaggedSentence]:
    """Penn-tagged sentences with every *to* tagged ``TO``, as the Penn Treebank does (Santorini 1990: "to" is
    always TO); UD English-EWT's XPOS column tags the preposition ``IN`` instead (-> ADP, not PRT)."""
    return [[(w, "TO" if t == "IN" and w.lower() == "to" else t) for w, t in sent] for sent in sentences]


def has_contraction(sentence: Sequence[tuple[str, str]]) -> bool:
    """Whether a Brown-tagged sentence has a contracted token (a ``+`` tag such as ``PPSS+BEM`` for *I'm*), which the
    Penn Treebank splits into two tokens, so that it has no single Penn-convention tag."""
    return any("+" in t for _, t in sentence)


def brown_to_universal(
    sentences: Iterable[Sequence[tuple[str, str]]], *, conventions: str = "ptb"
) -> list[TaggedSentence]:
    """Map Brown-tagged sentences to the 12 universal tags.

    Parameters
    ----------
    sentences : iterable of sequences of (word, Brown tag), as :func:`load_brown` returns with ``tagset="brown"``
    conventions : {"ptb", "brown"}, keyword-only
        ``"brown"``: the ``en-brown`` map as it is (NLTK's ``tagset="universal"``).  ``"ptb"``: the same map except
        for :data:`BROWN_PTB_CONVENTIONS` (also under the ``-TL`` / ``-HL`` / ``-NC`` affixes, not under ``FW-``),
        so that the classes agree with ``en-ptb`` on the Penn Treebank (e.g. *his* is PRON, as PRP$, not DET), and
        every *to* is PRT (Penn's TO, see :func:`penn_to`; Brown tags the preposition IN).
    """
    if conventions not in ("ptb", "brown"):
        raise InputValidationError(f"conventions: expected 'ptb' or 'brown', got {conventions!r}")
    mapping = load_universal_tagset(source="en-brown")

    def one(word: str, tag: str) -> str:
        core = tag
        while core.endswith(_BROWN_AFFIXES):
            core = core[:-3]
        if conventions == "ptb":
            if core in BROWN_PTB_CONVENTIONS:
                return BROWN_PTB_CONVENTIONS[core]
            if core == "IN" and word.lower() == "to":
                return "PRT"
        return mapping.get(tag, "X")

    return [[(w, one(w, t)) for w, t in sent] for sent in sentences]


def _maybe_universal(
    sents: list[TaggedSentence], tagset: str, source: str, native: str
) -> list[TaggedSentence]:
    if tagset == native:
        return sents
    if tagset == "universal":
        return to_universal(sents, source=source)
    raise InputValidationError(f"tagset must be {native!r} or 'universal', got {tagset!r}")


@dataclass
class ConllSentence:
    """One CoNLL-U sentence (multiword-token ranges and empty nodes are skipped: syntactic words only)."""

    sent_id: str
    text: str
    words: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]
    heads: list[int]
    deprels: list[str]

    def tagged(self, *, tag: str = "upos") -> TaggedSentence:
        """``(word, tag)`` pairs with ``tag`` = ``upos`` or ``xpos``."""
        return list(zip(self.words, getattr(self, tag)))


def parse_conllu(text: str, *, source: str = "CoNLL-U text") -> list[ConllSentence]:
    """Parse CoNLL-U text (10 tab-separated columns, ``#`` comments, blank line between sentences); a malformed
    line raises an error naming ``source`` (the file) and the line number."""
    out: list[ConllSentence] = []
    meta: dict[str, str] = {}
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            out.append(
                ConllSentence(
                    meta.get("sent_id", str(len(out))),
                    meta.get("text", ""),
                    [r[1] for r in rows],
                    [r[2] for r in rows],
                    [r[3] for r in rows],
                    [r[4] for r in rows],
                    [int(r[6]) if r[6].isdigit() else -1 for r in rows],
                    [r[7] for r in rows],
                )
            )
        rows.clear()
        meta.clear()

    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            flush()
        elif line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                meta[key.strip()] = value.strip()
        else:
            cols = line.split("\t")
            if len(cols) != 10:
                raise InputValidationError(
                    f"{source}, line {lineno}: {len(cols)} tab-separated columns, expected 10 (CoNLL-U): {line[:60]!r}"
                )
            if "-" in cols[0] or "." in cols[0]:
                continue
            rows.append(cols)
    flush()
    return out


@register_loader("ud_ewt")
def load_ud_ewt(*, part: str | None = None, tag: str = "upos", full: bool = False) -> dict[str, list] | list:
    """Universal Dependencies English-EWT (r2.x snapshot).

    Parameters
    ----------
    part : {"train", "dev", "test"} or None, keyword-only
        One part, or ``None`` for a dict of all three: 12,544 / 2,001 / 2,077 sentences,
        204,577 / 25,147 / 25,094 words.
    tag : {"upos", "xpos"}, keyword-only
        Which tag the ``(word, tag)`` pairs carry (UPOS: 17 UD tags; XPOS: Penn Treebank tags).
    full : bool, keyword-only
        Return :class:`ConllSentence` objects (lemmas, heads, relations, ids) instead of tagged sentences.
    """
    if tag not in ("upos", "xpos"):
        raise InputValidationError(f"tag must be 'upos' or 'xpos', got {tag!r}")
    allowed = ("train", "dev", "test")
    if part is not None and part not in allowed:
        raise InputValidationError(f"ud_ewt: part must be one of {allowed} or None, got {part!r}")
    out: dict[str, list] = {}
    for p in allowed if part is None else (part,):
        path = require("ud_ewt", f"pos/en_ewt-ud-{p}.conllu.gz")
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            sents = parse_conllu(fh.read(), source=str(path))
        out[p] = sents if full else [s.tagged(tag=tag) for s in sents]
    return out[part] if part is not None else out


def read_conllu(path, *, tags: str = "universal") -> list[TaggedSentence] | list[list[str]]:
    """A CoNLL-U file (plain or ``.gz``) as tagged sentences, for your own POS test sets.

    Parameters
    ----------
    path : str or path-like
        A CoNLL-U file (10 tab-separated columns; multiword-token ranges and empty nodes are skipped).
    tags : {"universal", "upos", "none"}, keyword-only
        ``universal``: UPOS mapped to the 12 tags of Petrov et al. (2012) with :data:`UPOS_TO_UNIVERSAL`;
        ``upos``: the 17 UD tags as they are; ``none``: words only (an unlabelled set: a list of word lists).

    Raises
    ------
    DataNotFoundError
        The file does not exist.
    InputValidationError
        A malformed line, an empty file, an unknown UPOS tag, or missing tags (``_``) when ``tags`` asks for them.
    """
    from pathlib import Path

    from helpers.errors import DataNotFoundError

    if tags not in ("universal", "upos", "none"):
        raise InputValidationError(f"tags must be 'universal', 'upos' or 'none', got {tags!r}")
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"CoNLL-U file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        sents = parse_conllu(fh.read(), source=str(path))
    if not sents:
        raise InputValidationError(f"{path}: no sentences found (expected CoNLL-U)")
    if tags == "none":
        return [list(s.words) for s in sents]
    out = []
    for s in sents:
        bad = sorted({t for t in s.upos if t not in UPOS_TO_UNIVERSAL})
        if bad:
            raise InputValidationError(
                f"{path}: sentence {s.sent_id!r} has UPOS tags {bad} (expected the 17 UD tags; use tags='none' "
                "for an unlabelled set)"
            )
        out.append([(w, UPOS_TO_UNIVERSAL[t] if tags == "universal" else t) for w, t in zip(s.words, s.upos)])
    return out
