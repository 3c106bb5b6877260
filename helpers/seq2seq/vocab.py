"""Word-level vocabulary for the seq2seq parsers of paper 1 (whitespace tokens, one joint input/output vocabulary).

Paper 1 (Sec. 4.2, App. B) fine-tunes T5-base with its SentencePiece vocabulary; on CPU we train T5-architecture
models from scratch, where a word vocabulary over the (small, closed) SCAN / COGS / tag-sequence languages is the
natural choice.  Special ids follow T5's layout: ``pad = 0`` (also the decoder start token), ``eos = 1``,
``unk = 2``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from helpers.errors import InputValidationError

__all__ = ["WordVocab", "PAD", "EOS", "UNK", "unk_signature", "UNK_SIGNATURES"]

PAD, EOS, UNK = "<pad>", "</s>", "<unk>"
_SPECIALS = (PAD, EOS, UNK)
_SUFFIXES = ("ing", "ed", "ly", "ion", "er", "est", "al", "ous", "able", "ive", "ful", "less", "ment", "ness", "ity", "s")
_CLASSES = ("num", "hyph", *_SUFFIXES, "other")
#: Every unknown-word class token, in id order (capitalised classes after the lower-case ones).
UNK_SIGNATURES: tuple[str, ...] = tuple(f"<unk:{c}{k}>" for c in ("", "C") for k in _CLASSES)


def unk_signature(word: str) -> str:
    """The class token of an unknown word from its shape and suffix (as parsers' unknown-word signatures, e.g. the
    Berkeley parser's): ``<unk:[C]CLASS>`` with ``C`` for a capitalised word and ``CLASS`` = ``num`` (has a digit),
    ``hyph`` (has a hyphen), the first matching suffix of ``ing, ed, ly, ion, er, est, al, ous, able, ive, ful, less,
    ment, ness, ity, s`` (words of 4+ characters), else ``other``.

    >>> unk_signature("Reorganizing"), unk_signature("faster"), unk_signature("1990s")
    ('<unk:Cing>', '<unk:er>', '<unk:num>')
    """
    cap = "C" if word[:1].isupper() else ""
    if any(ch.isdigit() for ch in word):
        kind = "num"
    elif "-" in word:
        kind = "hyph"
    else:
        low = word.lower()
        kind = next((suf for suf in _SUFFIXES if len(low) >= 4 and low.endswith(suf)), "other")
    return f"<unk:{cap}{kind}>"


class WordVocab:
    """A whitespace-token vocabulary with T5-style special ids (pad 0, eos 1, unk 2).

    Parameters
    ----------
    tokens : sequence of str
        The non-special tokens, in id order (ids start at 3).  When they include the :data:`UNK_SIGNATURES`,
        :meth:`encode` maps an unknown word to its class token (:func:`unk_signature`) instead of ``<unk>``.

    Examples
    --------
    >>> v = WordVocab.build(["jump twice", "walk"])
    >>> v.encode("jump walk run")
    [3, 5, 2, 1]
    >>> v.decode([3, 5, 1, 4])
    'jump walk'
    """

    pad_id, eos_id, unk_id = 0, 1, 2

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        dup = [t for t, c in Counter(tokens).items() if c > 1]
        if dup:
            raise InputValidationError(f"tokens: expected unique tokens, got duplicates {dup[:5]}")
        bad = [t for t in tokens if t in _SPECIALS or not t or any(ch.isspace() for ch in t)]
        if bad:
            raise InputValidationError(
                f"tokens: expected non-empty tokens without whitespace and not {_SPECIALS}, got {bad[:5]}"
            )
        self.itos: list[str] = [*_SPECIALS, *tokens]
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        self.signatures: bool = all(t in self.stoi for t in UNK_SIGNATURES)

    @classmethod
    def build(
        cls, texts: Iterable[str], *, min_freq: int = 1, max_size: int | None = None, unk_signatures: bool = False
    ) -> WordVocab:
        """Vocabulary of the whitespace tokens of ``texts`` (most frequent first, ties alphabetical).

        Parameters
        ----------
        texts : iterable of str
            Input and output strings (one joint vocabulary, as T5 shares its embeddings).
        min_freq : int, keyword-only, default 1
            Drop tokens seen fewer times (they become ``<unk>``).
        max_size : int, keyword-only, optional
            Keep at most this many non-special tokens.
        unk_signatures : bool, keyword-only, default False
            Append the :data:`UNK_SIGNATURES` class tokens: unknown words are then encoded by their shape and
            suffix class (:func:`unk_signature`) instead of one ``<unk>``.
        """
        if isinstance(texts, str):
            raise InputValidationError("texts: expected an iterable of strings, got a single string")
        if min_freq < 1:
            raise InputValidationError(f"min_freq: expected >= 1, got {min_freq}")
        counts = Counter(tok for t in texts for tok in str(t).split())
        for s in _SPECIALS:
            counts.pop(s, None)
        items = sorted((kv for kv in counts.items() if kv[1] >= min_freq), key=lambda kv: (-kv[1], kv[0]))
        if max_size is not None:
            items = items[: int(max_size)]
        tokens = [t for t, _ in items]
        if unk_signatures:
            tokens += [t for t in UNK_SIGNATURES if t not in counts]
        return cls(tokens)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def encode(self, text: str, *, add_eos: bool = True) -> list[int]:
        """Ids of the whitespace tokens of ``text`` (unknown -> ``unk_id``), followed by ``eos_id``."""
        if not isinstance(text, str):
            raise InputValidationError(f"text: expected a string, got {type(text).__name__}")
        ids = [self.stoi[tok] if tok in self.stoi else self.stoi[self.unk_token(tok)] for tok in text.split()]
        return [*ids, self.eos_id] if add_eos else ids

    def unk_token(self, word: str) -> str:
        """The token an unknown ``word`` is encoded as: its class (:func:`unk_signature`) or ``<unk>``."""
        return unk_signature(word) if self.signatures else UNK

    def decode(self, ids: Iterable[int]) -> str:
        """Tokens up to the first ``eos``, skipping ``pad``, joined by single spaces."""
        out: list[str] = []
        for i in ids:
            i = int(i)
            if i == self.eos_id:
                break
            if i == self.pad_id:
                continue
            if not 0 <= i < len(self.itos):
                raise InputValidationError(f"ids: id {i} out of range for a vocabulary of {len(self.itos)}")
            out.append(self.itos[i])
        return " ".join(out)

    def coverage(self, texts: Iterable[str]) -> float:
        """Fraction of the whitespace tokens of ``texts`` that are in the vocabulary."""
        toks = [tok for t in texts for tok in t.split()]
        return float(sum(tok in self.stoi for tok in toks) / len(toks)) if toks else 1.0

    def to_list(self) -> list[str]:
        """The non-special tokens in id order (``WordVocab(v.to_list())`` rebuilds ``v``)."""
        return self.itos[len(_SPECIALS) :]
