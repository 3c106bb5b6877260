"""Private plumbing shared by the label-free estimators: input resolution, softmax, the estimator skeleton.

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

from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators.base import BaseEstimator, Estimate
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


# ----------------------------------------------------------------------------------------------- skeleton
@dataclass
class Prepared:
    """Validated target data plus whatever per-example quantities the estimator computed once."""

    n: int
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def _streamable(estimate: Callable) -> Callable:
    """``estimate`` that hands a Dask-array or store-path input to :func:`helpers.estimators.streaming.estimate_streamed`
    (merged per-block statistics) and everything else to ``estimate`` itself."""
    import functools

    @functools.wraps(estimate)
    def wrapper(self, **kwargs: Any) -> Any:
        from helpers.estimators.streaming import estimate_streamed, is_out_of_core

        if any(is_out_of_core(v) for v in kwargs.values() if v is not None and not isinstance(v, bool)):
            return estimate_streamed(self, **kwargs)
        return estimate(self, **kwargs)

    return wrapper


#: The bootstrap protocols of :class:`LabelFreeEstimator`: the hooks each needs (a concrete subclass provides one).
BOOTSTRAP_PROTOCOLS: dict[str, tuple[str, ...]] = {
    "column means": ("_columns", "_from_means"),
    "resampled values": ("_resample_values", "_resampled"),
    "weights": ("_weighted",),
}


class LabelFreeEstimator(BaseEstimator, metaclass=ABCMeta):
    """Skeleton shared by the estimators of this package.

    Subclasses implement the abstract ``_prepare_target(**target) -> Prepared`` and ``_point(prep) -> float``, plus,
    for the bootstrap, one protocol of :data:`BOOTSTRAP_PROTOCOLS` (checked when the class is defined): either ``_columns(prep) -> (n, m)`` with ``_from_means((B, m), prep) -> (B,)`` (the statistic
    is a function of column means: the bootstrap becomes a matrix product with multinomial counts), or
    ``_resampled(rows) -> (B,)`` (the statistic of each row of a (B, n) block of resampled per-example values,
    ``_resample_values(prep)``: for statistics such as a log-sum-exp that are not functions of plain means), or
    ``_weighted(prep, counts) -> float`` (the statistic recomputed with per-example integer weights).  Where
    several are provided, :func:`helpers.estimators.bootstrap.bootstrap_replicates` takes the first that applies
    (``_resample_values`` or ``_columns`` may return None for an input they cannot handle) in the order resampled
    values, column means, weights.

    ``output = "accuracy"``: the value is an accuracy (clipped to [0, 1]; the unclipped value is kept in
    ``details["raw"]`` when it differs).  ``output = "score"``: the value goes to ``Estimate.score`` and the
    accuracy comes from ``regressor`` (score -> accuracy fraction) or from the line fitted on ``fit(shifted=...)``;
    without either, ``estimate`` raises (``measure`` returns the score alone).
    """

    name = "base"
    output = "accuracy"
    requires_fit = True
    binary_columns = False  # the single column is 0/1: exact binomial bootstrap
    #: the statistic is a function of column means (``_columns`` / ``_from_means``) that merges over blocks of rows:
    #: ``estimate`` on a Dask array or store path runs out of core (:mod:`helpers.estimators.streaming`)
    mergeable = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {h for hooks in BOOTSTRAP_PROTOCOLS.values() for h in hooks if getattr(cls, h) is not getattr(
            LabelFreeEstimator, h)}  # fmt: skip
        complete = [p for p, hooks in BOOTSTRAP_PROTOCOLS.items() if set(hooks) <= own]
        partial = [p for p, hooks in BOOTSTRAP_PROTOCOLS.items() if own & set(hooks) and p not in complete]
        concrete = all(getattr(cls, h) is not getattr(LabelFreeEstimator, h) for h in ("_prepare_target", "_point"))
        if concrete and (partial or not complete):
            want = "; ".join(f"{p}: {' + '.join(h)}" for p, h in BOOTSTRAP_PROTOCOLS.items())
            raise TypeError(f"{cls.__name__}: provide every hook of one bootstrap protocol ({want}); "
                            f"got {sorted(own) or 'none'}")  # fmt: skip
        if "estimate" in cls.__dict__:  # a Dask array or a store path goes to the out-of-core route
            cls.estimate = _streamable(cls.__dict__["estimate"])

    # -- the public API (a subclass overrides fit to learn from labels, estimate to take other inputs) ----------
    def fit(self, *, logits: Any = None, probs: Any = None) -> LabelFreeEstimator:
        """Record the reference's class count (``estimate`` then refuses a target with another); returns self."""
        self._check_params()
        if logits is not None or probs is not None:
            resolve_probs(logits=logits, probs=probs, where=f"{type(self).__name__}.fit")
            self.n_classes_ = n_classes_of(logits, probs)
        return self

    def estimate(self, *, logits: Any = None, probs: Any = None, interval: bool = False) -> Estimate:
        """The estimate on an unlabelled target (``logits=`` or ``probs=``, in memory, a Dask array or a store
        path when :attr:`mergeable`); ``interval=True`` adds a percentile bootstrap over the target's examples."""
        self._check_params()
        self._require_fit()
        self._check_target_classes(n_classes_of(logits, probs))
        return self._finish(self._prepare_target(logits=logits, probs=probs), interval=interval)

    # -- subclass hooks ----------------------------------------------------------------------------------
    @abstractmethod
    def _prepare_target(self, **target: Any) -> Prepared:
        """Validate the target arrays and compute the per-example quantities once."""

    @abstractmethod
    def _point(self, prep: Prepared) -> float:
        """The estimator's value (accuracy or score) on the prepared target."""

    def _columns(self, prep: Prepared) -> np.ndarray | None:
        return None

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _resample_values(self, prep: Prepared) -> np.ndarray | None:
        return None

    def _resampled(self, rows: np.ndarray, prep: Prepared) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_params(self) -> None:
        check_bootstrap_params(self.n_boot, self.level)

    # -- shared behaviour --------------------------------------------------------------------------------
    def _fit_shifted(self, shifted: Any) -> None:
        """Score-type estimators: fit paper 5's line from the score to accuracy on labelled shifted sets
        (:func:`helpers.estimators._shifted.fit_score_line`), kept as ``score_line_``; ``None`` keeps none."""
        from helpers.estimators._shifted import fit_score_line

        self.__dict__.pop("score_line_", None)
        if shifted is not None:
            self.score_line_ = fit_score_line(self, shifted)

    def _fit_score(self, *, logits: Any, probs: Any, shifted: Any, resolve) -> None:
        """``fit`` of a score-type estimator: the reference class count (``logits`` / ``probs``, checked with
        ``resolve``; optional when ``shifted`` is given) and the line score -> accuracy on ``shifted``."""
        self._check_params()
        if logits is not None or probs is not None or shifted is None:
            resolve(logits=logits, probs=probs, where=f"{type(self).__name__}.fit")
            self.n_classes_ = n_classes_of(logits, probs)
        self._fit_shifted(shifted)

    def _score_to_accuracy(self):
        """The map score -> accuracy: ``regressor`` if given, else the line fitted on ``shifted=``; else an error
        that says how to get one (``measure`` gives the raw score)."""
        if self._measuring():  # measure(): the score alone
            return None
        if getattr(self, "regressor", None) is not None:
            return self.regressor
        if hasattr(self, "score_line_"):
            return self.score_line_.predict
        raise NotFittedError(
            f"{type(self).__name__} ({self.name}) gives a set-level score, not an accuracy: fit it with "
            f"shifted={{set name: (logits, labels), ...}} (at least 3 labelled shifted sets; paper 5, Algorithm 1 "
            f"fits a line from the score to accuracy on them) or pass regressor=; .measure(...) returns the raw score"
        )

    def _require_fit(self) -> None:
        if self.requires_fit:
            self._check_fitted("n_classes_")

    def _check_target_classes(self, k: int | None) -> None:
        ref_k = getattr(self, "n_classes_", None)
        if ref_k is not None and k is not None and ref_k != k:
            raise InputValidationError(
                f"class-count mismatch: the reference passed to fit had {ref_k} classes, "
                f"the target passed to estimate has {k} (logits/probs columns)"
            )

    def _finish(self, prep: Prepared, *, interval: bool) -> Estimate:
        from helpers.estimators.bootstrap import bootstrap_replicates

        if not isinstance(interval, (bool, np.bool_)):
            raise InputValidationError(f"interval: expected True or False, got {interval!r}")
        regressor = self._score_to_accuracy() if self.output == "score" else None  # fails before any work
        value = float(self._point(prep))
        details: dict[str, Any] = dict(prep.details)
        reps = None
        if interval:
            reps = bootstrap_replicates(self, prep, n_boot=self.n_boot, random_state=self.random_state)
            details.update(
                interval="percentile bootstrap over target examples", level=self.level, n_boot=self.n_boot
            )
        return self._estimate_from(value, reps, prep.n, details, regressor)

    def _estimate_from(self, value: float, reps: np.ndarray | None, n: int, details: dict[str, Any],
                       regressor: Any = None) -> Estimate:  # fmt: skip
        """The :class:`Estimate` of a statistic ``value`` and its bootstrap replicates ``reps`` (or None): clipped
        to [0, 1] for an accuracy; a score with its own interval, mapped through ``regressor`` when there is one."""
        from helpers.estimators.bootstrap import percentile_interval

        lower = upper = None
        if self.output == "accuracy":
            acc = float(np.clip(value, 0.0, 1.0))
            if acc != value:
                details["raw"] = value
            if reps is not None:
                lower, upper = (float(v) for v in np.clip(percentile_interval(reps, self.level), 0.0, 1.0))
            return Estimate(self.name, acc, lower, upper, None, n, details)
        # score-type estimator
        score = value
        acc = float("nan")
        if reps is not None:
            details["score_lower"], details["score_upper"] = (
                float(v) for v in percentile_interval(reps, self.level)
            )
        if regressor is not None:
            acc_raw = float(apply_regressor(regressor, np.array([score]))[0])
            acc = float(np.clip(acc_raw, 0.0, 1.0))
            if acc != acc_raw:
                details["raw"] = acc_raw
            if reps is not None:
                mapped = np.clip(apply_regressor(regressor, reps), 0.0, 1.0)
                lower, upper = (float(v) for v in percentile_interval(mapped, self.level))
        return Estimate(self.name, acc, lower, upper, score, n, details)


LabelFreeEstimator.estimate = _streamable(LabelFreeEstimator.estimate)  # type: ignore[method-assign]
