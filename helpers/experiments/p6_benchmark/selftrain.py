"""Digits <-> USPS and Amazon domain pairs through notebook 03's machinery: ShiftTasks + self-training rows.

For each source model ``f`` of :mod:`helpers.experiments.p3_selftraining` (a TF-IDF MLP for Amazon, a CNN-BN for
8x8 digits) the benchmark gets

* a :class:`ShiftTask` (reference = the source's held-out test part, targets = the pairs' target domains,
  partner = the first Ens-Avg-Conf member, i.e. the same architecture trained with seed ``seed + 1``), on which the
  logits estimators run.  The logits are the log of 03's softmax probabilities (softmax(log p) = p, so every
  probability-based method sees 03's numbers).  With ``meta_specs`` (notebook 05's synthetic shifts of the same
  modality, :func:`helpers.experiments.p5_mde.metaset_specs`) the task also gets a meta-set: ``f``'s and the
  partner's outputs on the held-out source part under every shift (corrupted 8x8 images; perturbed review texts
  through the source's TF-IDF), so the regressed-score methods and the stacked estimator run on it as on 05's tasks;
  without it they do not apply;
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
from functools import partial

import numpy as np
import pandas as pd

from helpers.benchmark.engine import external_rows
from helpers.benchmark.task import LabelledLogits, ShiftTask
from helpers.cache import cache_key, cached_arrays
from helpers.data.metaset import ShiftSpec, apply_image_shift, apply_text_shift
from helpers.estimators.bootstrap import percentile_interval

__all__ = [
    "SelfTrainingGrid", "amazon_config", "digits_config", "selftraining_grid", "selftraining_grid_by_source",
    "SELF_TRAINING_METHODS",
]  # fmt: skip

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


def shifted_heldout(pair, spec: ShiftSpec) -> np.ndarray:
    """Model inputs of ``pair``'s held-out source part under one synthetic shift: the texts perturbed and
    featurised when the pair keeps them (``raw_heldout``, Amazon), else the [0, 1] images corrupted (8x8 digits)."""
    if pair.raw_heldout is not None:
        texts = apply_text_shift(pair.raw_heldout, spec)
        return pair.featurize(texts) if pair.featurize is not None else np.asarray(texts)
    if np.ndim(pair.x_heldout) not in (3, 4):
        from helpers.errors import InputValidationError

        raise InputValidationError(
            f"{pair.source}: a meta-set needs the held-out inputs as (n, H, W[, C]) images in [0, 1] or the raw texts "
            f"(DomainPair.raw_heldout + featurize); got features of shape {np.shape(pair.x_heldout)} and no raw inputs"
        )
    return apply_image_shift(pair.x_heldout, spec, value_range=(0.0, 1.0)).astype(np.float32)


def _meta_outputs(pair, cfg, f, partner, specs: Sequence[ShiftSpec]) -> dict[str, np.ndarray]:
    """Log-probabilities of ``f`` (``f/<set>``; ``f()`` returns ``[model]``, called on a cache miss only) and of the
    partner (``p/<set>``) on every meta set (cached)."""
    from helpers.experiments.p3_selftraining.runs import predict_probs, training_code

    key = {"code": training_code(), "source": pair.source_key, "heldout": cache_key(pair.x_heldout)[:16], "cfg": cfg.key(
        "typical_model", "model_kwargs", "f_epochs", "batch_size", "lr", "seed"),
        "specs": [[s.name, [list(step) for step in s.steps], s.seed] for s in specs]}  # fmt: skip

    def compute() -> dict[str, np.ndarray]:
        out = {}
        for s in specs:
            x = shifted_heldout(pair, s)
            out[f"f/{s.name}"], out[f"p/{s.name}"] = _log(predict_probs(f()[0], x)), _log(predict_probs(partner, x))
        return out

    return cached_arrays("06_benchmark", key, compute)


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
    meta_specs: Sequence[ShiftSpec] = (),
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
    meta_specs : synthetic shifts (>= 3, e.g. ``metaset_specs(p5, "digits")``) of the held-out source part that
        form each task's meta-set; empty: no meta-set
    """
    from helpers.errors import InputValidationError
    from helpers.experiments.p3_selftraining.runs import (
        pair_baselines,
        pair_self_training,
        predict_probs,
        supervised_pool,
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
        partner_model = supervised_pool(first, cfg, "typical", [cfg.seed + 1])[0]
        held = base[first.target]["f_heldout"]
        task_name = f"{family}/{source}/{cfg.typical_model}"
        meta = {}
        if meta_specs:
            m = _meta_outputs(first, cfg, partial(supervised_pool, first, cfg, "typical", [cfg.seed]),
                              partner_model, meta_specs)  # fmt: skip
            meta = {s.name: (m[f"f/{s.name}"], m[f"p/{s.name}"]) for s in meta_specs}
        tasks.append(
            ShiftTask(
                name=task_name,
                family=family,
                reference=LabelledLogits(_log(held), first.y_heldout),
                targets={p.target: LabelledLogits(_log(base[p.target]["f_target"]), p.y_target) for p in group},
                meta={name: LabelledLogits(f_out, first.y_heldout) for name, (f_out, _) in meta.items()},
                partner={
                    "reference": _log(predict_probs(partner_model, first.x_heldout)),
                    **{p.target: _log(base[p.target]["ens_target"][0]) for p in group},
                    **{name: p_out for name, (_, p_out) in meta.items()},
                },
                info={"model": cfg.typical_model, "source": source, "partner": f"{cfg.typical_model} seed {cfg.seed + 1}",
                      "meta_sets": len(meta)},  # fmt: skip
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


def _load_pairs(kind: str, names: Sequence[str], load_kwargs: dict) -> list:
    from helpers.experiments.p3_selftraining import amazon_pairs, digits_pairs

    if kind == "amazon":
        return amazon_pairs(pairs=[tuple(n.split("->")) for n in names], **load_kwargs)
    return digits_pairs(targets=list(names), **load_kwargs)


def _grid_unit(job: tuple) -> SelfTrainingGrid:
    kind, names, load_kwargs, cfg, grid_kwargs = job
    return selftraining_grid(_load_pairs(kind, names, load_kwargs), cfg, **grid_kwargs)


def selftraining_grid_by_source(
    kind: str,
    names: Sequence[str],
    cfg,
    *,
    load_kwargs: dict | None = None,
    self_training_pairs: Sequence[str] = (),
    progress: bool = True,
    **grid_kwargs,
) -> SelfTrainingGrid:
    """:func:`selftraining_grid` on the ``"source->target"`` pairs ``names``, one unit per source on the executor's
    workers (:func:`helpers.parallel.map_units`): a source's models, tasks and self-training rows depend on that
    source's pairs only, and every pair is loaded with its own seeded generators, so the tasks and rows are those
    of one call over all pairs, in the same order (the rows' ``seconds`` are each unit's own measurement).

    ``kind``: ``"amazon"`` (:func:`~helpers.experiments.p3_selftraining.amazon_pairs`) or ``"digits"``
    (:func:`~helpers.experiments.p3_selftraining.digits_pairs`); each unit loads its own pairs with ``load_kwargs``.
    """
    from helpers.errors import InputValidationError
    from helpers.parallel import map_units

    if kind not in ("amazon", "digits"):
        raise InputValidationError(f"kind: expected 'amazon' or 'digits', got {kind!r}")
    unknown = sorted(set(self_training_pairs) - set(names))
    if unknown:
        raise InputValidationError(f"self_training_pairs: {unknown} are not among the pairs {sorted(names)}")
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name.split("->")[0], []).append(name)
    jobs = [
        (kind, group, dict(load_kwargs or {}), cfg,
         {**grid_kwargs, "self_training_pairs": [n for n in self_training_pairs if n in group]})
        for group in groups.values()
    ]  # fmt: skip
    grids = map_units(_grid_unit, jobs, names=list(groups), desc=f"{kind} sources", progress=progress)
    rows = [g.rows for g in grids if len(g.rows)]
    return SelfTrainingGrid([t for g in grids for t in g.tasks], pd.concat(rows, ignore_index=True) if rows else pd.DataFrame())
