"""Bootstrap pairwise-ranking evaluation of few-shot model-ranking methods (paper 4, §4.3 and Appendix B).

Protocol (Appendix B): for a fixed population of P examples of an OOD set, every model has one score per example
(a factor value, its correctness for ACC, its confidence for CONF, …).  We draw ``n_boot`` = 500 samples of
``size`` = 10 example indices *with replacement* -- the same indices for every model -- and average each
model's scores over the sample.  For every pair of models whose true OOD accuracies differ, the sample is a
success when the ordering of the mean scores (in the method's direction) matches the ordering of the true
accuracies.  Pairwise accuracy = success rate over the samples; few-shot ranking accuracy = mean over pairs.

Ties between the two means (frequent for ACC on 10 examples, §3) count as half a success by default
(``ties="half"``, the expected value of breaking the tie at random); ``ties="fail"`` counts them as failures.

Baselines (§3, §6.3): ACC (per-example correctness), CONF (max softmax probability), CONF-GT (probability of the
true label), RANDOM (a seeded uniform score per model and example), and GUESS (:func:`guess_accuracy`).

Informative pairs (:func:`informative_pairs`): two models whose true OOD accuracies, each measured on n examples,
differ by no more than two standard errors of their difference (Agresti-Caffo) are a tie within sampling error; a ranking method
cannot be right or wrong about them.  ``pair_mask`` restricts the evaluation to the informative pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError, UnknownNameError

__all__ = [
    "RankingResult",
    "bootstrap_indices",
    "pairwise_ranking_accuracy",
    "baseline_scores",
    "guess_accuracy",
    "informative_pairs",
    "ranking_table",
    "BASELINES",
]

BASELINES = ("ACC", "CONF", "CONF-GT", "RANDOM")


@dataclass
class RankingResult:
    """Pairwise accuracies (``pairs``: model_a, model_b, acc_a, acc_b, accuracy) and their mean ``accuracy``."""

    accuracy: float
    pairs: pd.DataFrame
    n_boot: int
    size: int
    details: dict = field(default_factory=dict)


def bootstrap_indices(population: int, *, n_boot: int = 500, size: int = 10, seed: int = 0) -> np.ndarray:
    """``(n_boot, size)`` indices into a population of ``population`` examples, drawn with replacement."""
    if population < 1 or n_boot < 1 or size < 1:
        raise InputValidationError("population, n_boot and size must be ≥ 1")
    return np.random.default_rng(seed).integers(0, population, size=(n_boot, size))


def pairwise_ranking_accuracy(
    scores: np.ndarray,
    true_accuracy: Sequence[float],
    *,
    higher_is_better: bool = True,
    n_boot: int = 500,
    size: int = 10,
    seed: int = 0,
    ties: str = "half",
    models: Sequence[str] | None = None,
    indices: np.ndarray | None = None,
    pair_mask: np.ndarray | None = None,
) -> RankingResult:
    """Few-shot pairwise ranking accuracy of a per-example score (paper 4, Appendix B).

    Parameters
    ----------
    scores : array (n_models, n_examples)
        One score per model and population example (same examples for every model).
    true_accuracy : sequence (n_models,)
        Each model's accuracy on the full OOD set (the ground-truth ranking).
    higher_is_better : bool
        Direction of the score: ``True`` ranks the model with the higher mean score as the better one.
    n_boot, size, seed : int
        500 bootstrap samples of 10 examples in the paper.
    ties : {"half", "fail"}
    models : sequence of str, optional
        Names for the ``pairs`` table (default ``m0, m1, …``).
    indices : array (n_boot, size), optional
        Pre-drawn sample indices (so that several methods are compared on the same samples).
    pair_mask : bool array (n_models, n_models), optional
        Score only the pairs (i, j) with ``pair_mask[i, j]`` (e.g. :func:`informative_pairs`); pairs with equal
        true accuracies are always skipped.

    Returns
    -------
    RankingResult
        ``accuracy`` in [0, 1] (NaN when all true accuracies are equal).
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] < 2 or s.shape[1] < 1:
        raise InputValidationError(f"scores: expected shape (n_models ≥ 2, n_examples ≥ 1), got {s.shape}")
    if not np.all(np.isfinite(s)):
        raise InputValidationError("scores must be finite")
    acc = np.asarray(true_accuracy, dtype=float).reshape(-1)
    if acc.size != s.shape[0]:
        raise InputValidationError(f"true_accuracy: expected {s.shape[0]} values, got {acc.size}")
    if ties not in ("half", "fail"):
        raise InputValidationError(f"ties: expected 'half' or 'fail', got {ties!r}")
    names = list(models) if models is not None else [f"m{i}" for i in range(s.shape[0])]
    if len(names) != s.shape[0]:
        raise InputValidationError(f"models: expected {s.shape[0]} names, got {len(names)}")
    idx = bootstrap_indices(s.shape[1], n_boot=n_boot, size=size, seed=seed) if indices is None else indices
    idx = np.asarray(idx, dtype=int)
    if idx.ndim != 2 or idx.min() < 0 or idx.max() >= s.shape[1]:
        raise InputValidationError("indices: expected a 2-D array of valid example indices")
    if pair_mask is not None:
        pair_mask = np.asarray(pair_mask, dtype=bool)
        if pair_mask.shape != (s.shape[0], s.shape[0]):
            raise InputValidationError(
                f"pair_mask: expected a ({s.shape[0]}, {s.shape[0]}) boolean matrix, got shape {pair_mask.shape}"
            )
    means = s[:, idx].mean(axis=2)  # (n_models, n_boot)
    if not higher_is_better:
        means = -means
    rows = []
    for i, j in combinations(range(s.shape[0]), 2):
        if acc[i] == acc[j] or (pair_mask is not None and not pair_mask[i, j]):
            continue
        better, worse = (i, j) if acc[i] > acc[j] else (j, i)
        diff = means[better] - means[worse]
        success = (diff > 0).astype(float) + (0.5 if ties == "half" else 0.0) * (diff == 0)
        rows.append((names[i], names[j], acc[i], acc[j], float(success.mean())))
    pairs = pd.DataFrame(rows, columns=["model_a", "model_b", "acc_a", "acc_b", "accuracy"])
    mean = float(pairs["accuracy"].mean()) if len(pairs) else float("nan")
    return RankingResult(
        mean, pairs, int(idx.shape[0]), int(idx.shape[1]), {"higher_is_better": higher_is_better}
    )


def baseline_scores(
    kind: str, *, probs: np.ndarray, labels: Sequence[int], seed: int = 0
) -> tuple[np.ndarray, bool]:
    """Per-example scores of an explanation-agnostic baseline and its direction (paper 4, §3).

    Parameters
    ----------
    kind : {"ACC", "CONF", "CONF-GT", "RANDOM"}
    probs : array (n_models, n_examples, n_classes)
        Softmax probabilities of every model on the population.
    labels : sequence (n_examples,)
        True OOD labels of the population.

    Returns
    -------
    (scores (n_models, n_examples), higher_is_better)
    """
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels, dtype=int).reshape(-1)
    if p.ndim != 3 or p.shape[1] != y.size:
        raise InputValidationError(f"probs: expected (n_models, {y.size}, n_classes), got {p.shape}")
    if kind == "ACC":
        return (p.argmax(axis=2) == y[None, :]).astype(float), True
    if kind == "CONF":
        return p.max(axis=2), True
    if kind == "CONF-GT":
        return np.take_along_axis(p, y[None, :, None].repeat(p.shape[0], 0), axis=2)[..., 0], True
    if kind == "RANDOM":
        return np.random.default_rng(seed).random(p.shape[:2]), True
    raise UnknownNameError("baseline", kind, list(BASELINES))


def guess_accuracy(
    true_accuracy: Sequence[float], *, best: int | str, pair_mask: np.ndarray | None = None
) -> float:
    """GUESS baseline (paper 4, §6.3): name one model the best a priori and order every other pair at random.

    Expected pairwise accuracy = [Σ_{pairs with ``best``} 1(best is truly better) + ½ · #other pairs] / #pairs,
    over the pairs with different true accuracies (and, with ``pair_mask``, only the masked-in pairs).

    ``best`` is either the index of the designer's prior choice (e.g. the largest pre-trained model, fixed before
    any OOD accuracy is seen), or ``"truly best"``: the paper's reading, where the guessed model is the one with the
    highest OOD accuracy.  With n models and distinct accuracies that reading gives
    [(n − 1) + ½ · C(n − 1, 2)] / C(n, 2): 83.3 % for 3 models, 75 % for 4, 70 % for 5.
    """
    acc = np.asarray(true_accuracy, dtype=float).reshape(-1)
    if isinstance(best, str):
        if best != "truly best":
            raise InputValidationError(f"best: expected a model index or 'truly best', got {best!r}")
        best = int(np.argmax(acc))
    if not 0 <= best < acc.size or acc.size < 2:
        raise InputValidationError(f"best: expected an index in [0, {acc.size}) with ≥ 2 models")
    total, n = 0.0, 0
    for i, j in combinations(range(acc.size), 2):
        if acc[i] == acc[j] or (pair_mask is not None and not pair_mask[i, j]):
            continue
        n += 1
        if best in (i, j):
            other = j if best == i else i
            total += float(acc[best] > acc[other])
        else:
            total += 0.5
    return total / n if n else float("nan")


def informative_pairs(true_accuracy: Sequence[float], n_examples: int, *, z: float = 2.0) -> np.ndarray:
    """Which model pairs have OOD accuracies that differ beyond sampling error (Agresti-Caffo test).

    Each accuracy p_i is measured on n = ``n_examples`` examples (x_i = p_i·n correct).  With the Agresti-Caffo
    adjustment p̃_i = (x_i + 1) / (n + 2), pair (i, j) is informative when

        |p̃_i − p̃_j| > z · √(p̃_i(1 − p̃_i)/(n + 2) + p̃_j(1 − p̃_j)/(n + 2)),

    the two accuracies being treated as independent (z = 2 ≈ a 95 % two-sided test).  The adjustment keeps the
    standard error honest near 0 % and 100 % (MSGS suites have models there), where the plain Wald error would call
    4 errors vs 0 errors in 500 a real difference.  On 500 examples near 50 % two models need ≈ 6.3 points.

    Returns
    -------
    bool array (n_models, n_models), symmetric, False on the diagonal.
    """
    p = np.asarray(true_accuracy, dtype=float).reshape(-1)
    if p.size < 2 or not np.all((p >= 0) & (p <= 1)):
        raise InputValidationError(f"true_accuracy: expected ≥ 2 accuracies in [0, 1], got {p.tolist()}")
    n = int(n_examples)
    if n < 1:
        raise InputValidationError(f"n_examples: expected ≥ 1, got {n_examples}")
    adj = (p * n + 1) / (n + 2)
    var = adj * (1 - adj) / (n + 2)
    se = np.sqrt(var[:, None] + var[None, :])
    mask = np.abs(adj[:, None] - adj[None, :]) > z * se
    np.fill_diagonal(mask, False)
    return mask


def ranking_table(
    methods: Mapping[str, tuple[np.ndarray, bool]],
    true_accuracy: Sequence[float],
    *,
    n_boot: int = 500,
    size: int = 10,
    seed: int = 0,
    ties: str = "half",
    models: Sequence[str] | None = None,
    pair_mask: np.ndarray | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ranking accuracy of several methods on the same bootstrap samples (and the same pairs, ``pair_mask``).

    ``methods`` maps a name to ``(scores (n_models, n_examples), higher_is_better)``.  Returns
    ``(summary, pairs)``: one row per method (``method, accuracy``) and one per (method, model pair).
    """
    if not methods:
        raise InputValidationError("methods: expected at least one method")
    n_examples = {np.asarray(v[0]).shape[1] for v in methods.values()}
    if len(n_examples) != 1:
        raise InputValidationError(
            f"every method must score the same population, got sizes {sorted(n_examples)}"
        )
    idx = bootstrap_indices(n_examples.pop(), n_boot=n_boot, size=size, seed=seed)
    summary, pairs = [], []
    for name, (scores, hib) in methods.items():
        res = pairwise_ranking_accuracy(
            scores, true_accuracy, higher_is_better=hib, ties=ties, models=models, indices=idx,
            pair_mask=pair_mask,
        )
        summary.append((name, res.accuracy))
        pairs.append(res.pairs.assign(method=name))
    return pd.DataFrame(summary, columns=["method", "accuracy"]), pd.concat(pairs, ignore_index=True)
