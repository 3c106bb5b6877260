"""The public base of every label-free estimator: write the score, inherit the rest.

A new estimator subclasses :class:`LabelFreeEstimator` and writes three things:

* ``_prepare_target(**target) -> Prepared``: validate the target arrays and compute the per-example quantities
  once (the keywords are the class's :attr:`~LabelFreeEstimator.target_inputs`, ``("logits", "probs")`` unless
  it says otherwise);
* ``_point(prep) -> float``: the value (an accuracy, or a score with ``output = "score"``);
* one bootstrap protocol of :data:`BOOTSTRAP_PROTOCOLS` (for a mean of one per-example column, ``_columns`` alone).

``fit`` (when the method learns from a labelled reference) is the only other method it may write; ``estimate`` is
defined here once, for every estimator: parameter and fit checks, the class-count check, intervals, the score ->
accuracy line of score-type methods, out-of-core inputs when ``mergeable``.  :func:`helpers.estimators.check_estimator`
runs the whole contract.  The smallest complete example is :class:`helpers.estimators.examples.MeanMaxProb`.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators._common import (
    apply_regressor,
    check_bootstrap_params,
    n_classes_of,
    resolve_probs,
)
from helpers.estimators.base import ESTIMATE_ARGUMENTS, BaseEstimator, Estimate, _accept_common

__all__ = ["LabelFreeEstimator", "Prepared", "BOOTSTRAP_PROTOCOLS"]


@dataclass
class Prepared:
    """Validated target data plus whatever per-example quantities the estimator computed once."""

    n: int
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def _streamable(estimate: Callable) -> Callable:
    """``estimate`` that hands a Dask-array or store-path input to :func:`helpers.estimators.streaming.estimate_streamed`
    (merged per-block statistics) and everything else to ``estimate`` itself."""

    @functools.wraps(estimate)
    def wrapper(self, **kwargs: Any) -> Any:
        from helpers.estimators.streaming import estimate_streamed, is_out_of_core

        if any(is_out_of_core(v) for v in kwargs.values() if v is not None and not isinstance(v, bool)):
            return estimate_streamed(self, **kwargs)
        return estimate(self, **kwargs)

    return wrapper


#: The bootstrap protocols of :class:`LabelFreeEstimator`: the hooks each needs (a concrete subclass provides one).
#: ``_from_means`` is optional in "column means": by default the statistic is the mean of the one column.
BOOTSTRAP_PROTOCOLS: dict[str, tuple[str, ...]] = {
    "column means": ("_columns",),
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

    #: a score method's orientation for ranking models by the raw score: +1 a higher score means a higher accuracy
    direction: int = 1
    #: the target's keyword arguments, passed to ``_prepare_target`` (``estimate``'s signature shows them)
    target_inputs: tuple[str, ...] = ("logits", "probs")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {h for hooks in BOOTSTRAP_PROTOCOLS.values() for h in hooks if getattr(cls, h) is not getattr(
            LabelFreeEstimator, h)}  # fmt: skip
        complete = [p for p, hooks in BOOTSTRAP_PROTOCOLS.items() if set(hooks) <= own]
        partial = [p for p, hooks in BOOTSTRAP_PROTOCOLS.items() if own & set(hooks) and p not in complete]
        concrete = all(
            getattr(cls, h) is not getattr(LabelFreeEstimator, h) for h in ("_prepare_target", "_point")
        )
        if concrete and (partial or not complete):
            want = "; ".join(f"{p}: {' + '.join(h)}" for p, h in BOOTSTRAP_PROTOCOLS.items())
            raise TypeError(f"{cls.__name__}: provide every hook of one bootstrap protocol ({want}); "
                            f"got {sorted(own) or 'none'}")  # fmt: skip
        if "estimate" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: estimate is defined once, by LabelFreeEstimator; declare the target's "
                            "keywords in target_inputs and read them in _prepare_target")  # fmt: skip
        if "target_inputs" in cls.__dict__:
            cls.estimate = _estimate_taking(tuple(cls.target_inputs))

    # -- the public API (a subclass overrides fit to learn from labels; estimate is this one) -----------------
    def fit(self, *, logits: Any = None, probs: Any = None) -> LabelFreeEstimator:
        """Record the reference's class count (``estimate`` then refuses a target with another); returns self."""
        self._check_params()
        if logits is not None or probs is not None:
            resolve_probs(logits=logits, probs=probs, where=f"{type(self).__name__}.fit")
            self.n_classes_ = n_classes_of(logits, probs)
        return self

    def estimate(self, *, logits: Any = None, probs: Any = None, interval: bool = False) -> Estimate:
        """The estimate on an unlabelled target (the keywords of :attr:`target_inputs`: ``logits=`` or ``probs=``
        unless the class says otherwise; in memory, or a Dask array or store path when :attr:`mergeable`);
        ``interval=True`` adds a percentile bootstrap over the target's examples."""
        return self._estimate({"logits": logits, "probs": probs}, interval)

    def _estimate(self, target: dict[str, Any], interval: bool) -> Estimate:
        self._check_params()
        self._require_fit()
        self._check_target_classes(n_classes_of(target.get("logits"), target.get("probs")))
        return self._finish(self._prepare_target(**target), interval=interval)

    # -- subclass hooks ----------------------------------------------------------------------------------
    @abstractmethod
    def _prepare_target(self, **target: Any) -> Prepared:
        """Validate the target arrays and compute the per-example quantities once."""

    @abstractmethod
    def _point(self, prep: Prepared) -> float:
        """The estimator's value (accuracy or score) on the prepared target."""

    def _columns(self, prep: Prepared) -> np.ndarray | None:
        return None

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        """The statistic of each row of column means (B, m) -> (B,); by default the mean of the one column."""
        if means.shape[1] != 1:
            raise NotImplementedError(f"{type(self).__name__}: _columns gives {means.shape[1]} columns; write "
                                      "_from_means to combine them")  # fmt: skip
        return means[:, 0]

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


def _estimate_taking(inputs: tuple[str, ...]) -> Callable:
    """:meth:`LabelFreeEstimator.estimate` for a class whose target comes as the keywords ``inputs``: the same
    body, a signature that names them (so ``help()``, :func:`~helpers.estimators.declared_arguments` and the
    unused-argument warning see them), out-of-core inputs routed as for every estimator."""

    def estimate(self, *, interval: bool = False, **target: Any) -> Estimate:
        unknown = sorted(set(target) - set(inputs))
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.estimate() got an unexpected keyword argument {unknown[0]!r}"
            )
        return self._estimate({k: target.get(k) for k in inputs}, interval)

    kw = inspect.Parameter.KEYWORD_ONLY
    estimate.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, kw, default=None) for name in inputs]
        + [inspect.Parameter("interval", kw, default=False)],
        return_annotation=Estimate,
    )
    estimate.__doc__ = LabelFreeEstimator.estimate.__doc__
    estimate.__qualname__ = "LabelFreeEstimator.estimate"
    return _streamable(_accept_common(estimate, ESTIMATE_ARGUMENTS))


LabelFreeEstimator.estimate = _streamable(LabelFreeEstimator.estimate)  # type: ignore[method-assign]
