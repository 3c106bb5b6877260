"""Private plumbing shared by the label-free estimators: input resolution, softmax, parameter checks.

The estimator base itself is public: :mod:`helpers.estimators.estimator`.

Input scheme (used by every estimator class and every function form in :mod:`helpers.estimators`)
-------------------------------------------------------------------------------------------------
* Model outputs are passed **by keyword**, as exactly one of

  - ``logits=`` : (n, K) unnormalised class scores (any real values), or
  - ``probs=``  : (n, K) probabilities; every row must sum to 1 (tolerance 1e-3), entries in [0, 1].

  Estimators that need logits (energy, MDE) accept only ``logits=``; the others softmax the logits once.
* The confidence family (Avg Conf, DoC, MaxProb, ATC) also accepts ``confidence=`` : (n,) one score per
  example, higher = more confident (e.g. the probability of a whole beam-searched sequence, as in paper 1).
* ``fit`` takes the labelled reference (source / in-distribution validation) set: ``labels=`` (n,) class
  indices alongside ``logits=``/``probs=``; or ``correct=`` (n,) 0/1 alongside ``confidence=``.
* ``estimate`` takes the unlabelled target set with the same argument names, plus ``interval=``.

float32 inputs stay float32 for the (n, K) work; per-example statistics and reductions are float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.validation import (
    check_binary,
    check_labels,
    check_logits,
    check_probs,
    check_vector,
)

__all__ = ["softmax", "logsumexp_rows"]

#: Epsilon inside log(p + eps) for negative entropy, as in Garg et al.'s ATC code (float32-representable).
ENTROPY_EPS = 1e-20


# ----------------------------------------------------------------------------------------------- numerics
def softmax(logits: np.ndarray, *, T: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``logits / T`` (stable: the row max is subtracted first).

    Keeps float32 inputs in float32; makes exactly one (n, K) temporary, which is returned.
    """
    z = np.asarray(logits)
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    # z - max may reach -inf (-> probability 0) for logits near the float max
    with np.errstate(over="ignore"):
        out = z - z.max(axis=1, keepdims=True)  # shift before dividing: z / T overflows for huge z and T < 1
        if T != 1.0:
            out /= T
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)
    return out


def logsumexp_rows(logits: np.ndarray, *, T: float = 1.0) -> np.ndarray:
    """``T * logsumexp(logits / T)`` per row, as float64 of shape (n,); stable for any logit scale."""
    z = np.asarray(logits)
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    m = z.max(axis=1, keepdims=True)
    with np.errstate(over="ignore"):  # z - m may reach -inf (a zero term) for logits near the float max
        tmp = z - m  # shift before dividing by T: z / T overflows for logits near the float max and T < 1
        if T != 1.0:
            tmp /= T
    np.exp(tmp, out=tmp)
    s = tmp.sum(axis=1, dtype=np.float64)
    return m[:, 0].astype(np.float64) + T * np.log(s)


def max_prob(probs: np.ndarray) -> np.ndarray:
    """Maximum softmax probability per row (float64, shape (n,))."""
    return probs.max(axis=1).astype(np.float64)


def max_prob_from_logits(logits: np.ndarray) -> np.ndarray:
    """Maximum softmax probability per row computed without normalising the matrix: 1 / sum(exp(z - max z))."""
    z = logits - logits.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    return 1.0 / z.sum(axis=1, dtype=np.float64)


def negative_entropy_rows(probs: np.ndarray, *, eps: float = ENTROPY_EPS) -> np.ndarray:
    """Negative entropy ``sum_k p_k log(p_k + eps)`` per row (nats, <= 0), float64 of shape (n,)."""
    tmp = probs + np.asarray(eps, dtype=probs.dtype)
    np.log(tmp, out=tmp)
    tmp *= probs
    return tmp.sum(axis=1, dtype=np.float64)


# ----------------------------------------------------------------------------------------------- inputs
def _exactly_one(where: str, **given: Any) -> str:
    present = [k for k, v in given.items() if v is not None]
    names = ", ".join(f"{k}=" for k in given)
    if len(present) != 1:
        got = ", ".join(f"{k}=" for k in present) or "none"
        raise InputValidationError(f"{where}: pass exactly one of {names} (got {got})")
    return present[0]


def resolve_probs(*, logits: Any = None, probs: Any = None, where: str) -> np.ndarray:
    """Validate ``logits=`` xor ``probs=`` and return an (n, K) probability matrix."""
    kind = _exactly_one(where, logits=logits, probs=probs)
    if kind == "logits":
        return softmax(check_logits(logits, "logits"))
    return check_probs(probs, "probs")


def resolve_logits(*, logits: Any = None, probs: Any = None, where: str) -> np.ndarray:
    """Validate ``logits=`` for methods defined on logits; a helpful error if only ``probs=`` came."""
    if probs is not None:
        raise InputValidationError(
            f"{where}: needs logits=, got probs=; energy-based scores are not defined by probabilities "
            "(log-probabilities lose the per-row log-partition that the energy is made of)"
        )
    if logits is None:
        raise InputValidationError(f"{where}: logits= is required")
    return check_logits(logits, "logits")


def resolve_confidence(
    *,
    logits: Any = None,
    probs: Any = None,
    confidence: Any = None,
    where: str,
    score: str = "mc",
    eps: float,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-example score (float64, (n,)) and the prob matrix when it was formed (else None).

    ``score="mc"``: max softmax probability; ``score="ne"``: negative entropy; ``confidence=`` is used as is.
    """
    kind = _exactly_one(where, logits=logits, probs=probs, confidence=confidence)
    if kind == "confidence":
        return check_vector(confidence, "confidence").astype(np.float64, copy=False), None
    if kind == "logits":
        return _scores_from_logits(logits, score=score, eps=eps)
    p = resolve_probs(logits=logits, probs=probs, where=where)
    return (max_prob(p) if score == "mc" else negative_entropy_rows(p, eps=eps)), p


def _scores_from_logits(logits: Any, *, score: str, eps: float) -> tuple[np.ndarray, np.ndarray | None]:
    """Score per row from logits, accurate whatever the logits' dtype (float64 sums and probabilities).

    A float32 softmax rounds the top probability to exactly 1.0 once the top logit leads by ~17, so a score
    computed from float32 probabilities on one side (fit) and float64 on the other (estimate) disagree on every
    confident example; both sides therefore go through this function.
    Returns (scores, probs or None): the float64 prob matrix when it was formed (``score="ne"``).
    """
    z = check_logits(logits, "logits")
    if score == "mc":  # 1 / sum_k exp(z_k - max z): the shift is exact enough in float32, the sum is float64
        return max_prob_from_logits(z), None
    p = softmax(z.astype(np.float64, copy=False))
    return negative_entropy_rows(p, eps=eps), p


def resolve_correct(
    *,
    probs: np.ndarray | None,
    labels: Any,
    correct: Any,
    n: int,
    used_confidence: bool,
    where: str,
) -> np.ndarray:
    """0/1 correctness of the reference predictions: ``argmax(probs) == labels``, or ``correct=`` as given."""
    if used_confidence:
        if correct is None:
            raise InputValidationError(
                f"{where}: with confidence= pass correct= (0/1 per example), not labels="
            )
        return check_binary(correct, "correct", n=n)
    if labels is None:
        if correct is not None:
            return check_binary(correct, "correct", n=n)
        raise InputValidationError(f"{where}: labels= is required with logits=/probs=")
    y = check_labels(labels, "labels", n_classes=probs.shape[1], n=n)
    ok = probs.argmax(axis=1) == y
    if correct is not None:
        given = check_binary(correct, "correct", n=n)
        n_bad = int((given != ok).sum())
        if n_bad:
            raise InputValidationError(
                f"{where}: labels= and correct= disagree on {n_bad} of {n} examples (correct= must equal "
                "argmax == labels); pass only one of them"
            )
    return ok


def resolve_reference(
    *,
    logits: Any = None,
    probs: Any = None,
    confidence: Any = None,
    labels: Any = None,
    correct: Any = None,
    where: str,
    score: str = "mc",
    eps: float = ENTROPY_EPS,
) -> tuple[np.ndarray, np.ndarray]:
    """Labelled reference -> (per-example score (n,) float64, correctness (n,) bool), validated.

    The softmax is computed once and used for both the score and the argmax.
    """
    kind = _exactly_one(where, logits=logits, probs=probs, confidence=confidence)
    if kind == "confidence":
        s = check_vector(confidence, "confidence").astype(np.float64, copy=False)
        ok = resolve_correct(
            probs=None, labels=labels, correct=correct, n=s.shape[0], used_confidence=True, where=where
        )
        return s, ok
    if kind == "logits":
        s, _ = _scores_from_logits(logits, score=score, eps=eps)
        p = check_logits(logits, "logits")  # argmax of the logits = argmax of the probabilities
    else:
        p = resolve_probs(logits=logits, probs=probs, where=where)
        s = max_prob(p) if score == "mc" else negative_entropy_rows(p, eps=eps)
    ok = resolve_correct(
        probs=p, labels=labels, correct=correct, n=s.shape[0], used_confidence=False, where=where
    )
    return s, ok


def n_classes_of(logits: Any = None, probs: Any = None) -> int | None:
    """Column count of whichever of logits/probs was given (None if neither)."""
    for arr in (logits, probs):
        if arr is not None:
            shape = np.shape(arr)
            return int(shape[1]) if len(shape) == 2 else None
    return None


def check_positive(value: Any, name: str) -> float:
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise InputValidationError(f"{name}: expected a positive finite number, got {value!r}")
    return v


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise InputValidationError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_bootstrap_params(n_boot: Any, level: Any) -> None:
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 2:
        raise InputValidationError(f"n_boot: expected an integer >= 2, got {n_boot!r}")
    lv = float(level)
    if not 0.0 < lv < 1.0:
        raise InputValidationError(f"level: must be in (0, 1) (e.g. 0.95 for 95 %), got {level!r}")


def apply_regressor(regressor: Any, scores: np.ndarray) -> np.ndarray:
    """Map scores to accuracies with a fitted ``.predict`` object (sklearn, 2-D input) or a callable."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if hasattr(regressor, "predict"):
        out = regressor.predict(s.reshape(-1, 1))
    elif callable(regressor):
        out = regressor(s)
    else:
        raise InputValidationError(
            f"regressor: expected a fitted object with .predict or a callable score -> accuracy, "
            f"got {type(regressor).__name__}"
        )
    return np.asarray(out, dtype=np.float64).reshape(-1)
