"""Input validation shared by estimators and metrics (kept apart from the computations).

Every check raises :class:`helpers.errors.InputValidationError` with the argument's name, what was expected and
what came.  Checks are vectorised and cost one pass over the data.
"""

from __future__ import annotations

import numpy as np

from helpers.errors import InputValidationError

__all__ = [
    "as_float_array",
    "check_matrix",
    "check_vector",
    "check_probs",
    "check_logits",
    "check_labels",
    "check_binary",
    "check_same_length",
    "check_n_classes",
]


def as_float_array(x, name: str) -> np.ndarray:
    """Convert ``x`` to a float32/float64 numpy array (keeps float32, converts everything else to float64)."""
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise InputValidationError(f"{name}: could not convert {type(x).__name__} to an array ({exc})") from exc
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise InputValidationError(f"{name}: expected a numeric array, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise InputValidationError(f"{name}: expected real numbers, got complex dtype {arr.dtype}")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    return arr


def _check_finite(arr: np.ndarray, name: str) -> None:
    if not np.isfinite(arr).all():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise InputValidationError(f"{name}: expected finite values, found {n_nan} NaN and {n_inf} inf")


def check_matrix(x, name: str, *, min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """A finite 2-D float array of shape (n, k) with n >= min_rows and k >= min_cols."""
    arr = as_float_array(x, name)
    if arr.ndim != 2:
        raise InputValidationError(f"{name}: expected a 2-D array (n_samples, n_classes), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise InputValidationError(f"{name}: expected at least {min_rows} row(s), got {arr.shape[0]} (empty set?)")
    if arr.shape[1] < min_cols:
        raise InputValidationError(f"{name}: expected at least {min_cols} column(s), got {arr.shape[1]}")
    _check_finite(arr, name)
    return arr


def check_vector(x, name: str, *, min_len: int = 1) -> np.ndarray:
    """A finite 1-D float array with at least ``min_len`` entries."""
    arr = as_float_array(x, name)
    if arr.ndim != 1:
        raise InputValidationError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.shape[0] < min_len:
        raise InputValidationError(f"{name}: expected at least {min_len} value(s), got {arr.shape[0]} (empty set?)")
    _check_finite(arr, name)
    return arr


def check_probs(p, name: str = "probs", *, atol: float = 1e-3) -> np.ndarray:
    """A (n, k) matrix of probabilities: entries in [0, 1], rows summing to 1 within ``atol``."""
    arr = check_matrix(p, name, min_cols=2)
    lo, hi = arr.min(), arr.max()
    if lo < -1e-6 or hi > 1 + 1e-6:
        raise InputValidationError(
            f"{name}: expected probabilities in [0, 1], got values in [{lo:.4g}, {hi:.4g}]; pass logits instead?"
        )
    sums = arr.sum(axis=1)
    worst = float(np.abs(sums - 1).max())
    if worst > atol:
        raise InputValidationError(
            f"{name}: expected rows summing to 1 (tolerance {atol}), worst row sums to {sums[np.abs(sums - 1).argmax()]:.4g}"
            "; pass logits, or apply softmax first"
        )
    return arr


#: a logits matrix whose every row is in [0, 1] and sums to 1 within this is taken for probabilities
PROBABILITY_ROWS_ATOL = 1e-4


def check_logits(z, name: str = "logits") -> np.ndarray:
    """A finite (n, k) matrix of unnormalised scores with k >= 2, refused when it is a probability matrix.

    Probabilities passed as logits give silently wrong numbers (a softmax of probabilities is nearly uniform: MaNo
    read .412 instead of .266 and COTT 0.0 instead of .385 on one such input), so a matrix whose every row lies in
    [0, 1] and sums to 1 (within :data:`PROBABILITY_ROWS_ATOL`) is refused, naming ``probs=``; real logits of a
    trained model essentially never satisfy that on every row.  One-hot rows alone (every entry exactly 0 or 1,
    e.g. ``np.eye(K)`` in a hand-made example) are ambiguous and kept.

    >>> check_logits([[0.2, 0.8], [0.6, 0.4]])
    Traceback (most recent call last):
    ...
    helpers.errors.InputValidationError: logits: every row lies in [0, 1] and sums to 1, so these are probabilities; pass them as probs= (logits are the model's unnormalised scores)
    """
    arr = check_matrix(z, name, min_cols=2)
    in_unit = bool((arr >= 0).all() and (arr <= 1).all())
    one_hot = in_unit and bool(np.isin(arr, (0.0, 1.0)).all())
    if in_unit and not one_hot and float(np.abs(arr.sum(axis=1) - 1).max()) <= PROBABILITY_ROWS_ATOL:
        raise InputValidationError(
            f"{name}: every row lies in [0, 1] and sums to 1, so these are probabilities; pass them as probs= "
            "(logits are the model's unnormalised scores)"
        )
    return arr


def check_labels(y, name: str = "labels", *, n_classes: int | None = None, n: int | None = None) -> np.ndarray:
    """A 1-D integer array of class indices in [0, n_classes), optionally of length ``n``."""
    if hasattr(y, "detach"):
        y = y.detach().cpu().numpy()
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise InputValidationError(f"{name}: expected a 1-D array of class indices, got shape {arr.shape}")
    if arr.size == 0:
        raise InputValidationError(f"{name}: expected at least one label, got an empty array")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.isfinite(arr).all() and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        elif arr.dtype == bool:
            arr = arr.astype(np.int64)
        else:
            raise InputValidationError(f"{name}: expected integer class indices, got dtype {arr.dtype}")
    if n is not None and arr.shape[0] != n:
        raise InputValidationError(f"{name}: expected {n} labels (one per row), got {arr.shape[0]}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or (n_classes is not None and hi >= n_classes):
        upper = f"{n_classes - 1}" if n_classes is not None else "inf"
        raise InputValidationError(f"{name}: expected labels in [0, {upper}], got values in [{lo}, {hi}]")
    return arr


def check_binary(x, name: str, *, n: int | None = None) -> np.ndarray:
    """A 1-D (or 2-D when allowed by the caller) array of 0/1 or booleans, returned as bool."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if arr.size == 0:
        raise InputValidationError(f"{name}: expected at least one value, got an empty array")
    if arr.dtype != bool:
        if not np.issubdtype(arr.dtype, np.number):
            raise InputValidationError(f"{name}: expected 0/1 or booleans, got dtype {arr.dtype}")
        bad = ~np.isin(arr, (0, 1))
        if bad.any():
            raise InputValidationError(f"{name}: expected only 0/1 or booleans, found {int(bad.sum())} other value(s)")
        arr = arr.astype(bool)
    if n is not None and arr.shape[0] != n:
        raise InputValidationError(f"{name}: expected {n} rows, got {arr.shape[0]}")
    return arr


def check_same_length(**arrays) -> int:
    """All arrays have the same first dimension; returns it."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise InputValidationError(f"expected the same number of rows, got {desc}")
    return next(iter(lengths.values()))


def check_n_classes(reference_k: int, target_k: int, *, ref_name: str = "reference", tgt_name: str = "target") -> None:
    """Reference and target must have the same number of classes (columns)."""
    if reference_k != target_k:
        raise InputValidationError(
            f"class-count mismatch: {ref_name} has {reference_k} classes, {tgt_name} has {target_k}"
        )
