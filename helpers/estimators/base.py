"""The one contract every label-free estimator follows.

``Estimator(params).fit(*, reference...)`` returns ``self`` and sets fitted attributes ending in ``_``;
``.estimate(*, target...)`` returns an :class:`Estimate`.  Accuracies are fractions in [0, 1], never percent.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from helpers.errors import NotFittedError

__all__ = ["Estimate", "BaseEstimator"]


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


class BaseEstimator:
    """Parameters in ``__init__`` (stored as-is), ``fit`` returns self, fitted attributes end in ``_``."""

    name: str = "base"

    def get_params(self) -> dict[str, Any]:
        sig = inspect.signature(type(self).__init__)
        return {p: getattr(self, p) for p in sig.parameters if p != "self" and hasattr(self, p)}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def _check_fitted(self, *attrs: str) -> None:
        fitted = [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]
        missing = [a for a in attrs if not hasattr(self, a)] if attrs else ([] if fitted else ["<fit>"])
        if missing:
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call .fit(...) before .estimate(...)")
