"""Meta-set regression: predict accuracy from a set-level score with a line fitted on synthetic shifted sets.

Protocol of paper 5 (Meta-Distribution Energy, Algorithm 1 and Sec. 3.3 "AutoEval pipeline"; also Deng & Zheng,
2021, "Are labels always necessary for classifier accuracy evaluation?"):

1. build a *meta-set* of C synthetic shifted copies of a labelled set D_s^i (corruptions, resampling, ...);
2. on each set compute the model's true accuracy ``acc_i`` and one scalar score ``s_i`` (MDE, average energy,
   ConfScore, entropy, nuclear norm, ... — any label-free set-level measure);
3. fit a linear regressor ``acc ≈ w·s + b`` on the C pairs (Algorithm 1 line 5);
4. on an unlabelled, unseen test set compute the same score and predict ``âcc_u = w·s_u + b`` (line 6);
5. report R², Pearson r and Spearman ρ between score and accuracy, and the MAE |acc_u − âcc_u| over unseen sets
   (line 7, Sec. 4.1).

Units and deviations from the authors' scripts (see DESIGN.md, "Facts from the authors' released code")
--------------------------------------------------------------------------------------------------------
* Accuracies are **fractions in [0, 1]**; the authors regress accuracy in *percent*.  Slopes and intercepts here are
  therefore 100× smaller; R², r and ρ are unit-free and unchanged; MAE is returned as a fraction (and as percent
  points in ``metaset_report``'s ``mae_pp`` rows, the unit of the paper's tables).
* The authors compute R² and the correlations *in-sample* on the meta-set the line was fitted on.  We report those
  too (split ``"fit"``) but also on held-out meta-sets (split ``"heldout"``), where R² is the coefficient of
  determination of the predictions and can be negative (DESIGN.md, "Pitfalls").
* ``model="huber"`` is scikit-learn's ``HuberRegressor`` (the authors' robust alternative, paper 5 Appendix J,
  Table 10) with its L2 penalty ``alpha`` defaulting to 0 here, because a penalty on the slope is not invariant to
  the unit of the accuracies or the scale of the score.  The score is standardised before fitting (both models)
  and the coefficients are mapped back, which leaves the fitted line unchanged and helps the optimiser.
* Scores that depend on set size (MDE carries a log N term) must come from sets of one size or be normalised
  before they are passed here; this module cannot detect that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.estimators.base import BaseEstimator, Estimate
from helpers.metrics import pearson_r, r2_score, spearman_rho
from helpers.validation import check_same_length, check_vector

__all__ = [
    "MetaSetRegression",
    "metaset_predict",
    "metaset_report",
    "compare_measures",
    "SPLITS",
]

_MODELS = ("linear", "huber")
SPLITS = ("fit", "heldout", "unseen")
_MIN_FIT = 3  # sets needed to fit a line and have a residual
_MIN_CORR = 3  # sets needed before R², r and ρ are reported for a split


# -------------------------------------------------------------------------------------------------- validation


def _check_scores(scores, name: str, *, min_len: int = 1) -> np.ndarray:
    return check_vector(np.atleast_1d(scores), name, min_len=min_len).astype(np.float64)


def _check_accuracies(accuracies, name: str, *, min_len: int = 1) -> np.ndarray:
    acc = check_vector(np.atleast_1d(accuracies), name, min_len=min_len).astype(np.float64)
    if acc.size == 0:
        return acc
    lo, hi = float(acc.min()), float(acc.max())
    if lo < 0.0 or hi > 1.0:
        hint = "; they look like percent: divide by 100" if hi <= 100.0 and lo >= 0.0 else ""
        raise InputValidationError(
            f"{name}: expected accuracies as fractions in [0, 1], got values in [{lo:.4g}, {hi:.4g}]{hint}"
        )
    return acc


def _check_pair(scores, accuracies, names: tuple[str, str], *, min_len: int) -> tuple[np.ndarray, np.ndarray]:
    s = _check_scores(scores, names[0], min_len=0)
    a = _check_accuracies(accuracies, names[1], min_len=0)
    check_same_length(**{names[0]: s, names[1]: a})
    if s.size < min_len:
        raise InputValidationError(
            f"{names[0]}: expected at least {min_len} set(s) (one score and one accuracy each), got {s.size}"
        )
    return s, a


def _check_not_constant(x: np.ndarray, name: str, what: str) -> None:
    if np.ptp(x) == 0:
        raise InputValidationError(
            f"{name}: all {x.size} values are equal ({x[0]:.6g}); {what} is undefined for a constant input"
        )


def _check_model(model: str) -> str:
    if model not in _MODELS:
        raise InputValidationError(f"model: expected one of {', '.join(_MODELS)}, got {model!r}")
    return model


# ------------------------------------------------------------------------------------------------- the regressor


class MetaSetRegression(BaseEstimator):
    """Linear (or Huber) regression of accuracy on a set-level score, fitted on a meta-set (paper 5, Algorithm 1).

    ``acc ≈ slope · score + intercept``, accuracies as fractions in [0, 1].

    Parameters
    ----------
    model : {"linear", "huber"}, default "linear"
        Ordinary least squares (closed form) or scikit-learn's ``HuberRegressor`` (robust to outlier sets).
    epsilon : float, default 1.35
        Huber's threshold, in units of the robust residual scale (``model="huber"`` only).
    alpha : float, default 0.0
        Huber's L2 penalty on the slope (of the standardised score); scikit-learn's default is 1e-4.
    max_iter : int, default 1000
        Iterations for the Huber optimiser.

    Attributes
    ----------
    slope_, intercept_ : float
        The fitted line, in accuracy (fraction) per unit of score, and fraction.
    n_sets_ : int
        Number of meta-set sets used.
    score_range_ : tuple of float
        (min, max) of the fitting scores; predictions outside it are extrapolations.
    fit_r2_, fit_pearson_r_, fit_spearman_rho_ : float
        In-sample R² of the fitted predictions, and r / ρ between score and accuracy (the authors' numbers).

    Examples
    --------
    >>> reg = MetaSetRegression().fit(scores=[1.0, 2.0, 3.0, 4.0], accuracies=[0.5, 0.6, 0.7, 0.8])
    >>> round(reg.slope_, 6), round(reg.intercept_, 6)
    (0.1, 0.4)
    >>> reg.estimate(score=2.5).accuracy
    0.65
    """

    name = "metaset"

    def __init__(
        self,
        *,
        model: Literal["linear", "huber"] = "linear",
        epsilon: float = 1.35,
        alpha: float = 0.0,
        max_iter: int = 1000,
    ):
        self.model = model
        self.epsilon = epsilon
        self.alpha = alpha
        self.max_iter = max_iter

    # ---------------------------------------------------------------------------------------------- fit / predict

    def fit(self, *, scores, accuracies) -> MetaSetRegression:
        """Fit the line on the meta-set.

        Parameters
        ----------
        scores : array-like of shape (n_sets,)
            One scalar score per synthetic set (finite, not all equal), at least 3 sets.
        accuracies : array-like of shape (n_sets,)
            True accuracy of the model on each set, fractions in [0, 1].

        Returns
        -------
        self
        """
        model = _check_model(self.model)
        s, a = _check_pair(scores, accuracies, ("scores", "accuracies"), min_len=_MIN_FIT)
        _check_not_constant(s, "scores", "the regression of accuracy on the score (and R²)")
        if model == "huber":
            if not (float(self.epsilon) >= 1.0):
                raise InputValidationError(f"epsilon: expected a value >= 1.0, got {self.epsilon!r}")
            if not (float(self.alpha) >= 0.0):
                raise InputValidationError(f"alpha: expected a value >= 0, got {self.alpha!r}")

        mu, sd = float(s.mean()), float(s.std())
        z = (s - mu) / sd
        if model == "linear":
            b_z = float(np.dot(z, a - a.mean()) / np.dot(z, z))
            c_z = float(a.mean())  # z has mean 0
        else:
            b_z, c_z = self._fit_huber(z, a)
        self.slope_ = b_z / sd
        self.intercept_ = c_z - b_z * mu / sd
        self.n_sets_ = int(s.size)
        self.score_range_ = (float(s.min()), float(s.max()))
        pred = self.slope_ * s + self.intercept_
        constant_acc = np.ptp(a) == 0
        self.fit_r2_ = float("nan") if constant_acc else r2_score(true=a, predicted=pred)
        self.fit_pearson_r_ = float("nan") if constant_acc else pearson_r(s, a)
        self.fit_spearman_rho_ = (
            float("nan") if constant_acc else spearman_rho(s, a)
        )
        self.fit_mae_ = float(np.mean(np.abs(pred - a)))
        return self

    def _fit_huber(self, z: np.ndarray, a: np.ndarray) -> tuple[float, float]:
        from sklearn.linear_model import HuberRegressor

        reg = HuberRegressor(
            epsilon=float(self.epsilon), alpha=float(self.alpha), max_iter=int(self.max_iter)
        )
        reg.fit(z[:, None], a)
        return float(reg.coef_[0]), float(reg.intercept_)

    def predict(self, scores, *, clip: bool = False) -> np.ndarray:
        """Predicted accuracies ``slope · score + intercept`` (Algorithm 1 line 6), shape (n_sets,).

        Parameters
        ----------
        scores : array-like of shape (n_sets,) or a scalar
            Scores of the target sets, same definition (and set size / temperature) as at fit time.
        clip : bool, default False
            Clip to [0, 1].  Off by default, as in the authors' evaluation (the raw line).
        """
        self._check_fitted("slope_", "intercept_")
        s = _check_scores(scores, "scores")
        pred = self.slope_ * s + self.intercept_
        return np.clip(pred, 0.0, 1.0) if clip else pred

    def estimate(self, *, score) -> Estimate:
        """Accuracy estimate for one unlabelled target set from its scalar score.

        Returns
        -------
        Estimate
            ``accuracy`` = the prediction clipped to [0, 1]; ``score`` = the input score; ``details``: ``slope``,
            ``intercept``, ``raw_accuracy`` (unclipped), ``extrapolated`` (score outside the fitting range),
            ``model``, ``n_sets``.  ``n`` is 0 (the number of examples is not known from a score).
        """
        self._check_fitted("slope_", "intercept_")
        s = _check_scores(score, "score")
        if s.size != 1:
            raise InputValidationError(
                f"score: expected one scalar score for one target set, got {s.size} values; use predict() for many"
            )
        x = float(s[0])
        raw = self.slope_ * x + self.intercept_
        lo, hi = self.score_range_
        return Estimate(
            method=f"metaset_{self.model}",
            accuracy=float(min(1.0, max(0.0, raw))),
            score=x,
            n=0,
            details={
                "slope": self.slope_,
                "intercept": self.intercept_,
                "raw_accuracy": raw,
                "extrapolated": bool(x < lo or x > hi),
                "model": self.model,
                "n_sets": self.n_sets_,
            },
        )

    def evaluate(self, *, scores, accuracies, clip: bool = False) -> dict[str, float]:
        """R², Pearson r, Spearman ρ and MAE of the fitted line on some sets (paper 5, Sec. 4.1).

        * ``r2`` = 1 − Σ(acc − âcc)² / Σ(acc − mean acc)², the coefficient of determination of the *predictions*;
          on the fitting sets it equals r² (the authors' number), on other sets it can be negative.
        * ``pearson_r`` and ``spearman_rho`` are computed between the raw *score* and accuracy (sign kept), as in
          the paper; they do not depend on the fitted line.
        * ``mae`` = mean |acc − âcc|, a fraction; ``mae_pp`` = the same in percent points.

        R², r and ρ need at least 3 sets and non-constant accuracies and scores; with fewer sets they are NaN and
        only the MAE is returned.

        Parameters
        ----------
        scores, accuracies : array-like of shape (n_sets,)
            Scores and true accuracies (fractions) of the evaluation sets.
        clip : bool, default False
            Clip predictions to [0, 1] before computing R² and MAE.
        """
        self._check_fitted("slope_", "intercept_")
        s, a = _check_pair(scores, accuracies, ("scores", "accuracies"), min_len=1)
        pred = self.predict(s, clip=clip)
        return _evaluate(s, a, pred)


def _evaluate(s: np.ndarray, a: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    out = {"r2": math.nan, "pearson_r": math.nan, "spearman_rho": math.nan}
    if s.size >= _MIN_CORR:
        _check_not_constant(a, "accuracies", "R² / correlation with accuracy")
        _check_not_constant(s, "scores", "correlation with accuracy")
        out = {
            "r2": r2_score(true=a, predicted=pred),
            "pearson_r": pearson_r(s, a),
            "spearman_rho": spearman_rho(s, a),
        }
    mae = float(np.mean(np.abs(pred - a)))
    out.update({"mae": mae, "mae_pp": 100.0 * mae, "n_sets": int(s.size)})
    return out


# -------------------------------------------------------------------------------------------- function forms


def metaset_predict(
    fit_scores,
    fit_accuracies,
    target_scores,
    *,
    model: Literal["linear", "huber"] = "linear",
    clip: bool = True,
) -> np.ndarray:
    """One-off form: fit on ``(fit_scores, fit_accuracies)`` and predict the accuracies of ``target_scores``.

    Predictions are clipped to [0, 1] by default (``clip=False`` for the raw line).
    """
    reg = MetaSetRegression(model=model).fit(scores=fit_scores, accuracies=fit_accuracies)
    return reg.predict(target_scores, clip=clip)


_REPORT_COLUMNS = ["split", "measure", "value", "n_sets", "model"]


def metaset_report(
    fit_scores,
    fit_acc,
    heldout_scores=None,
    heldout_acc=None,
    unseen_scores=None,
    unseen_acc=None,
    *,
    model: Literal["linear", "huber"] = "linear",
    clip: bool = False,
) -> pd.DataFrame:
    """Fit on a meta-set and report every measure the same way on each split: one row per (measure, split).

    Splits
    ------
    ``fit``
        The sets the line was fitted on — R², r, ρ as the authors' scripts compute them (in-sample), plus MAE.
    ``heldout``
        Further synthetic sets not used for fitting (e.g. other corruptions or seeds): R², r, ρ, MAE.
    ``unseen``
        Natural shifts (CIFAR-10.1, STL-10, ...): MAE only (paper 5, Tables 3–4, 7–8), as the few unseen sets
        are of different natures and correlations over them are not part of the protocol.

    Measures
    --------
    ``r2`` (coefficient of determination of predictions), ``pearson_r`` and ``spearman_rho`` (score vs accuracy),
    ``mae`` (fraction) and ``mae_pp`` (percent points).  R², r and ρ are omitted for a split with fewer than 3 sets.

    Parameters
    ----------
    fit_scores, fit_acc : array-like of shape (n_fit,)
        Meta-set scores and accuracies (fractions), n_fit ≥ 3.
    heldout_scores, heldout_acc : array-like of shape (n_heldout,), optional
        Held-out synthetic sets; give both or neither.
    unseen_scores, unseen_acc : array-like of shape (n_unseen,), optional
        Unseen natural-shift sets; give both or neither.
    model : {"linear", "huber"}
        Regressor, see :class:`MetaSetRegression`.
    clip : bool, default False
        Clip predictions to [0, 1] before R² / MAE.

    Returns
    -------
    pandas.DataFrame
        Columns ``split, measure, value, n_sets, model``.
    """
    reg = MetaSetRegression(model=model).fit(scores=fit_scores, accuracies=fit_acc)
    splits: list[tuple[str, object, object, tuple[str, str]]] = [
        ("fit", fit_scores, fit_acc, ("fit_scores", "fit_acc")),
        ("heldout", heldout_scores, heldout_acc, ("heldout_scores", "heldout_acc")),
        ("unseen", unseen_scores, unseen_acc, ("unseen_scores", "unseen_acc")),
    ]
    rows = []
    for split, sc, ac, names in splits:
        if sc is None and ac is None:
            continue
        if sc is None or ac is None:
            missing = names[0] if sc is None else names[1]
            raise InputValidationError(
                f"{missing}: required when {names[1] if sc is None else names[0]} is given"
            )
        s, a = _check_pair(sc, ac, names, min_len=1)
        pred = reg.predict(s, clip=clip)
        if split == "unseen":
            mae = float(np.mean(np.abs(pred - a)))
            res = {"mae": mae, "mae_pp": 100.0 * mae}
        else:
            try:
                res = _evaluate(s, a, pred)
            except InputValidationError as exc:
                raise InputValidationError(f"{names[0]}/{names[1]} ({split} split): {exc}") from exc
            res.pop("n_sets")
            if s.size < _MIN_CORR:
                for key in ("r2", "pearson_r", "spearman_rho"):
                    res.pop(key)
        for measure, value in res.items():
            rows.append(
                {
                    "split": split,
                    "measure": measure,
                    "value": float(value),
                    "n_sets": int(s.size),
                    "model": model,
                }
            )
    return pd.DataFrame(rows, columns=_REPORT_COLUMNS)


def compare_measures(
    scores,
    accuracies,
    split_labels,
    *,
    model: Literal["linear", "huber"] = "linear",
    clip: bool = False,
) -> pd.DataFrame:
    """Run :func:`metaset_report` for several scores on the same sets, so every measure is judged the same way.

    Parameters
    ----------
    scores : pandas.DataFrame or mapping of name → array-like
        One column (or entry) per measure (``"MDE"``, ``"ConfScore"``, ...), one row per set, aligned with
        ``accuracies`` and ``split_labels``.
    accuracies : array-like of shape (n_sets,)
        True accuracy of each set (fractions).
    split_labels : array-like of str, shape (n_sets,)
        ``"fit"``, ``"heldout"`` or ``"unseen"`` for each set; at least 3 ``"fit"`` sets.
    model, clip
        As in :func:`metaset_report`.

    Returns
    -------
    pandas.DataFrame
        Columns ``score, split, measure, value, n_sets, model``; pivot with
        ``frame.pivot_table(index=["split", "measure"], columns="score", values="value")`` for a wide table.
    """
    if isinstance(scores, pd.DataFrame):
        items = [(str(c), scores[c].to_numpy()) for c in scores.columns]
    elif isinstance(scores, Mapping):
        items = [(str(k), np.asarray(v)) for k, v in scores.items()]
    else:
        raise InputValidationError(
            f"scores: expected a pandas DataFrame or a mapping name -> array, got {type(scores).__name__}"
        )
    if not items:
        raise InputValidationError("scores: expected at least one measure, got none")
    acc = _check_accuracies(accuracies, "accuracies")
    labels = np.asarray(split_labels).astype(str)
    if labels.ndim != 1:
        raise InputValidationError(
            f"split_labels: expected a 1-D array of split names, got shape {labels.shape}"
        )
    check_same_length(accuracies=acc, split_labels=labels)
    unknown = sorted(set(labels.tolist()) - set(SPLITS))
    if unknown:
        raise InputValidationError(
            f"split_labels: expected values in {', '.join(SPLITS)}, got unknown {unknown}"
        )
    n_fit = int(np.sum(labels == "fit"))
    if n_fit < _MIN_FIT:
        raise InputValidationError(f"split_labels: expected at least {_MIN_FIT} 'fit' sets, got {n_fit}")

    frames = []
    for name, values in items:
        s = _check_scores(values, f"scores[{name!r}]")
        if s.shape[0] != acc.shape[0]:
            raise InputValidationError(
                f"scores[{name!r}]: expected {acc.shape[0]} values (one per set in accuracies), got {s.shape[0]}"
            )
        parts = {}
        for split in SPLITS:
            m = labels == split
            parts[split] = (s[m], acc[m]) if m.any() else (None, None)
        try:
            frame = metaset_report(*parts["fit"], *parts["heldout"], *parts["unseen"], model=model, clip=clip)
        except InputValidationError as exc:
            raise InputValidationError(f"scores[{name!r}]: {exc}") from exc
        frame.insert(0, "score", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
