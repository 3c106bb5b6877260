"""An ensemble of estimators: regress the true accuracy of labelled shifted sets on every method's estimate.

No single label-free method wins on every shift family (notebook 06).  Stacking (Wolpert 1992; Breiman 1996)
learns how much to trust each one from labelled shifted sets:

    â(x) = x̄ + b + Σ_j w_j (x_j − μ_j) / σ_j

where ``x_j`` is method j's accuracy estimate on the set (or, for a score-type method such as the nuclear norm, its
raw label-free score: the ridge then also does paper 5's meta-set regression, on several scores at once), ``x̄`` the
plain average of the *accuracy-type* columns (the ``anchor``), ``μ_j``/``σ_j`` the mean
and standard deviation of ``x_j`` over the fitting sets, and ``(b, w)`` a ridge regression of ``y − x̄`` (the
average's error) on the standardised estimates, ``b`` unpenalised.  The ridge therefore shrinks towards *the average
of the methods plus a bias correction* (a sensible estimator on its own), not towards a constant accuracy; the
predictions are clipped to [0, 1].  ``alpha = inf`` is that limit.

The penalty ``alpha`` is chosen from ``alphas`` by cross-validation *inside* ``fit`` (leave-one-group-out MAE,
groups = shift families, or one set per group when none are given), so an outer evaluation that holds out a family
(notebook 06) is nested cross-validation.  ``oof_`` keeps the inner out-of-fold predictions at the chosen alpha:
they are what :class:`~helpers.estimators.conformal.ShiftConformal` calibrates a stacked estimator's interval on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators.base import BaseEstimator, Estimate, declared_arguments
from helpers.estimators.conformal import _shifted_sets, set_accuracy
from helpers.validation import check_matrix, check_vector

__all__ = ["DEFAULT_ALPHAS", "STACK_METHODS", "STACK_METHODS_SOTA", "StackedRegression", "StackedEstimator"]

#: penalty grid (standardised features), the last entry is the plain average plus a bias
DEFAULT_ALPHAS: tuple[float, ...] = (*(float(a) for a in 10.0 ** np.arange(-3.0, 4.5, 0.5)), math.inf)
#: default base estimators: accuracy-type ones and the raw scores of paper 5's meta-set regression, all of them
#: logits-only and cheap (COT's exact transport, ~0.26 s per 2,000 examples x 10 classes, would dominate the
#: bootstrap, which re-runs every base on each resample; agreement needs a second model)
STACK_METHODS: tuple[str, ...] = (
    "average_confidence",
    "doc",
    "maxprob",
    "atc_mc",
    "atc_ne",
    "cbpe",
    "nuclear_norm",
    "average_negative_entropy",
    "average_energy",
    "mde_normalized",
)
#: the base set re-decided when the methods of 2023-2025 joined, by a rule fixed before the run that reports it:
#: every registered logits-only method (no second model, no features) whose point estimate costs at most 5 ms at
#: 2,000 x 10 (median of 15 on the 2-core machine, load 1.1: COT and COTT 3.6 ms, MaNo 0.6, CBPE 1.8, the others
#: <= 0.5), since the bootstrap re-runs every base on each resample
STACK_METHODS_SOTA: tuple[str, ...] = STACK_METHODS + ("cot", "cott", "mano", "softmax_corr", "confusion_matrix_shift")


def _ridge(z: np.ndarray, r: np.ndarray, alpha: float) -> tuple[float, np.ndarray]:
    """Intercept and weights of ``min ||r − b − z w||² + alpha ||w||²`` for column-centred ``z``."""
    b = float(r.mean())
    if math.isinf(alpha):
        return b, np.zeros(z.shape[1])
    w = np.linalg.solve(z.T @ z + alpha * np.eye(z.shape[1]), z.T @ (r - b))
    return b, w


class StackedRegression(BaseEstimator):
    """Ridge stacking of per-set estimates ``X`` (sets × methods, fractions) onto true accuracies ``y``.

    Parameters
    ----------
    alphas : sequence of float, default :data:`DEFAULT_ALPHAS`
        Candidate penalties (``inf`` allowed); chosen by leave-one-group-out MAE.
    anchor : sequence of int, optional
        Columns whose row average is the shrinkage target ``x̄`` (accuracy-type columns); default all columns.

    Attributes
    ----------
    alpha_ : float
        The chosen penalty.
    intercept_ : float
    coef_ : array (m,)
        Weights of the standardised estimates.
    mean_, scale_ : arrays (m,)
        Standardisation of the columns (a constant column gets scale 1).
    cv_mae_ : dict alpha -> float
        Inner cross-validated MAE of every candidate (fraction).
    oof_ : array (n,)
        Out-of-fold predictions at ``alpha_`` (each set predicted by a fit that did not see its group).
    """

    def __init__(self, alphas: Sequence[float] = DEFAULT_ALPHAS, *, anchor: Sequence[int] | None = None):
        self.alphas = alphas
        self.anchor = anchor

    def _anchor(self, x: np.ndarray) -> np.ndarray:
        cols = list(range(x.shape[1])) if self.anchor is None else list(self.anchor)
        if not cols or min(cols) < 0 or max(cols) >= x.shape[1]:
            raise InputValidationError(
                f"anchor: expected column indices in [0, {x.shape[1]}), got {self.anchor!r}"
            )
        return x[:, cols].mean(axis=1)

    def _check(self, X: Any, y: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
        x = check_matrix(X, "X").astype(np.float64)
        if y is None:
            return x, None
        t = check_vector(np.atleast_1d(y), "y").astype(np.float64)
        if t.size != x.shape[0]:
            raise InputValidationError(
                f"X and y: expected one accuracy per row of X ({x.shape[0]}), got {t.size}"
            )
        if t.min() < 0 or t.max() > 1:
            raise InputValidationError(
                f"y: expected accuracies as fractions in [0, 1], got [{t.min():.4g}, {t.max():.4g}]"
            )
        return x, t

    def _fit_one(
        self, x: np.ndarray, y: np.ndarray, alpha: float
    ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale == 0] = 1.0
        b, w = _ridge((x - mean) / scale, y - self._anchor(x), alpha)
        return b, w, mean, scale

    def _predict_one(
        self, x: np.ndarray, params: tuple[float, np.ndarray, np.ndarray, np.ndarray]
    ) -> np.ndarray:
        b, w, mean, scale = params
        return np.clip(self._anchor(x) + b + ((x - mean) / scale) @ w, 0.0, 1.0)

    def fit(self, X: Any, y: Any, *, groups: Any = None) -> StackedRegression:
        """Choose ``alpha_`` by leave-one-group-out MAE, then refit on all rows."""
        x, t = self._check(X, y)
        alphas = [float(a) for a in self.alphas]
        if not alphas or any(not (a >= 0) for a in alphas):
            raise InputValidationError(f"alphas: expected non-negative penalties, got {self.alphas!r}")
        g = np.arange(len(t)) if groups is None else np.asarray(groups)
        if g.shape != t.shape:
            raise InputValidationError(
                f"groups: expected one group label per row ({len(t)}), got shape {g.shape}"
            )
        uniq = np.unique(g)
        if len(uniq) < 2:
            raise InputValidationError(
                f"groups: expected at least 2 groups to cross-validate alpha, got {len(uniq)}"
            )
        oof = np.empty((len(alphas), len(t)))
        for grp in uniq:
            held = g == grp
            for i, a in enumerate(alphas):
                oof[i, held] = self._predict_one(x[held], self._fit_one(x[~held], t[~held], a))
        mae = np.abs(oof - t).mean(axis=1)
        best = int(np.argmin(mae))  # ties -> the smaller alpha listed first
        self.alpha_ = alphas[best]
        self.cv_mae_ = dict(zip(alphas, mae.tolist()))
        self.oof_ = oof[best]
        self.intercept_, self.coef_, self.mean_, self.scale_ = self._fit_one(x, t, self.alpha_)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Stacked accuracy (fractions in [0, 1]) for every row of ``X``."""
        self._check_fitted("coef_")
        x, _ = self._check(X)
        if x.shape[1] != self.coef_.size:
            raise InputValidationError(f"X: expected {self.coef_.size} columns (methods), got {x.shape[1]}")
        return self._predict_one(x, (self.intercept_, self.coef_, self.mean_, self.scale_))


class StackedEstimator(BaseEstimator):
    """The stacked estimator behind the common contract: base estimators fitted on the reference, the stacking
    line fitted on labelled shifted sets (``fit(..., shifted=...)``; :func:`~helpers.benchmark.run_benchmark`
    passes a task's meta-set).

    Parameters
    ----------
    methods : sequence of str, default :data:`STACK_METHODS`
        Registry names of base estimators: accuracy-type ones enter with their estimate (and form the anchor
        ``x̄``), score-type ones (``nuclear_norm``, ``average_energy``, ...) with their raw score.
    alphas : sequence of float, default :data:`DEFAULT_ALPHAS`
    n_boot, level, random_state
        ``estimate(..., interval=True)``: percentile bootstrap over target examples, resampling the rows and
        re-running every base estimator on each resample (cost: ``n_boot`` times the bases' point estimates) --
        sampling noise only; :class:`ShiftConformal` gives the interval that covers the shift error.

    Attributes
    ----------
    estimators_ : dict name -> fitted base estimator
    regression_ : StackedRegression
    cross_fitted_ : array
        Out-of-fold stacked estimates of the shifted sets (what :class:`ShiftConformal` calibrates on).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = StackedEstimator(methods=["average_confidence", "doc", "mde"]).fit(logits=z, labels=y, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4)
    0.4858
    """

    name = "stacked"
    output = "accuracy"

    def __init__(
        self,
        methods: Sequence[str] = STACK_METHODS,
        *,
        alphas: Sequence[float] = DEFAULT_ALPHAS,
        n_boot: int = 200,
        level: float = 0.95,
        random_state: int | None = 0,
    ):
        self.methods = methods
        self.alphas = alphas
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def _row(self, d: dict[str, Any]) -> np.ndarray:
        out = []
        for est in self.estimators_.values():
            is_score = getattr(est, "output", "accuracy") == "score"
            method = est.measure if is_score else est.estimate
            e = method(**declared_arguments(method, logits=d.get("logits"), probs=d.get("probs"),
                                            features=d.get("features")))  # fmt: skip
            out.append(e.score if is_score else e.accuracy)
        return np.array(out, dtype=np.float64)

    def fit(
        self,
        *,
        logits: Any = None,
        probs: Any = None,
        labels: Any = None,
        features: Any = None,
        shifted: Any = None,
        groups: Any = None,
    ) -> StackedEstimator:
        """Fit every base estimator on the labelled reference, then the stacking line on ``shifted`` (labelled
        shifted sets; ``groups`` = one label per set for the inner cross-validation, default one set per group)."""
        from helpers.estimators.registry import get_estimator

        if isinstance(self.methods, str) or not len(self.methods):
            raise InputValidationError(
                f"methods: expected a non-empty list of estimator names, got {self.methods!r}"
            )
        if shifted is None:
            raise InputValidationError(
                "StackedEstimator.fit: shifted= is required (labelled shifted sets to learn the weights on, e.g. a "
                "task's meta-set: {name: (logits, labels)}); run_benchmark passes the task's meta-set"
            )
        sets = _shifted_sets(shifted)
        if len(sets) < 3:
            raise InputValidationError(
                f"shifted: expected at least 3 labelled shifted sets to stack on, got {len(sets)}"
            )
        given = {"logits": logits, "probs": probs, "labels": labels, "features": features}
        self.estimators_ = {}
        for m in self.methods:
            est = get_estimator(m)
            self.estimators_[m] = est.fit(**declared_arguments(est.fit, **given))
        anchor = [
            i
            for i, e in enumerate(self.estimators_.values())
            if getattr(e, "output", "accuracy") == "accuracy"
        ]
        if not anchor:
            raise InputValidationError(
                f"methods: expected at least one accuracy-type estimator, got {list(self.methods)}"
            )
        x = np.vstack([self._row(d) for d in sets])
        y = np.array([set_accuracy(d) for d in sets])
        self.regression_ = StackedRegression(alphas=self.alphas, anchor=anchor).fit(x, y, groups=groups)
        self.cross_fitted_ = self.regression_.oof_
        return self

    def estimate(
        self, *, logits: Any = None, probs: Any = None, features: Any = None, interval: bool = False
    ) -> Estimate:
        """Stacked accuracy (fraction); ``interval=True`` adds the bootstrap interval described in the class doc."""
        from helpers.estimators._common import check_bootstrap_params
        from helpers.estimators.bootstrap import percentile_interval
        from helpers.estimators.streaming import is_out_of_core

        self._check_fitted("regression_")
        check_bootstrap_params(self.n_boot, self.level)
        if not isinstance(interval, (bool, np.bool_)):
            raise InputValidationError(f"interval: expected True or False, got {interval!r}")
        target = {"logits": logits, "probs": probs, "features": features}
        out_of_core = [k for k, v in target.items() if v is not None and is_out_of_core(v)]
        if out_of_core:  # refused before any base method reads the store (some of them cannot stream at all)
            raise InputValidationError(
                f"{out_of_core[0]}: {self.name} does not run out of core (a Dask array or a store path): its base "
                f"methods would each read the whole store, and COT, COTT, agreement, Dispersion and Fréchet cannot; "
                f"load the predictions into memory, or estimate streamable methods one by one"
            )
        x = self._row(target)
        acc = float(self.regression_.predict(x[None, :])[0])
        n = int(np.shape(logits if logits is not None else probs)[0])
        details: dict[str, Any] = {
            "alpha": self.regression_.alpha_,
            **{f"x_{m}": float(v) for m, v in zip(self.estimators_, x)},
        }
        lower = upper = None
        if interval:
            rng = np.random.default_rng(self.random_state)
            rows = np.vstack([
                self._row({k: None if v is None else np.asarray(v)[idx] for k, v in target.items()})
                for idx in (rng.integers(0, n, n) for _ in range(self.n_boot))
            ])  # fmt: skip
            lower, upper = percentile_interval(self.regression_.predict(rows), self.level)
            details.update(
                interval="percentile bootstrap over target examples", level=self.level, n_boot=self.n_boot
            )
        return Estimate(self.name, acc, lower, upper, None, n, details)
