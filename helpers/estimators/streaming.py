"""Estimates of sets that do not fit in memory: per-block statistics merged by a Dask reduction.

Every estimator's ``estimate`` also takes a Dask array (or the path of a Zarr store holding one, read with
``dask.array.from_zarr``, or of a Parquet file or folder whose columns are the classes) for ``logits=`` /
``probs=``; it then routes here.  Most estimators are functions of
*column means* of per-example columns (the bootstrap's "column means" protocol, :mod:`helpers.estimators._common`):
average confidence, DoC, MaxProb, ATC (0/1 hits), CBPE, average entropy and energy (means), the nuclear norm and
SoftmaxCorr (the K(K+1)/2 entries of PᵀP), the confusion-matrix estimator (the mean softmax).  Each row block is
turned into ``(n_b, Σ columns, Σ columns columnsᵀ)``; the sums merge exactly, and the statistic is read from the
merged means -- the same value as the in-memory call up to float summation order.  Memory is one block per worker
thread.  Two need a first pass for a set-level quantity, merged the same way: MaNo (its criterion Φ, a mean, picks
the normalisation) and MDE (the set's largest energy, the shift that keeps its log-sum-exp finite:
``MDE = log N + c + log mean exp(E − c) − mean E``).

A *mean of per-block estimates* is not the estimate of the set for any statistic that is not itself a plain mean
(the nuclear norm of the whole set is not the average of its blocks' nuclear norms): the merge is on the
statistics, never on the estimates.

Not mergeable, and refused with the reason: COT and COTT (an optimal transport plan over the whole set), the stacked
estimators (their bases' line), the agreement score (two models' outputs), Dispersion and the Fréchet distance on
features (features are not streamed here).

Intervals (``interval=True``): the column-means bootstrap's replicates are drawn from its large-sample limit, a
normal distribution of the column means with the columns' covariance / N (from the merged second moments), and
mapped through the statistic as in memory -- the same percentile interval up to the normal approximation, which is
exact in the limit of the sizes this path is for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from helpers.errors import InputValidationError

__all__ = ["is_out_of_core", "as_dask_array", "estimate_streamed", "MERGEABLE"]

_INPUT_KEYS = ("logits", "probs")
#: estimator classes whose point estimate is a function of column means of row-local columns (merge exactly)
MERGEABLE = ("AverageConfidence", "AverageNegativeEntropy", "DoC", "MaxProbThreshold", "ATC", "CBPE",
             "AverageEnergy", "NuclearNorm", "SoftmaxCorr", "ConfusionMatrixShift", "MaNo", "MDE")  # fmt: skip
_REFUSED = {
    "COT": "its error is an optimal transport plan over the whole set, which does not split into blocks",
    "COTT": "each example's cost comes from the optimal transport plan over the whole set",
    "StackedEstimator": "it stacks several estimators' outputs through a fitted line; stream its bases instead",
    "AgreementScore": "it needs a second model's outputs beside the first, row for row",
    "Dispersion": "it needs the penultimate features, which are not streamed here",
    "FrechetDistance": "it compares feature distributions, which are not streamed here",
}


def is_out_of_core(value: Any) -> bool:
    """Whether ``value`` is a Dask array or a path (str / PathLike) to a store rather than an in-memory array."""
    if isinstance(value, (str, os.PathLike)):
        return True
    return type(value).__module__.startswith("dask.") and hasattr(value, "to_delayed")


def as_dask_array(value: Any, name: str):
    """A 2-d Dask array from a Dask array or the path of a Zarr store (one block of rows per chunk, all columns)."""
    import dask.array as da

    if isinstance(value, (str, os.PathLike)):
        path = Path(value)
        if not path.exists():
            raise InputValidationError(f"{name}: no store at {path}")
        arr = _read_parquet(path, name) if _is_parquet(path) else None
        try:
            arr = da.from_zarr(str(path)) if arr is None else arr
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise InputValidationError(f"{name}: reading {path} needs the zarr package ({e})") from e
    else:
        arr = value
    if arr.ndim != 2:
        raise InputValidationError(f"{name}: expected a 2-d array (examples x classes), got {arr.ndim} dimensions")
    if arr.shape[0] == 0 or any(c == 0 for c in arr.chunks[0]):
        raise InputValidationError(f"{name}: the store holds an empty block or no rows (shape {arr.shape})")
    return arr.rechunk({1: -1}) if len(arr.chunks[1]) > 1 else arr


def _is_parquet(path: Path) -> bool:
    return path.suffix == ".parquet" or (path.is_dir() and any(path.glob("*.parquet")))


def _read_parquet(path: Path, name: str):
    """A Parquet file (or a folder of them) whose numeric columns are the classes, in column order: one block of
    rows per row group / file (``dask.dataframe.read_parquet``), the block lengths read from its metadata."""
    try:
        import dask.dataframe as dd

        frame = dd.read_parquet(str(path))
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise InputValidationError(f"{name}: reading {path} needs pyarrow ({e})") from e
    import pandas as pd

    if len(frame.columns) == 0 or not all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes):
        raise InputValidationError(f"{name}: {path} must hold numeric columns only (one per class), got "
                                   f"{dict(frame.dtypes.astype(str))}")  # fmt: skip
    return frame.to_dask_array(lengths=True)


@dataclass
class _Plan:
    """How one estimator's statistic is read from merged blocks: an optional first pass (``pre``: a vector of
    per-block sums, merged by ``pre_merge``) and the per-block columns given the first pass's result."""

    columns: Callable[[np.ndarray, Any], np.ndarray]  # (block, pre) -> (n_b, m) columns
    from_means: Callable[[np.ndarray, Any, int], np.ndarray]  # ((B, m) means, pre, N) -> (B,) statistic
    pre: Callable[[np.ndarray], np.ndarray] | None = None  # block -> vector of sums or maxima
    pre_merge: Callable[[list[np.ndarray]], Any] | None = None
    details: Callable[[Any], dict] = lambda pre: {}


def _plan(est: Any, key: str, n_cols: int) -> _Plan:
    name = type(est).__name__
    if name in _REFUSED or (name not in MERGEABLE and not getattr(est, "mergeable", False)):
        why = _REFUSED.get(name, "its statistic is not declared mergeable (helpers.estimators.streaming.MERGEABLE)")
        raise InputValidationError(
            f"{name} ({est.name}) cannot be estimated out of core from merged block statistics: {why}"
        )
    if name == "MaNo":
        return _mano_plan(est, key, n_cols)
    if name == "MDE":
        return _mde_plan(est, key)

    to_columns = getattr(est, "_stream_columns", est._columns)  # a block of any size (the bootstrap's may refuse)

    def columns(block: np.ndarray, pre: Any) -> np.ndarray:
        cols = to_columns(est._prepare_target(**{key: block}))
        if cols is None:
            raise InputValidationError(f"{name} ({est.name}): this input has no column-means form to merge")
        return np.asarray(cols, dtype=np.float64).reshape(block.shape[0], -1)

    template: dict[str, Any] = {}

    def from_means(means: np.ndarray, pre: Any, n: int) -> np.ndarray:
        return np.asarray(est._from_means(means, template["prep"]), dtype=np.float64)

    plan = _Plan(columns=columns, from_means=from_means)
    plan.template = template  # type: ignore[attr-defined]
    return plan


def _mano_plan(est: Any, key: str, n_cols: int) -> _Plan:
    from helpers.estimators._common import logsumexp_rows, resolve_logits

    def pre(block: np.ndarray) -> np.ndarray:  # Σ_i [logsumexp(z_i) − mean_k z_ik], and the count
        z = resolve_logits(**{key: block}, where="MaNo.estimate")
        return np.array([float((logsumexp_rows(z) - z.mean(axis=1, dtype=np.float64)).sum()), z.shape[0]])

    def phi(parts: list[np.ndarray]) -> float:
        total = np.sum(parts, axis=0)
        return float(total[0] / total[1])

    def columns(block: np.ndarray, criterion: float) -> np.ndarray:
        z = resolve_logits(**{key: block}, where="MaNo.estimate")
        return est._row_sums(z, softmax_branch=criterion > float(est.threshold))[:, None]

    def from_means(means: np.ndarray, criterion: float, n: int) -> np.ndarray:
        return (means[:, 0] / n_cols) ** (1.0 / float(est.p))

    return _Plan(columns, from_means, pre, phi,
                 lambda c: {"criterion": c, "normalization": "softmax" if c > float(est.threshold) else "taylor"})


def _mde_plan(est: Any, key: str) -> _Plan:
    def energy(block: np.ndarray) -> np.ndarray:
        return est._energy(**{"logits": None, "probs": None, key: block})

    def columns(block: np.ndarray, c: float) -> np.ndarray:
        e = energy(block)
        return np.stack([e, np.exp(e - c)], axis=1)

    def from_means(means: np.ndarray, c: float, n: int) -> np.ndarray:
        raw = float(np.log(n)) + c + np.log(means[:, 1]) - means[:, 0]  # logsumexp(E) − mean(E)
        return raw - (float(np.log(n)) if est.normalize else 0.0)

    return _Plan(columns, from_means, lambda b: np.array([energy(b).max()]), lambda parts: float(np.max(parts)),
                 lambda c: {"T": float(est.T), "normalized": bool(est.normalize)})


def _shape_template(est: Any, key: str, arr: Any):
    """A prepared target that carries the set's fixed parts (K, priors) from its first rows and, for every per-row
    array, a zero-copy view of the full set's shape (``_from_means`` of a mergeable estimator reads only shapes of
    per-row arrays, e.g. the nuclear norm's N)."""
    head = np.asarray(arr[: min(2, arr.shape[0])].compute())
    prep = est._prepare_target(**{key: _check_block(head, 0, 0, key, getattr(est, "n_classes_", None))})
    n = int(arr.shape[0])
    for name, a in list(prep.arrays.items()):
        if isinstance(a, np.ndarray) and a.ndim >= 1 and a.shape[0] == head.shape[0]:
            prep.arrays[name] = np.broadcast_to(a[:1], (n, *a.shape[1:]))
    prep.n = n
    return prep


def _check_block(block: np.ndarray, index: int, start: int, key: str, k: int | None) -> np.ndarray:
    b = np.asarray(block)
    where = f"{key}: block {index} (rows {start}-{start + b.shape[0] - 1})"
    if b.ndim != 2 or b.shape[0] == 0:
        raise InputValidationError(f"{where}: expected a non-empty 2-d block, got shape {b.shape}")
    if k is not None and b.shape[1] != k:
        raise InputValidationError(f"{where}: expected {k} classes (the reference's), got {b.shape[1]}")
    if not np.issubdtype(b.dtype, np.number) or not np.isfinite(b).all():
        raise InputValidationError(f"{where}: holds NaN or infinite values")
    return b


_SUB_ROWS = 65_536  # rows turned into columns at a time inside a block (columns can be K(K+1)/2 wide)


def _block_moments(columns: Callable, block: np.ndarray, index: int, start: int, key: str, k: int | None, pre: Any,
                   second: bool) -> tuple:  # fmt: skip
    """``(n, Σ columns, Σ columns columnsᵀ)`` of one block.  It gets the plan's ``columns`` function only: what the
    task ships to a worker stays small (the statistic's template, sized like the whole set, stays with the caller)."""
    b = _check_block(block, index, start, key, k)
    n, s1, s2 = 0, 0.0, None
    for lo in range(0, b.shape[0], _SUB_ROWS):
        cols = columns(b[lo : lo + _SUB_ROWS], pre)
        n, s1 = n + cols.shape[0], s1 + cols.sum(axis=0)
        if second:
            s2 = cols.T @ cols if s2 is None else s2 + cols.T @ cols
    return n, s1, s2


def _merge(parts: list[tuple]) -> tuple:
    n = sum(p[0] for p in parts)
    s1 = np.sum([p[1] for p in parts], axis=0)
    s2 = None if parts[0][2] is None else np.sum([p[2] for p in parts], axis=0)
    return n, s1, s2


def estimate_streamed(est: Any, *, interval: bool = False, **target: Any):
    """``est.estimate(**target, interval=interval)`` for a Dask array or Zarr-store path input (module docstring)."""
    import dask

    keys = [k for k in _INPUT_KEYS if target.get(k) is not None]
    others = sorted(k for k, v in target.items() if v is not None and k not in _INPUT_KEYS)
    if len(keys) != 1 or others:
        raise InputValidationError(
            f"{type(est).__name__}.estimate out of core: give exactly one of logits= / probs= as a Dask array or "
            f"store path{f', without {others}' if others else ''}"
        )
    if not isinstance(interval, (bool, np.bool_)):
        raise InputValidationError(f"interval: expected True or False, got {interval!r}")
    key = keys[0]
    est._check_params()
    est._require_fit()
    regressor = est._score_to_accuracy() if est.output == "score" else None  # fails before any work
    arr = as_dask_array(target[key], key)
    plan = _plan(est, key, int(arr.shape[1]))
    k = getattr(est, "n_classes_", None)
    blocks = arr.to_delayed().ravel()
    starts = np.concatenate([[0], np.cumsum(arr.chunks[0])[:-1]]).astype(int)
    pre = None
    if plan.pre is not None:
        checked = [dask.delayed(_check_block)(b, i, int(s), key, k) for i, (b, s) in enumerate(zip(blocks, starts))]
        pre = plan.pre_merge(list(dask.compute(*[dask.delayed(plan.pre)(c) for c in checked])))
    if hasattr(plan, "template"):
        plan.template["prep"] = _shape_template(est, key, arr)
    parts = [dask.delayed(_block_moments)(plan.columns, b, i, int(s), key, k, pre, bool(interval))
             for i, (b, s) in enumerate(zip(blocks, starts))]  # fmt: skip
    n, s1, s2 = dask.compute(dask.delayed(_merge)(parts))[0]
    means = s1 / n
    value = float(plan.from_means(means[None, :], pre, n)[0])
    details = {**plan.details(pre), "out_of_core": f"{len(blocks)} blocks of rows merged", "n_blocks": len(blocks)}
    reps = None
    if interval:
        cov = (s2 / n - np.outer(means, means)) / n
        rng = np.random.default_rng(est.random_state)
        draws = rng.multivariate_normal(means, (cov + cov.T) / 2, size=int(est.n_boot), method="eigh")
        reps = plan.from_means(draws, pre, n)
        details.update(interval="normal limit of the column-means bootstrap over target examples (out of core)",
                       level=est.level, n_boot=est.n_boot)  # fmt: skip
    return est._estimate_from(value, reps, int(n), details, regressor)
