"""Label shift: class-imbalance resampling of a labelled set (paper 5, Sec. 4.5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from helpers.errors import InputValidationError

# ------------------------------------------------------------------------------------------- label shift


def imbalance_resample(
    labels: Sequence[int] | np.ndarray,
    ratio: float,
    seed: int | None = 0,
    *,
    class_order: Sequence[int] | None = None,
) -> np.ndarray:
    """Indices of a long-tailed (exponentially imbalanced) subsample of a labelled set.

    Class k (in ``class_order``, default ascending label) keeps ``n_max * ratio ** (k / (K - 1))`` examples
    (Cui et al. 2019, "Class-balanced loss"; Cao et al. 2019, LDAM), so the smallest class holds ``ratio`` times
    as many examples as the largest. ``n_max`` is the largest value every class can supply without replacement;
    ``ratio = 1`` gives a balanced subsample of ``min_k count_k`` per class.

    Parameters
    ----------
    labels : array-like of int, shape (n,)
    ratio : float
        Smallest / largest class size, in (0, 1].
    seed : int or None
        Seed of the draw (which examples of each class are kept).
    class_order : sequence of int, keyword-only
        Classes from largest to smallest; default: sorted labels (class 0 largest).

    Returns
    -------
    numpy.ndarray
        Sorted int64 indices into ``labels``.
    """
    y = np.asarray(labels)
    if y.ndim != 1 or not (np.issubdtype(y.dtype, np.integer) or y.size == 0):
        raise InputValidationError(f"labels must be a 1-D integer array, got shape {y.shape} dtype {y.dtype}")
    if not (0.0 < float(ratio) <= 1.0):
        raise InputValidationError(f"ratio must be in (0, 1], got {ratio!r}")
    classes = np.unique(y)
    order = classes if class_order is None else np.asarray(class_order)
    if class_order is not None and sorted(order.tolist()) != classes.tolist():
        raise InputValidationError(f"class_order must be a permutation of the labels {classes.tolist()}")
    k = len(order)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    frac = float(ratio) ** (np.arange(k) / max(k - 1, 1))
    counts = np.array([(y == c).sum() for c in order])
    n_max = float(np.min(counts / frac))
    sizes = np.maximum(1, np.floor(n_max * frac + 1e-9).astype(int))
    rng = np.random.default_rng(seed)
    keep = [rng.choice(np.flatnonzero(y == c), size=s, replace=False) for c, s in zip(order, sizes)]
    return np.sort(np.concatenate(keep)).astype(np.int64)
