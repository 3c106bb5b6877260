"""The seq2seq block of the benchmark: paper 1's discriminator bounds vs confidence baselines on SCAN ID / OOD sets.

The input here is not a logits matrix: each set has one *sequence-level* confidence per example (the parser's
beam score as a probability), the gold exact-match correctness, and an (n x members) matrix of Correct/Incorrect
votes of the discriminator ensemble (:func:`helpers.seq2seq.run_task`).  So this block is reported separately from
the logits grid, in the same columns:

* confidence baselines ``maxprob`` / ``average_confidence`` / ``doc`` / ``atc_mc`` fitted on the ID dev set's
  confidences and correctness (as :data:`helpers.experiments.p1_bounds.analysis.BASELINES`), with the percentile bootstrap
  interval over target examples;
* ``discriminator_mean_bounds`` (point = (Upper + Lower) / 2) and ``discriminator_mean_discrim`` (mean single
  member), both with the ensemble's own interval [Lower, Upper] = [all members vote Correct, any member votes
  Correct] (paper 1, Eqs. 1-2; :func:`helpers.estimators.bounds_table`), so ``covered`` is "gold within bounds".
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pandas as pd

from helpers.benchmark.engine import COLUMNS, external_rows

__all__ = ["SEQ2SEQ_BASELINES", "seq2seq_rows", "run_seq2seq", "parser_cached"]

#: benchmark method name -> (estimator registry name, params): paper 1's confidence baselines
SEQ2SEQ_BASELINES = {
    "maxprob": ("maxprob", {"gamma": 0.5}),
    "average_confidence": ("average_confidence", {}),
    "doc": ("doc", {}),
    "atc_mc": ("atc_mc", {}),
}


def seq2seq_rows(result, *, n_boot: int = 200, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Benchmark rows (columns :data:`COLUMNS`, family ``"seq2seq"``) from one :class:`TaskResult`."""
    from helpers.estimators import bounds_table, get_estimator

    dev = result.dev
    frames = []
    task = f"seq2seq/{result.task}"
    for method, (name, params) in SEQ2SEQ_BASELINES.items():
        t0 = time.perf_counter()
        est = get_estimator(name, n_boot=n_boot, level=level, random_state=seed, **params)
        est.fit(confidence=dev.confidence, correct=dev.correct)
        out = {}
        for s in result.sets.values():
            e = est.estimate(confidence=s.confidence, interval=True)
            out[s.name] = {"estimate": e.accuracy, "true_accuracy": s.accuracy, "lower": e.lower, "upper": e.upper,
                           "n": len(s.correct)}  # fmt: skip
        frames.append(
            external_rows(task=task, family="seq2seq", method=method, kind="sequence confidence",
                          estimates=out, seconds=time.perf_counter() - t0)  # fmt: skip
        )
    for method, point in (("discriminator_mean_bounds", "mean_bounds"), ("discriminator_mean_discrim", "mean_discrim")):
        t0 = time.perf_counter()
        out = {}
        for s in result.sets.values():
            bt = bounds_table(s.votes, s.correct).set_index("estimate")["accuracy"]
            out[s.name] = {"estimate": bt[point], "true_accuracy": s.accuracy, "lower": bt["lower"],
                           "upper": bt["upper"], "n": len(s.correct)}  # fmt: skip
        frames.append(
            external_rows(task=task, family="seq2seq", method=method, kind="discriminator bounds",
                          estimates=out, seconds=time.perf_counter() - t0)  # fmt: skip
        )
    df = pd.concat(frames, ignore_index=True)[COLUMNS]
    shifts = {s.name: s.shift for s in result.sets.values()}
    df["set"] = [f"{n} ({shifts[n]})" for n in df["set"]]
    return df


def parser_cached(data, cfg) -> bool:
    """Whether :func:`helpers.seq2seq.run_task` would find this config's parser fully trained in the cache."""
    from helpers.experiments.p1_bounds.pipeline import parser_is_trained

    return parser_is_trained(data, cfg)


def run_seq2seq(
    *,
    task: str = "scan",
    profile: str = "default",
    overrides: Mapping[str, Any] | None = None,
    only_if_cached: bool = False,
    n_boot: int = 200,
    level: float = 0.95,
) -> tuple[pd.DataFrame | None, Any]:
    """Train (or restore from notebook 01's cache) the parser + discriminators and return (rows, TaskResult).

    The data and :class:`~helpers.experiments.p1_bounds.PipelineConfig` are notebook 01's for ``profile``
    (:func:`helpers.experiments.p1_bounds.settings.notebook_parameters`, with ``overrides`` of 01's parameters),
    so the main job reuses 01's parser, negatives, discriminators and votes.  ``only_if_cached=True`` returns
    ``(None, None)`` instead of training when the parser is not in the cache (:func:`parser_cached`).
    """
    from helpers.experiments.p1_bounds import run_task
    from helpers.experiments.p1_bounds.settings import notebook_parameters, pipeline_config, task_data

    params = notebook_parameters(profile, **dict(overrides or {}))
    data, cfg = task_data(params, task), pipeline_config(params, task)
    if only_if_cached and not parser_cached(data, cfg):
        return None, None
    result = run_task(data, cfg, progress=False)
    return seq2seq_rows(result, n_boot=n_boot, level=level, seed=params["seed"]), result
