"""Paper 2's "fluctuations are more frequent OOD" beyond the accuracy drop: each model's OOD curve against its ID
curve at the OOD accuracy.

A curve's fluctuations (paper 2, Eq. 1: :func:`helpers.selective.diagnostics.fluctuations`) grow as accuracy falls:
with more wrong answers among the confident ones, accuracy rises with coverage more often.  Comparing a model's OOD
count with its ID count therefore mostly restates that OOD accuracy is lower.  :func:`matched_fluctuations` compares
the OOD count with the ID count **at matched accuracy**: ID examples drawn (``matches`` times) with the OOD split's
size and its share of right answers, the right ones from the ID right answers and the wrong ones from the ID wrong
answers, so the ID law of confidence given correctness is kept and only the accuracy is moved.  A model counts when
its OOD curve has more fluctuations than the mean of its matched ID curves.

The claim's null world (:func:`world`, ``kind="null"``): OOD answers drawn from the ID law with accuracy 0.10 lower
(only accuracy drops); its effect world: the same drop with confidence that separates right from wrong less well
OOD (separation 3 ID, 1 OOD).  Both are ours, fixed before the claim was first decided: paper 2 shows its curves,
not a separation.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from helpers.claims import Decision, share_decision
from helpers.experiments.p2_selective.power import MODELS, N_EXAMPLES, answers
from helpers.selective.diagnostics import fluctuations

__all__ = ["matched_fluctuations", "world", "MATCHES"]

#: matched ID draws per model
MATCHES = 20
#: (ID law, OOD law) per world: (accuracy p, separation s) of :func:`helpers.experiments.p2_selective.power.answers`
#: ("steadier": the tests' failing case, OOD confidence separating better than ID)
LAWS = {"null": ((0.85, 3.0), (0.75, 3.0)), "effect": ((0.85, 3.0), (0.75, 1.0)),
        "steadier": ((0.85, 3.0), (0.75, 30.0))}


def matched_fluctuations(splits: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]], *, decimals: int = 2,
                         matches: int = MATCHES, seed: int = 0, **_: object) -> Decision:  # fmt: skip
    """Share of models whose OOD curve fluctuates more than their ID curve at the OOD accuracy (module docstring),
    with its exact binomial interval over models.  Other keyword arguments (the claims' common inputs) are ignored.

    >>> rng = np.random.default_rng(0)
    >>> same = {m: answers(rng, 300, "ranking", (0.8, 3.0)) for m in ("a", "b")}
    >>> d = matched_fluctuations({"id": same, "ood": same})
    >>> d.setups, list(d.detail.columns)
    (2, ['model', 'accuracy_id', 'accuracy_ood', 'fluctuations_ood', 'fluctuations_id_matched'])
    """
    rng = np.random.default_rng(seed)
    rows = []
    for model in sorted(splits["ood"]):
        conf_id, right_id = (np.asarray(v) for v in splits["id"][model])
        conf_ood, right_ood = (np.asarray(v) for v in splits["ood"][model])
        right_id, right_ood = right_id.astype(bool), right_ood.astype(bool)
        n, k = len(right_ood), int(round(right_ood.mean() * len(right_ood)))
        pools = (np.flatnonzero(right_id), np.flatnonzero(~right_id))
        counts = []
        if any(size and not len(pool) for pool, size in zip(pools, (k, n - k))):  # no ID answer of a kind needed
            counts.append(float("nan"))
        for _ in range(matches if not counts else 0):
            take = np.concatenate([rng.choice(pool, size, replace=size > len(pool))
                                   for pool, size in zip(pools, (k, n - k)) if size])  # fmt: skip
            counts.append(fluctuations(conf_id[take], right_id[take], decimals=decimals).count)
        rows.append({"model": model, "accuracy_id": float(right_id.mean()), "accuracy_ood": float(right_ood.mean()),
                     "fluctuations_ood": fluctuations(conf_ood, right_ood, decimals=decimals).count,
                     "fluctuations_id_matched": float(np.mean(counts))})  # fmt: skip
    detail = pd.DataFrame(rows)
    more = (detail["fluctuations_ood"] > detail["fluctuations_id_matched"]).where(
        detail["fluctuations_id_matched"].notna())  # a model with no ID answer of a kind it needs is left out
    return share_decision(more, detail=detail)


def world(rng: np.random.Generator, kind: str, n: int = N_EXAMPLES) -> dict:
    """The claim's inputs in world ``kind`` ("null", "effect", "steadier"): ten models, ``n`` ID and ``n`` OOD
    answers each."""
    law_id, law_ood = LAWS[kind]
    return {"splits": {"id": {m: answers(rng, n, "ranking", law_id) for m in MODELS},
                       "ood": {m: answers(rng, n, "ranking", law_ood) for m in MODELS}}}  # fmt: skip
