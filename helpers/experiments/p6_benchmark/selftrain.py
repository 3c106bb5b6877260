"""Digits <-> USPS and Amazon domain pairs through notebook 03's machinery: ShiftTasks + self-training rows.

For each source model ``f`` of :mod:`helpers.experiments.p3_selftraining` (a TF-IDF MLP for Amazon, a CNN-BN for
8x8 digits) the benchmark gets

* a :class:`ShiftTask` (reference = the source's held-out test part, targets = the pairs' target domains,
  partner = the first Ens-Avg-Conf member, i.e. the same architecture trained with seed ``seed + 1``), on which the
  logits estimators run; no meta-set, so the regressed-score methods do not apply.  The logits are the log of
  03's cached softmax probabilities (softmax(log p) = p, so every probability-based method sees 03's numbers);
* rows for the self-training ensembles of paper 3 (``self_training_ri``: random-init members, ``self_training_rm``:
  representation-matching members; Algorithm 1, :func:`pair_self_training`) on the same ``f`` and targets.  Their
  interval is the percentile bootstrap over target examples of the final error flags (the fitted ensemble held
  fixed), like every other point estimator here; ``seconds`` is the wall time of the call (≈0 when cached).

``f`` and every ensemble are trained and cached by 03's helpers (namespace ``03_self_training``), so with 03's
:class:`RunConfig` the cache is shared; the benchmark's small default configurations below train in seconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helpers.benchmark.engine import external_rows
from helpers.benchmark.task import LabelledLogits, ShiftTask
from helpers.estimators.bootstrap import percentile_interval

__all__ = ["SelfTrainingGrid", "amazon_config", "digits_config", "selftraining_grid", "SELF_TRAINING_METHODS"]

SELF_TRAINING_METHODS = ("self_training_ri", "self_training_rm")


def amazon_config(**overrides):
    """Small 03-style config for Amazon pairs (TF-IDF MLP f, DANN MLP members); paper values in 03's RunConfig."""
    from helpers.experiments.p3_selftraining import RunConfig

    base = dict(typical_model="tfidf_mlp", dann_model="dann_mlp", f_epochs=4, dann_epochs=4, batch_size=128,
                num_models=3, rounds=2, ens_size=1, gamma=0.1)  # fmt: skip
    return RunConfig(**{**base, **overrides})


def digits_config(**overrides):
    """Small 03-style config for 8x8 digits pairs (CNN-BN f, DANN-digits members)."""
    from helpers.experiments.p3_selftraining import RunConfig

    base = dict(typical_model="cnn_bn", dann_model="dann_digits", f_epochs=5, dann_epochs=5, batch_size=128,
                num_models=3, rounds=2, ens_size=1, gamma=0.1, model_kwargs={"cnn_bn": {"image_size": 8}})  # fmt: skip
    return RunConfig(**{**base, **overrides})


def _log(p: np.ndarray) -> np.ndarray:
    return np.log(np.clip(np.asarray(p, dtype=np.float64), 1e-12, None))


@dataclass
class SelfTrainingGrid:
    """ShiftTasks (one per source model) and the self-training rows on their targets."""

    tasks: list[ShiftTask]
    rows: pd.DataFrame


def _boot_flags(errors: np.ndarray, *, n_boot: int, level: float, seed: int) -> tuple[float, float]:
    """Percentile interval of 1 - mean(errors) over ``n_boot`` resamples (exact binomial replicates)."""
    n = errors.size
    p = float(1.0 - errors.mean())
    reps = np.random.default_rng(seed).binomial(n, p, size=n_boot) / n
    return percentile_interval(reps, level)


def selftraining_grid(
    pairs: Sequence,
    cfg,
    *,
    family: str,
    self_training_pairs: Sequence[str] = (),
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> SelfTrainingGrid:
    """Group ``pairs`` (:class:`DomainPair` of one kind) by source into ShiftTasks; run RI/RM on the named pairs.

    Parameters
    ----------
    pairs : DomainPair sequence from :func:`amazon_pairs` / :func:`digits_pairs`
    cfg : RunConfig (e.g. :func:`amazon_config`, :func:`digits_config`; ``ens_size >= 1``: member 1 is the partner)
    family : the benchmark family of every task (e.g. ``"amazon"``, ``"digits-usps"``)
    self_training_pairs : ``"source->target"`` names to run the RI and RM ensembles on
    """
    from helpers.errors import InputValidationError
    from helpers.experiments.p3_selftraining import (
        _probs,
        _supervised_pool,
        pair_baselines,
        pair_self_training,
    )

    if cfg.ens_size < 1:
        raise InputValidationError(f"cfg.ens_size: expected >= 1 (member 1 is the agreement partner), got {cfg.ens_size}")
    names = {f"{p.source}->{p.target}" for p in pairs}
    unknown = sorted(set(self_training_pairs) - names)
    if unknown:
        raise InputValidationError(f"self_training_pairs: {unknown} are not among the pairs {sorted(names)}")
    by_source: dict[str, list] = {}
    for p in pairs:
        by_source.setdefault(p.source, []).append(p)
    tasks, rows = [], []
    for source, group in by_source.items():
        base = {p.target: pair_baselines(p, cfg) for p in group}
        first = group[0]
        partner_model = _supervised_pool(first, cfg, "typical", [cfg.seed + 1])[0]
        held = base[first.target]["f_heldout"]
        task_name = f"{family}/{source}/{cfg.typical_model}"
        tasks.append(
            ShiftTask(
                name=task_name,
                family=family,
                reference=LabelledLogits(_log(held), first.y_heldout),
                targets={p.target: LabelledLogits(_log(base[p.target]["f_target"]), p.y_target) for p in group},
                partner={
                    "reference": _log(_probs(partner_model, first.x_heldout)),
                    **{p.target: _log(base[p.target]["ens_target"][0]) for p in group},
                },
                info={"model": cfg.typical_model, "source": source, "partner": f"{cfg.typical_model} seed {cfg.seed + 1}"},
            )
        )
        for p in group:
            if f"{p.source}->{p.target}" not in self_training_pairs:
                continue
            true_acc = float((base[p.target]["f_target"].argmax(1) == p.y_target).mean())
            for method in SELF_TRAINING_METHODS:
                t0 = time.perf_counter()
                res = pair_self_training(p, cfg, method=method[-2:])
                secs = time.perf_counter() - t0
                lo, hi = _boot_flags(np.asarray(res.errors, dtype=bool), n_boot=n_boot, level=level, seed=seed)
                est = {"estimate": res.estimated_accuracy, "true_accuracy": true_acc, "lower": lo, "upper": hi,
                       "n": int(p.y_target.size)}  # fmt: skip
                rows.append(
                    external_rows(
                        task=task_name,
                        family=family,
                        method=method,
                        kind="self-training ensemble",
                        estimates={p.target: est},
                        seconds=secs,
                    )
                )
    frame = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    return SelfTrainingGrid(tasks, frame)
