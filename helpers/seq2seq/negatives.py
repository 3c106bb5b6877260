"""Training data for correctness discriminators: negatives mined from early parser checkpoints (paper 1, Sec. 3.1).

Paper 1 (Sec. 3.1, 4.2, App. B.1): "we use the first 5 checkpoints of the parser and validate them on the
parser's training set.  We select negative examples from beam predictions of these checkpoints"; positives are
the gold pairs of the training set; "if a task provides an in-distribution development set ... we use the same
method to create the development set for the discriminator".  "We randomly sample incorrect predictions from the
decoded beam predictions" (Sec. 4.2): here up to ``per_example`` distinct incorrect beams per input and checkpoint.

Beam outputs of every snapshot are cached with :func:`helpers.cache.cached_arrays` (namespace
``seq2seq_beams``), so an interrupted run does not decode them again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from helpers.cache import cached_arrays
from helpers.errors import InputValidationError

__all__ = ["DiscriminatorData", "mine_negatives", "discriminator_dataset", "snapshot_beams"]


@dataclass
class DiscriminatorData:
    """``(input, predicted output) -> label`` examples; label 1 = Correct, 0 = Incorrect."""

    inputs: list[str]
    outputs: list[str]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.inputs)

    @property
    def n_positive(self) -> int:
        return int(self.labels.sum())

    @property
    def n_negative(self) -> int:
        return int(len(self.labels) - self.labels.sum())

    def items(self) -> list[tuple[tuple[str, str], int]]:
        """``((input, output), label)`` items for a text-pair collator."""
        return [((a, b), int(y)) for a, b, y in zip(self.inputs, self.outputs, self.labels)]


def _norm(s: str) -> str:
    return " ".join(s.split())


def mine_negatives(
    beams: Sequence[Sequence[Sequence[str]]],
    inputs: Sequence[str],
    golds: Sequence[str],
    *,
    per_example: int = 1,
    seed: int = 0,
) -> tuple[list[str], list[str]]:
    """Incorrect beam outputs of several checkpoints (paper 1, Sec. 3.1).

    Parameters
    ----------
    beams : sequence over checkpoints of sequences over examples of beam outputs
        ``beams[c][i]`` = the beam (list of str) of checkpoint ``c`` on input ``i``.
    inputs, golds : sequences of str
        The inputs the beams were decoded from and their gold outputs.
    per_example : int, keyword-only, default 1
        At most this many incorrect beams, drawn at random, per input and checkpoint.
    seed : int, keyword-only

    Returns
    -------
    (neg_inputs, neg_outputs)
        Distinct ``(input, output)`` pairs whose output differs from the gold one (exact match after whitespace
        normalisation), in checkpoint then example order.
    """
    if len(inputs) != len(golds):
        raise InputValidationError(
            f"inputs/golds: expected equal lengths, got {len(inputs)} and {len(golds)}"
        )
    if per_example < 1:
        raise InputValidationError(f"per_example: expected >= 1, got {per_example}")
    rng = np.random.default_rng(seed)
    seen: set[tuple[str, str]] = set()
    out_in: list[str] = []
    out_out: list[str] = []
    for c, ckpt in enumerate(beams):
        if len(ckpt) != len(inputs):
            raise InputValidationError(
                f"beams[{c}]: expected one beam per input ({len(inputs)}), got {len(ckpt)}"
            )
        for x, g, beam in zip(inputs, golds, ckpt):
            gold = _norm(g)
            wrong = list(dict.fromkeys(_norm(b) for b in beam if _norm(b) != gold))
            if not wrong:
                continue
            pick = rng.choice(len(wrong), size=min(per_example, len(wrong)), replace=False)
            for j in sorted(pick):
                key = (_norm(x), wrong[j])
                if key not in seen:
                    seen.add(key)
                    out_in.append(x)
                    out_out.append(wrong[j])
    return out_in, out_out


def discriminator_dataset(
    inputs: Sequence[str],
    golds: Sequence[str],
    neg_inputs: Sequence[str],
    neg_outputs: Sequence[str],
    *,
    max_negative_ratio: float | None = None,
    shuffle: bool = True,
    seed: int = 0,
) -> DiscriminatorData:
    """Positives (gold pairs, label 1) plus mined negatives (label 0).

    Parameters
    ----------
    max_negative_ratio : float, keyword-only, optional
        Keep at most ``ratio × #positives`` negatives (a random subset); ``None`` keeps all (paper 1 states no
        balancing).
    shuffle : bool, keyword-only
        Shuffle the examples (seeded).
    """
    if len(inputs) != len(golds) or len(neg_inputs) != len(neg_outputs):
        raise InputValidationError("inputs/golds and neg_inputs/neg_outputs: expected pairwise equal lengths")
    rng = np.random.default_rng(seed)
    neg_idx = np.arange(len(neg_inputs))
    if max_negative_ratio is not None:
        if max_negative_ratio < 0:
            raise InputValidationError(f"max_negative_ratio: expected >= 0, got {max_negative_ratio}")
        cap = int(round(max_negative_ratio * len(inputs)))
        if cap < len(neg_idx):
            neg_idx = np.sort(rng.choice(len(neg_idx), size=cap, replace=False))
    a = list(inputs) + [neg_inputs[i] for i in neg_idx]
    b = list(golds) + [neg_outputs[i] for i in neg_idx]
    y = np.concatenate([np.ones(len(inputs), dtype=np.int64), np.zeros(len(neg_idx), dtype=np.int64)])
    if shuffle:
        order = rng.permutation(len(a))
        a, b, y = [a[i] for i in order], [b[i] for i in order], y[order]
    return DiscriminatorData(a, b, y)


def snapshot_beams(
    decode: Callable[[int], list[list[str]]],
    steps: Sequence[int],
    *,
    key: dict,
) -> list[list[list[str]]]:
    """Beams of every snapshot, each cached under ``key + {"step": step}`` (namespace ``seq2seq_beams``).

    Parameters
    ----------
    decode : callable(step) -> list (per input) of beams (list of str)
        Loads the snapshot of ``step`` and beam-decodes the inputs; called only on a cache miss.
    steps : sequence of int
        The snapshot steps.
    key : dict
        Identifies parser, data and decoding parameters.
    """
    out = []
    for s in steps:
        arr = cached_arrays(
            "seq2seq_beams",
            {**key, "step": int(s)},
            lambda s=s: {"beams": np.array(decode(int(s)), dtype=str)},
        )["beams"]
        out.append([list(map(str, row)) for row in arr])
    return out
