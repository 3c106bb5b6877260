"""Decoding constraints of the seq2seq parser: exact output length, a token set, and per-position token sets.

A tagger must emit exactly one tag per input word (``lengths``), drawn from the tag set (``allowed_ids``), and —
with a *tag dictionary* (:func:`helpers.seq2seq.tagging.tag_dictionary`, the classical constraint of dictionary-based
taggers such as Merialdo 1994) — for a word seen often enough in training, one of the tags it carried there
(``position_ids``).  :class:`OutputConstraint` applies all three inside ``transformers``' beam search by setting the
scores of inadmissible tokens to ``-inf``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["OutputConstraint", "constraint_kwargs"]


class OutputConstraint:
    """A ``transformers`` logits processor that fixes each output's length and, optionally, its token sets.

    Row ``r`` of a ``generate`` batch with ``num_beams`` beams belongs to example ``r // num_beams``.  After ``t``
    generated tokens (the decoder start token excluded), ``</s>`` is forbidden while ``t < length`` and forced at
    ``t = length``; tokens outside ``allowed_ids`` (plus ``</s>``) are forbidden; with ``position_ids`` (per
    example, per output position: the admissible ids, or ``None`` for no extra limit), the token at position ``t``
    must also be one of that position's ids.  Scores are set to ``-inf``, so the beam's log-probability ranks only
    admissible continuations (their probabilities are not renormalised; the reported confidence comes from
    :func:`helpers.seq2seq.parser.sequence_probability`, i.e. the unconstrained model).
    """

    def __init__(
        self,
        lengths: np.ndarray | None,
        allowed_ids: Sequence[int] | None,
        *,
        num_beams: int,
        eos_id: int,
        vocab_size: int,
        position_ids: Sequence[Sequence[Sequence[int] | None]] | None = None,
    ):
        self.lengths = None if lengths is None else torch.as_tensor(np.repeat(lengths, num_beams))
        self.eos_id = int(eos_id)
        self.mask = None
        if allowed_ids is not None:
            self.mask = torch.ones(vocab_size, dtype=torch.bool)
            self.mask[list(allowed_ids) + [self.eos_id]] = False  # True = forbidden
        self.ids = self.forbid = None
        if position_ids is not None:  # forbidden[row, t, j]: id ids[j] is inadmissible at position t
            # every id a position could take: the allowed set (or the whole vocabulary) plus the listed ones
            universe = range(vocab_size) if allowed_ids is None else allowed_ids
            ids = sorted(
                set(universe) | {i for ex in position_ids for pos in ex if pos is not None for i in pos}
            )
            col = {i: j for j, i in enumerate(ids)}
            width = max((len(ex) for ex in position_ids), default=0)
            forbid = torch.zeros(len(position_ids), width, len(ids), dtype=torch.bool)
            for r, ex in enumerate(position_ids):
                for t, pos in enumerate(ex):
                    if pos is not None:
                        forbid[r, t] = True
                        forbid[r, t, [col[i] for i in pos]] = False
            self.ids = torch.as_tensor(ids, dtype=torch.long)
            self.forbid = forbid.repeat_interleave(num_beams, dim=0)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        scores = scores.clone()
        t = input_ids.shape[1] - 1  # tokens generated so far
        if self.mask is not None:
            scores[:, self.mask.to(scores.device)[: scores.shape[1]]] = -float("inf")
        if self.forbid is not None and t < self.forbid.shape[1] and len(self.ids):
            ids = self.ids.to(scores.device)
            sub = scores[:, ids]
            sub[self.forbid[:, t].to(scores.device)] = -float("inf")
            scores[:, ids] = sub
        if self.lengths is not None:
            lengths = self.lengths.to(scores.device)
            done = lengths <= t
            scores[done] = -float("inf")
            scores[done, self.eos_id] = 0.0
            scores[~done, self.eos_id] = -float("inf")
        return scores


def constraint_kwargs(lengths, allowed_ids, idx, num_beams, vocab, vocab_size, position_ids=None) -> dict:
    """``generate`` keyword arguments for :class:`OutputConstraint` on the examples ``idx`` (none if unconstrained)."""
    if lengths is None and allowed_ids is None and position_ids is None:
        return {}
    from transformers import LogitsProcessorList

    proc = OutputConstraint(
        None if lengths is None else lengths[idx], allowed_ids, num_beams=num_beams, eos_id=vocab.eos_id,
        vocab_size=vocab_size, position_ids=None if position_ids is None else [position_ids[i] for i in idx],
    )  # fmt: skip
    return {"logits_processor": LogitsProcessorList([proc])}
