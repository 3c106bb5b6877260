"""The one contract every label-free estimator follows.

``Estimator(params).fit(*, reference...)`` returns ``self`` and sets fitted attributes ending in ``_``;
``.estimate(*, target...)`` returns an :class:`Estimate`.  Accuracies are fractions in [0, 1], never percent.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from helpers.errors import InputValidationError, NotFittedError

__all__ = ["Estimate", "BaseEstimator", "UnusedArgumentWarning", "SmallSampleWarning", "declared_arguments"]


class UnusedArgumentWarning(UserWarning):
    """A common keyword (``labels=``, ``features=``, ...) was given to an estimator whose method does not use it."""


class SmallSampleWarning(UserWarning):
    """A target set too small for the method to mean anything (e.g. COT / COTT on fewer rows than classes: the
    rows cannot spread over the reference label distribution, and the estimate degenerates)."""


#: ids of the estimators whose ``measure`` is running in this thread / task: their ``estimate`` returns the raw score.
#: A context variable rather than an attribute, so that ``measure`` changes no estimator's state and is reentrant
#: (an estimator measured inside another's ``measure`` or ``estimate`` keeps its own behaviour) and thread-safe.
_MEASURING: ContextVar[frozenset[int]] = ContextVar("helpers_estimators_measuring", default=frozenset())


@dataclass(frozen=True)
class Estimate:
    """Result of one estimator on one target set.

    Attributes
    ----------
    method : str
        Short name of the estimator (e.g. ``"atc_mc"``).
    accuracy : float
        Predicted accuracy, a fraction in [0, 1].  ``nan`` for pure scores that need a meta-set regression.
    lower, upper : float or None
        Interval or bound on the accuracy (bootstrap interval, or the method's own bounds), fractions.
    score : float or None
        The method's raw scalar score when it differs from the accuracy (MDE, energy, nuclear norm, ...).
    n : int
        Number of target examples used.
    details : dict
        Anything else worth keeping (threshold, temperature, interval level...).
    """

    method: str
    accuracy: float
    lower: float | None = None
    upper: float | None = None
    score: float | None = None
    n: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        details = d.pop("details")
        d.update({f"detail_{k}": v for k, v in details.items()})
        return d

    def to_frame(self) -> pd.DataFrame:
        """One-row tidy frame: method, accuracy, lower, upper, score, n, detail_*."""
        return pd.DataFrame([self.to_dict()])

    def plot(self, *, true_accuracy: float | None = None, ax=None):
        """The estimate (%) as a point with its interval (when ``interval=True`` gave one), beside the true accuracy
        if you know it.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn into (``ax.figure`` when ``ax`` is given).
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5.0, 2.2), layout="constrained")
        acc = 100 * self.accuracy
        if self.lower is not None and self.upper is not None:
            ax.errorbar([acc], [0], xerr=[[acc - 100 * self.lower], [100 * self.upper - acc]], fmt="o", capsize=4,
                        label=f"{self.method} ({100 * self.lower:.1f} to {100 * self.upper:.1f} %)")  # fmt: skip
        else:
            ax.plot([acc], [0], "o", label=self.method)
        if true_accuracy is not None:
            ax.axvline(100 * true_accuracy, c="k", ls="--", lw=1, label=f"true accuracy {100 * true_accuracy:.1f} %")
        ax.set(xlim=(0, 100), ylim=(-1, 1), yticks=[], title=f"{self.method}: {acc:.1f} % on n = {self.n}")
        ax.set_xlabel("estimated accuracy (%)")
        ax.legend(fontsize=8, loc="upper left")
        return ax.figure


#: keyword arguments every estimator's ``fit`` / ``estimate`` accepts (those a method does not use are ignored)
FIT_ARGUMENTS = ("logits", "probs", "labels", "features")
ESTIMATE_ARGUMENTS = ("logits", "probs", "features", "interval")


def _accept_common(method, common: tuple[str, ...]):
    """Wrap ``method`` so that it also accepts the common keyword arguments it does not declare.

    A common argument the method does not declare is dropped; given a value (not None) it is dropped with an
    :class:`UnusedArgumentWarning` that names it, since the caller may expect it to matter.  The wrapper's
    signature is the method's plus those arguments (keyword-only, default None), so ``help()`` and
    ``inspect.signature`` show the whole contract.
    """
    sig = inspect.signature(method)
    params = sig.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return method
    extra = tuple(c for c in common if c not in params)
    if not extra:
        return method

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        unused = [name for name in extra if kwargs.pop(name, None) is not None]
        if unused:
            warnings.warn(f"{type(self).__name__}.{method.__name__} does not use {', '.join(f'{u}=' for u in unused)}"
                          "; ignored", UnusedArgumentWarning, stacklevel=2)  # fmt: skip
        return method(self, *args, **kwargs)

    added = [inspect.Parameter(c, inspect.Parameter.KEYWORD_ONLY, default=None) for c in extra]
    wrapper.__signature__ = sig.replace(parameters=[*params.values(), *added])
    return wrapper


def declared_arguments(method: Any, **arguments: Any) -> dict[str, Any]:
    """The ``arguments`` that the bound ``fit`` / ``estimate`` / ``measure`` of an estimator declares itself: for
    code that hands the same arrays to many estimators (a stacked estimator, a benchmark) without an
    :class:`UnusedArgumentWarning` for those a method does not use.  ``measure`` counts as ``estimate``."""
    if getattr(method, "__name__", "") == "measure":
        method = method.__self__.estimate
    declared = inspect.signature(inspect.unwrap(method)).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in declared.values()):
        return dict(arguments)
    return {k: v for k, v in arguments.items() if k in declared}


class BaseEstimator:
    """Parameters in ``__init__`` (stored as-is), ``fit`` returns self, fitted attributes end in ``_``.

    The common contract: every subclass's ``fit`` accepts ``logits=, probs=, labels=, features=`` and its
    ``estimate`` accepts ``logits=, probs=, features=, interval=`` (all keyword-only); the ones a method does not
    use are ignored with an :class:`UnusedArgumentWarning` when given a value (a method that *needs* one says so when
    it is missing).  scikit-learn's parameter API is
    followed, so :func:`sklearn.base.clone` works: ``get_params(deep=True)``, ``set_params(**params)``.
    """

    name: str = "base"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for meth, common in (("fit", FIT_ARGUMENTS), ("estimate", ESTIMATE_ARGUMENTS)):
            if meth in cls.__dict__:
                setattr(cls, meth, _accept_common(cls.__dict__[meth], common))

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self"
            and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The ``__init__`` parameters and their current values (``deep`` adds ``name__param`` of nested
        estimators, as in scikit-learn)."""
        out = {p: getattr(self, p) for p in self._param_names() if hasattr(self, p)}
        if deep:
            for k, v in list(out.items()):
                if hasattr(v, "get_params") and not isinstance(v, type):
                    out.update({f"{k}__{kk}": vv for kk, vv in v.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> BaseEstimator:
        """Set ``__init__`` parameters (``name__param`` for nested estimators); returns self."""
        valid = self._param_names()
        for key, value in params.items():
            head, _, rest = key.partition("__")
            if head not in valid:
                raise InputValidationError(
                    f"{key}: not a parameter of {type(self).__name__}; expected one of {sorted(valid)}"
                )
            if rest:
                getattr(self, head).set_params(**{rest: value})
            else:
                setattr(self, head, value)
        return self

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({params})"

    def measure(self, **target: Any) -> Estimate:
        """The set-level value itself: for a score-type estimator (MDE, energy, ...), ``Estimate.score`` with
        ``accuracy`` nan, no score -> accuracy line needed; for the others, the same as ``estimate``.  Takes
        ``estimate``'s keywords.  Changes no state of the estimator (safe from several threads at once)."""
        token = _MEASURING.set(_MEASURING.get() | {id(self)})
        try:
            return self.estimate(**target)
        finally:
            _MEASURING.reset(token)

    def _measuring(self) -> bool:
        """Whether this call runs inside this estimator's own :meth:`measure` (the raw score is wanted)."""
        return id(self) in _MEASURING.get()

    def _check_fitted(self, *attrs: str) -> None:
        fitted = [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]
        missing = [a for a in attrs if not hasattr(self, a)] if attrs else ([] if fitted else ["<fit>"])
        if missing:
            raise NotFittedError(
                f"{type(self).__name__} is not fitted yet: call .fit(...) before .estimate(...)"
            )
