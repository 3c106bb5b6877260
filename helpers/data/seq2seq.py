"""Sequence-to-sequence datasets: SCAN, COGS (original and variable-free LFs) and the SLOG generalization sets.

Every loader returns lists of :class:`Pair` (SCAN) or :class:`COGSExample` (COGS, SLOG) named tuples, which
unpack like plain ``(input, output)`` / ``(input, output, category)`` tuples.

References
----------
Lake, B. & Baroni, M. (2018). Generalization without systematicity. ICML. (SCAN)
Kim, N. & Linzen, T. (2020). COGS: A compositional generalization challenge based on semantic interpretation. EMNLP.
Li, B. et al. (2023). SLOG: A structural generalization benchmark for semantic parsing. EMNLP.
"""

from __future__ import annotations

import gzip
import io
import zipfile
from typing import NamedTuple

from helpers.data.files import require
from helpers.data.registry import register_loader
from helpers.errors import InputValidationError

__all__ = [
    "Pair",
    "COGSExample",
    "load_scan",
    "load_cogs",
    "load_cogs_varfree",
    "load_cogs_gen_varfree",
    "load_slog",
    "read_seq2seq_tsv",
    "SCAN_SPLITS",
    "SLOG_PASSWORD",
]

#: Password of ``slog_generalization_sets.zip``, published by the SLOG authors in their README (it keeps the
#: text out of web crawls, it is not a secret).
SLOG_PASSWORD = b"SLOG"

#: SCAN split name -> (folder, file suffix); ``tasks`` is the full command set (one part, ``all``).
SCAN_SPLITS = {
    "simple": ("simple_split", "simple"),
    "length": ("length_split", "length"),
    "addprim_jump": ("add_prim_split", "addprim_jump"),
    "addprim_turn_left": ("add_prim_split", "addprim_turn_left"),
}


class Pair(NamedTuple):
    """A SCAN example: command words and action tokens, each a single-space separated string."""

    input: str
    output: str


class COGSExample(NamedTuple):
    """A COGS/SLOG example: sentence, logical form and generalization category."""

    input: str
    output: str
    category: str


def _check_part(part: str | None, allowed: tuple[str, ...], dataset: str) -> tuple[str, ...]:
    if part is None:
        return allowed
    if part not in allowed:
        raise InputValidationError(f"{dataset}: split must be one of {allowed} or None, got {part!r}")
    return (part,)


def parse_scan_lines(text: str) -> list[Pair]:
    """Parse SCAN lines ``IN: <command> OUT: <actions>`` into :class:`Pair` objects."""
    pairs = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if not line.startswith("IN: ") or " OUT: " not in line:
            raise InputValidationError(f"SCAN line {n} is not 'IN: ... OUT: ...': {line[:80]!r}")
        cmd, act = line[4:].split(" OUT: ", 1)
        pairs.append(Pair(cmd.strip(), act.strip()))
    return pairs


def _read_scan(dataset: str, rel: str) -> list[Pair]:
    with gzip.open(require(dataset, rel), "rt", encoding="ascii") as fh:
        return parse_scan_lines(fh.read())


def load_scan(split: str = "simple", *, part: str | None = None) -> dict[str, list[Pair]] | list[Pair]:
    """Load a SCAN split (Lake & Baroni 2018).

    Parameters
    ----------
    split : {"simple", "length", "addprim_jump", "addprim_turn_left", "tasks"}
        Which split; ``tasks`` is the full set of 20,910 commands (part ``all``).
    part : {"train", "test"} or None, keyword-only
        Return only this part; ``None`` returns ``{"train": [...], "test": [...]}``.

    Returns
    -------
    list of Pair or dict of str to list of Pair
        Rows: tasks 20,910; simple 16,728/4,182; length 16,990/3,920; addprim_jump 14,670/7,706;
        addprim_turn_left 21,890/1,208.
    """
    if split == "tasks":
        parts = _check_part(part, ("all",), "scan_tasks")
        out = {"all": _read_scan("scan_tasks", "scan/tasks.txt.gz")}
    else:
        if split not in SCAN_SPLITS:
            raise InputValidationError(f"SCAN split must be one of {[*SCAN_SPLITS, 'tasks']}, got {split!r}")
        folder, suffix = SCAN_SPLITS[split]
        parts = _check_part(part, ("train", "test"), f"scan_{split}")
        out = {p: _read_scan(f"scan_{split}", f"scan/{folder}/tasks_{p}_{suffix}.txt.gz") for p in parts}
    return out[part] if part is not None else out


@register_loader("scan_tasks")
def _scan_tasks(*, part: str | None = "all") -> list[Pair] | dict[str, list[Pair]]:
    """Full SCAN command set (20,910 pairs)."""
    return load_scan("tasks", part=part)


def _make_scan_loader(split: str) -> None:
    def loader(*, part: str | None = None) -> dict[str, list[Pair]] | list[Pair]:
        return load_scan(split, part=part)

    loader.__name__ = f"load_scan_{split}"
    loader.__doc__ = (
        f"SCAN {split} split: ``{{'train', 'test'}}`` lists of :class:`Pair` (``part=`` for one)."
    )
    register_loader(f"scan_{split}")(loader)


for _split in SCAN_SPLITS:
    _make_scan_loader(_split)


def parse_cogs_tsv(text: str) -> list[COGSExample]:
    """Parse COGS/SLOG TSV text (``sentence<TAB>LF<TAB>category``, no header)."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            raise InputValidationError(f"COGS line {n}: expected 3 tab-separated columns, got {len(cols)}")
        rows.append(COGSExample(*cols))
    return rows


def _read_tsv(dataset: str, rel: str) -> list[COGSExample]:
    with gzip.open(require(dataset, rel), "rt", encoding="utf-8", newline="\n") as fh:
        return parse_cogs_tsv(fh.read())


def _cogs_family(
    dataset: str, prefix: str, part: str | None
) -> dict[str, list[COGSExample]] | list[COGSExample]:
    parts = _check_part(part, ("train", "dev", "test"), dataset)
    out = {p: _read_tsv(dataset, f"cogs/{prefix}_{p}.tsv.gz") for p in parts}
    return out[part] if part is not None else out


@register_loader("cogs")
def load_cogs(*, part: str | None = None) -> dict[str, list[COGSExample]] | list[COGSExample]:
    """COGS (Kim & Linzen 2020) with the original variable-based logical forms.

    Parameters
    ----------
    part : {"train", "dev", "test"} or None, keyword-only
        One part, or ``None`` for a dict of all three (24,155 / 3,000 / 3,000 examples).
        COGS's ``gen.tsv`` is not in the data mirror; use ``cogs_gen_varfree`` or ``slog_gen``.
    """
    return _cogs_family("cogs", "cogs", part)


@register_loader("cogs_varfree")
def load_cogs_varfree(*, part: str | None = None) -> dict[str, list[COGSExample]] | list[COGSExample]:
    """COGS with variable-free logical forms, as released with SLOG (Li et al. 2023).

    32,755 / 4,046 / 4,046 examples; the train set is a superset of COGS train after ``lended -> lent``.
    """
    return _cogs_family("cogs_varfree", "varfree", part)


@register_loader("cogs_gen_varfree")
def load_cogs_gen_varfree() -> list[COGSExample]:
    """COGS generalization set with variable-free LFs: 21 categories x 1,000 = 21,000 examples."""
    return _read_tsv("cogs_gen_varfree", "cogs/cogs_gen_varfree.tsv.gz")


_SLOG_MEMBERS = {
    "varfree": "generalization_sets/gen_varfreeLF.tsv",
    "cogs": "generalization_sets/gen_cogsLF.tsv",
}


@register_loader("slog_gen")
def load_slog(*, lf: str = "varfree") -> list[COGSExample]:
    """SLOG generalization sets (Li et al. 2023): 17,000 examples in 17 categories.

    The authors ship them in a password zip (ZipCrypto, password ``SLOG`` from their README) to keep them out of
    web-crawled training data. The member is decrypted and decoded in memory; nothing is written to disk (zipfile
    decrypts only the compressed bytes, 0.6 MB / 1.0 MB).

    Parameters
    ----------
    lf : {"varfree", "cogs"}, keyword-only
        Variable-free logical forms, or the original COGS variable-based ones.
    """
    if lf not in _SLOG_MEMBERS:
        raise InputValidationError(f"slog_gen: lf must be one of {sorted(_SLOG_MEMBERS)}, got {lf!r}")
    path = require("slog_gen", "cogs/slog_generalization_sets.zip")
    with zipfile.ZipFile(path) as zf:
        raw = zf.read(_SLOG_MEMBERS[lf], pwd=SLOG_PASSWORD)
    return parse_cogs_tsv(io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline="\n").read())


def read_seq2seq_tsv(path) -> list[tuple[str, str | None]]:
    """Your own seq2seq test set: one example per line, ``input<TAB>gold output`` or ``input`` alone (unlabelled).

    Blank lines are skipped; tokens are whitespace-separated (as in SCAN / COGS).  Either every line has a gold
    output or none has.

    Returns
    -------
    list of (input, output)
        ``output`` is ``None`` for an unlabelled set (never a fake empty gold).

    Raises
    ------
    DataNotFoundError
        The file does not exist.
    InputValidationError
        More than two columns, an empty input, a mix of labelled and unlabelled lines, or no examples.
    """
    from pathlib import Path

    from helpers.errors import DataNotFoundError

    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"seq2seq TSV file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    out: list[tuple[str, str | None]] = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) > 2 or not cols[0].strip():
                raise InputValidationError(
                    f"{path}:{lineno}: expected 'input<TAB>output' or 'input', got {len(cols)} columns: {line[:60]!r}"
                )
            out.append((" ".join(cols[0].split()), " ".join(cols[1].split()) if len(cols) == 2 else None))
    if not out:
        raise InputValidationError(f"{path}: no examples found (expected 'input<TAB>output' lines)")
    if len({o is None for _, o in out}) > 1:
        raise InputValidationError(f"{path}: some lines have a gold output and some do not (expected all or none)")
    return out
