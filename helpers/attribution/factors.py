"""Scalar factors computed from one example's token attributions (paper 4, §5 and §6.1).

A factor maps the attributions a = (a_1, …, a_T) of one prediction to a number meant to track how closely the
model follows a heuristic; the model-level score is the mean over the probe examples (§3), and models are ranked
by it.  The paper's formulas lost their symbols in our copy, so each function states the reading used here.

Notation: S1 / S2 are the non-special tokens of the first / second text of a pair (premise / hypothesis,
question 1 / question 2); a^{S1}, a^{S2} their attributions.  By default every example's attributions are first
L1-normalised (Σ_t |a_t| = 1, special tokens included) so that factors are comparable across examples and models
(the paper notes that "our factors depend on how explanations are normalized between different examples", §10).

Factors (``FACTORS`` maps the names to functions and the ranking direction used a priori):

* window (IRREG / VERB / ADJ, §5): Σ_{j=i−w}^{i+w} a_j around the feature-critical word i (w = 1), clipped to the
  sequence.  High = the decision rests on the linguistic feature → ranked *better* (``higher_is_better=True``).
* MAX-DIFF (§6.1): max a^{S1} − max a^{S2}.
* SUM-DIFF (§6.1): Σ a^{S1} − Σ a^{S2}.
* INDEX-DIFF (§6.1): Σ over word types w shared by S1 and S2 of (mean a^{S1} on w − mean a^{S2} on w).
* FIRST-TOK (§6.1): the attribution on the first separator (the special token closing segment 0).
* CONST (§6.1, HANS-CON): Σ of the attributions on the premise's control words ("unless", "if", …).
  High = the model looks at the word that cancels the entailment → ranked better.
* SWAP-AVG (§6.1, PAWS): mean attribution over the swapped tokens of both sentences.  High → ranked better.
* SWAP-MAX-DIFF (§6.1, PAWS): the highest-magnitude attribution among swapped tokens of S1 minus that of S2.

For the general factors (MAX-DIFF, SUM-DIFF, INDEX-DIFF, FIRST-TOK, SWAP-MAX-DIFF) we use the paper's default
rule (§3): "the higher the average factor value (the more it follows the heuristic), the lower the relative
ranking" (``higher_is_better=False``).  The directions are fixed before looking at any OOD accuracy.

Example metadata (positions of the critical word, control words, swapped words) are given as
``(segment, word_index)`` pairs, where ``word_index`` counts the non-special tokens of that segment from 0: with
the word-level :class:`~helpers.attribution.attributions.WordTokenizer` this is the word's index in its text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError, UnknownNameError

__all__ = [
    "normalize",
    "window_factor",
    "max_diff",
    "sum_diff",
    "index_diff",
    "first_tok",
    "const_factor",
    "swap_avg",
    "swap_max_diff",
    "Factor",
    "FACTORS",
    "factor_values",
    "factor_matrix",
    "token_positions",
]


def _arr(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.size == 0:
        raise InputValidationError(f"{name}: expected a non-empty attribution vector")
    if not np.all(np.isfinite(a)):
        raise InputValidationError(f"{name}: attributions must be finite")
    return a


def normalize(scores: Sequence[float], *, kind: str | None = "l1") -> np.ndarray:
    """Scale one example's attributions: ``"l1"`` → Σ|a| = 1 (all-zero vectors stay zero); ``None`` → unchanged."""
    a = _arr(scores, "scores")
    if kind is None:
        return a
    if kind != "l1":
        raise InputValidationError(f"kind: expected 'l1' or None, got {kind!r}")
    total = np.abs(a).sum()
    return a / total if total > 0 else a


def _segments(scores, segments, special) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = _arr(scores, "scores")
    seg = np.asarray(segments).reshape(-1)
    sp = np.zeros(a.size, bool) if special is None else np.asarray(special, bool).reshape(-1)
    if seg.size != a.size or sp.size != a.size:
        raise InputValidationError(f"scores, segments and special must have one entry per token ({a.size})")
    return a, seg, sp


def _seg_scores(a, seg, sp, s: int) -> np.ndarray:
    out = a[(seg == s) & ~sp]
    if out.size == 0:
        raise InputValidationError(f"segment {s} has no (non-special) tokens: pair factors need text pairs")
    return out


def window_factor(scores: Sequence[float], index: int, *, width: int = 1) -> float:
    """Σ_{j=i−w}^{i+w} a_j, the attribution mass around the feature-critical token i (paper 4, §5).

    ``index`` is a position in ``scores``; the window is clipped at the sequence ends.
    """
    a = _arr(scores, "scores")
    if not 0 <= int(index) < a.size:
        raise InputValidationError(f"index: expected 0 ≤ index < {a.size}, got {index}")
    if width < 0:
        raise InputValidationError(f"width: expected ≥ 0, got {width}")
    return float(a[max(0, index - width) : index + width + 1].sum())


def max_diff(
    scores: Sequence[float], segments: Sequence[int], special: Sequence[bool] | None = None
) -> float:
    """MAX-DIFF = max a^{S1} − max a^{S2} (paper 4, §6.1)."""
    a, seg, sp = _segments(scores, segments, special)
    return float(_seg_scores(a, seg, sp, 0).max() - _seg_scores(a, seg, sp, 1).max())


def sum_diff(
    scores: Sequence[float], segments: Sequence[int], special: Sequence[bool] | None = None
) -> float:
    """SUM-DIFF = Σ a^{S1} − Σ a^{S2} (paper 4, §6.1)."""
    a, seg, sp = _segments(scores, segments, special)
    return float(_seg_scores(a, seg, sp, 0).sum() - _seg_scores(a, seg, sp, 1).sum())


def index_diff(
    scores: Sequence[float],
    segments: Sequence[int],
    tokens: Sequence[str],
    special: Sequence[bool] | None = None,
) -> float:
    """INDEX-DIFF = Σ_{w ∈ S1 ∩ S2} (mean_{t ∈ S1, tok_t = w} a_t − mean_{t ∈ S2, tok_t = w} a_t) (paper 4, §6.1).

    Reading of "the difference of attributions between shared words in S1 and S2": per shared word type, the mean
    attribution of its occurrences in S1 minus that in S2, summed over types (case-insensitive); 0 when no word is
    shared.
    """
    a, seg, sp = _segments(scores, segments, special)
    tok = np.asarray([str(t).lower() for t in tokens])
    if tok.size != a.size:
        raise InputValidationError(f"tokens: expected {a.size} entries, got {tok.size}")
    s1, s2 = (seg == 0) & ~sp, (seg == 1) & ~sp
    shared = sorted(set(tok[s1]) & set(tok[s2]))
    return float(sum(a[s1 & (tok == w)].mean() - a[s2 & (tok == w)].mean() for w in shared))


def first_tok(scores: Sequence[float], segments: Sequence[int], special: Sequence[bool]) -> float:
    """FIRST-TOK: the attribution on the first separator token -- the last special token of segment 0 (§6.1)."""
    a, seg, sp = _segments(scores, segments, special)
    idx = np.flatnonzero(sp & (seg == 0))
    idx = idx[idx > 0] if idx.size > 1 else idx
    if idx.size == 0:
        raise InputValidationError("first_tok: no separator (special token in segment 0) in this example")
    return float(a[idx[-1]])


def const_factor(scores: Sequence[float], positions: Sequence[int]) -> float:
    """CONST: Σ of the attributions on the premise's control words at ``positions`` (paper 4, §6.1; 0 if none)."""
    a = _arr(scores, "scores")
    pos = _positions(positions, a.size)
    return float(a[pos].sum()) if pos.size else 0.0


def swap_avg(scores: Sequence[float], positions: Sequence[int]) -> float:
    """SWAP-AVG: mean attribution over the swapped tokens of both sentences (paper 4, §6.1; 0 if none)."""
    a = _arr(scores, "scores")
    pos = _positions(positions, a.size)
    return float(a[pos].mean()) if pos.size else 0.0


def swap_max_diff(scores: Sequence[float], positions_1: Sequence[int], positions_2: Sequence[int]) -> float:
    """SWAP-MAX-DIFF: a at argmax |a| over swapped tokens of S1 minus the same over S2 (paper 4, §6.1)."""
    a = _arr(scores, "scores")
    p1, p2 = _positions(positions_1, a.size), _positions(positions_2, a.size)
    if p1.size == 0 or p2.size == 0:
        return 0.0
    return float(a[p1][np.argmax(np.abs(a[p1]))] - a[p2][np.argmax(np.abs(a[p2]))])


def _positions(positions: Sequence[int], n: int) -> np.ndarray:
    pos = np.asarray(list(positions), dtype=int).reshape(-1)
    if pos.size and (pos.min() < 0 or pos.max() >= n):
        raise InputValidationError(f"positions must lie in [0, {n}), got {pos.tolist()}")
    return pos


@dataclass(frozen=True)
class Factor:
    """A named factor: ``fn(example_frame, meta_row) -> float`` and its a-priori ranking direction."""

    name: str
    fn: Callable[[pd.DataFrame, Any], float]
    higher_is_better: bool
    needs: tuple[str, ...] = ()


def token_positions(g: pd.DataFrame, pairs: Any) -> list[int]:
    """Map ``(segment, word_index)`` pairs to positions in the example's token sequence.

    With a ``word`` column (sub-word tokenizers, see :class:`~helpers.attribution.attributions.Encoded`) every
    token of the word is returned (in order), so a factor sums / averages over the word's pieces; without it the
    ``word_index``-th non-special token of the segment.
    """
    out = []
    nonspecial = g[~g["special"].to_numpy()]
    if "word" in g.columns:
        for seg, idx in pairs or []:
            hit = (nonspecial["segment"].to_numpy() == int(seg)) & (nonspecial["word"].to_numpy() == int(idx))
            if not hit.any():
                raise InputValidationError(f"word {idx} of segment {seg} is not in this example (truncated?)")
            out.extend(int(p) for p in nonspecial["position"].to_numpy()[hit])
        return out
    for seg, idx in pairs or []:
        rows = nonspecial[nonspecial["segment"].to_numpy() == int(seg)]
        if not 0 <= int(idx) < len(rows):
            raise InputValidationError(f"word index {idx} out of range for segment {seg} ({len(rows)} words)")
        out.append(int(rows["position"].iloc[int(idx)]))
    return out


def _a(g: pd.DataFrame) -> np.ndarray:
    return g["score"].to_numpy()


FACTORS: dict[str, Factor] = {
    "WINDOW": Factor(
        "WINDOW",
        lambda g, m: window_factor(_a(g), token_positions(g, [m["critical"]])[0]),
        True,
        ("critical",),
    ),
    "MAX-DIFF": Factor("MAX-DIFF", lambda g, m: max_diff(_a(g), g["segment"], g["special"]), False),
    "SUM-DIFF": Factor("SUM-DIFF", lambda g, m: sum_diff(_a(g), g["segment"], g["special"]), False),
    "INDEX-DIFF": Factor(
        "INDEX-DIFF", lambda g, m: index_diff(_a(g), g["segment"], g["token"], g["special"]), False
    ),
    "FIRST-TOK": Factor("FIRST-TOK", lambda g, m: first_tok(_a(g), g["segment"], g["special"]), False),
    "CONST": Factor(
        "CONST", lambda g, m: const_factor(_a(g), token_positions(g, m["control"])), True, ("control",)
    ),
    "SWAP-AVG": Factor(
        "SWAP-AVG", lambda g, m: swap_avg(_a(g), token_positions(g, m["swapped"])), True, ("swapped",)
    ),
    "SWAP-MAX-DIFF": Factor(
        "SWAP-MAX-DIFF",
        lambda g, m: swap_max_diff(
            _a(g),
            token_positions(g, [p for p in m["swapped"] if p[0] == 0]),
            token_positions(g, [p for p in m["swapped"] if p[0] == 1]),
        ),
        False,
        ("swapped",),
    ),
}
# the paper's per-dataset names for the window factor (§5)
for _alias in ("IRREG", "VERB", "ADJ"):
    FACTORS[_alias] = Factor(_alias, FACTORS["WINDOW"].fn, True, ("critical",))


def factor_values(
    attributions: pd.DataFrame,
    factor: str,
    *,
    meta: pd.DataFrame | None = None,
    normalize_kind: str | None = "l1",
) -> pd.DataFrame:
    """Per-example factor values for every (model, method) in a tidy attribution frame.

    Parameters
    ----------
    attributions : DataFrame
        Output of :func:`~helpers.attribution.attributions.attribute` (several models/methods may be stacked).
    factor : str
        A key of :data:`FACTORS`.
    meta : DataFrame, optional
        Indexed by example id, with the columns the factor needs (``critical``: a ``(segment, word_index)``
        pair; ``control`` / ``swapped``: lists of such pairs).
    normalize_kind : {"l1", None}
        Per-example normalisation applied before the factor (see :func:`normalize`).

    Returns
    -------
    DataFrame with columns ``model, method, example, factor, value``.
    """
    if factor not in FACTORS:
        raise UnknownNameError("factor", factor, sorted(FACTORS))
    spec = FACTORS[factor]
    missing = [c for c in spec.needs if meta is None or c not in meta.columns]
    if missing:
        raise InputValidationError(f"factor {factor} needs meta columns {missing}")
    rows = []
    for (model, method, example), g in attributions.groupby(["model", "method", "example"], sort=True):
        g = g.sort_values("position")
        if normalize_kind is not None:
            g = g.assign(score=normalize(g["score"].to_numpy(), kind=normalize_kind))
        m = meta.loc[example] if meta is not None and spec.needs else None
        rows.append((model, method, example, factor, spec.fn(g, m)))
    return pd.DataFrame(rows, columns=["model", "method", "example", "factor", "value"])


def factor_matrix(values: pd.DataFrame, models: Sequence[str], *, method: str | None = None) -> np.ndarray:
    """Pivot :func:`factor_values` output to an array ``(n_models, n_examples)`` in the order of ``models``."""
    v = values if method is None else values[values["method"] == method]
    table = v.pivot_table(index="model", columns="example", values="value", aggfunc="first")
    absent = [m for m in models if m not in table.index]
    if absent:
        raise InputValidationError(f"models without factor values: {absent}")
    return table.loc[list(models)].to_numpy(dtype=float)
