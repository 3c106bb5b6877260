"""Leave-one-family-out evaluation of the stacked estimator and of shift-aware (conformal) intervals.

From a benchmark's tidy rows (:data:`~helpers.benchmark.engine.COLUMNS`: one estimate per task, target set and
method, with the set's true accuracy), hold out one shift family at a time and use only the *other* families'
labelled sets to

* fit the stacked estimator (:class:`~helpers.estimators.StackedRegression`, penalty chosen by an inner
  leave-one-family-out loop over the remaining families: nested cross-validation), then predict the held-out
  family's sets;
* calibrate a split-conformal radius for every method (:func:`~helpers.estimators.conformal_radius`) on its
  absolute errors there (for the stacked estimator: its inner out-of-fold errors), plain and scaled by the
  label-free difficulty ``|estimate − reference accuracy| + floor`` when reference accuracies are given, and
  CDF-pooled (``conformal_pooled``: every calibration family weighs alike, Dunn et al. 2023; see
  :mod:`helpers.estimators.conformal`), and scaled by the disagreement of the stacked single methods
  (``conformal_spread``: ``s = std_j(â_j) + floor`` on the set, :func:`~helpers.estimators.disagreement_scale`),
  and measure coverage and width on the held-out family.

This is the honest test of the conformal guarantee: families are *not* exchangeable with each other, so coverage
below the level on a held-out family is the price of a shift unlike the calibration shifts.  Bootstrap intervals
of the rows (target-sampling noise only) are carried along for comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.estimators import StackedRegression, conformal_radius, difficulty_scale, disagreement_scale
from helpers.estimators.stacking import DEFAULT_ALPHAS

__all__ = ["CrossFamilyResult", "leave_one_family_out", "STACKED", "STACKED_AUTO"]

STACKED = "stacked_cross"
STACKED_AUTO = "stacked_auto"
_KEY = ["task", "family", "set"]
_NEEDED = {"task", "family", "set", "method", "estimate", "true_accuracy"}
_INTERVAL_COLUMNS = _KEY + ["method", "interval", "level", "estimate", "true_accuracy", "lower", "upper", "covered",
                            "width", "radius", "n_calibration"]  # fmt: skip


@dataclass
class CrossFamilyResult:
    """Point predictions and intervals of a leave-one-family-out run.

    Attributes
    ----------
    predictions : DataFrame
        task, family, set, method, estimate, true_accuracy, abs_error (stacked = held-out prediction).
    intervals : DataFrame
        task, family, set, method, interval ("bootstrap", "conformal", "conformal_drop", "conformal_pooled",
        "conformal_spread"), level, lower, upper,
        covered, width, radius, n_calibration.
    weights : DataFrame
        Per held-out family: the chosen alpha, intercept, inner CV MAE and the weight of every stacked method.
    """

    predictions: pd.DataFrame
    intervals: pd.DataFrame
    weights: pd.DataFrame

    def to_df(self) -> pd.DataFrame:
        """The intervals table (one row per set, method, interval kind and level)."""
        return self.intervals.copy()

    def mae(self) -> pd.DataFrame:
        """Mean absolute error (fraction), method × family, plus ``overall`` (all sets the method ran on) and
        ``n_sets``; sorted by overall."""
        p = self.predictions
        t = p.pivot_table(index="method", columns="family", values="abs_error", aggfunc="mean")
        t.columns.name = None
        t["overall"] = p.groupby("method")["abs_error"].mean()
        t["n_sets"] = p.groupby("method").size()
        return t.sort_values("overall")

    def vs_stacked(self, stacked: str = STACKED) -> pd.DataFrame:
        """Every other method against a stacked one **on the same sets** (the other method's own): MAE of
        each (fraction), ``n_sets`` and ``stacked_better``; sorted by the method's MAE."""
        p = self.predictions
        st = p[p["method"] == stacked].set_index(_KEY)["abs_error"]
        out = []
        for method, g in p[p["method"] != stacked].groupby("method"):
            mine = g.set_index(_KEY)["abs_error"]
            theirs = st.reindex(mine.index)
            out.append({"method": method, "mae": mine.mean(), "stacked_mae": theirs.mean(), "n_sets": len(mine),
                        "stacked_better": bool(theirs.mean() < mine.mean())})  # fmt: skip
        return pd.DataFrame(out).set_index("method").sort_values("mae")

    def _by(self, value: str, level: float) -> pd.DataFrame:
        d = self.intervals[np.isclose(self.intervals["level"], level)].copy()
        d["covered"] = d["covered"].astype(float)
        t = d.pivot_table(index=["method", "interval"], columns="family", values=value, aggfunc="mean")
        t.columns.name = None
        t["overall"] = d.groupby(["method", "interval"])[value].mean()
        return t

    def coverage(self, level: float = 0.9) -> pd.DataFrame:
        """Fraction of held-out sets whose true accuracy lies in the interval, (method, interval) × family."""
        return self._by("covered", level)

    def width(self, level: float = 0.9) -> pd.DataFrame:
        """Mean interval width (fraction), (method, interval) × family."""
        return self._by("width", level)

    def plot(self, *, method: str = STACKED, level: float = 0.9, axes=None):
        """Estimate ± interval against the true accuracy (%) for every set, one panel per interval kind of
        ``method`` at ``level``, coloured by family; returns the axes."""
        import matplotlib.pyplot as plt

        d = self.intervals[(self.intervals["method"] == method) & np.isclose(self.intervals["level"], level)]
        kinds = sorted(d["interval"].unique())
        if not kinds:
            raise InputValidationError(f"method/level: no intervals for {method!r} at level {level}")
        if axes is None:
            _, axes = plt.subplots(1, len(kinds), figsize=(5.5 * len(kinds), 5), squeeze=False)
            axes = axes[0]
        colours = dict(zip(sorted(d["family"].unique()), plt.get_cmap("tab20").colors))  # up to 20 families apart
        for ax, kind in zip(axes, kinds):
            k = d[d["interval"] == kind]
            for fam, g in k.groupby("family"):
                cov = g["covered"].astype(float).mean()
                ax.errorbar(100 * g["true_accuracy"], 100 * g["estimate"],
                            yerr=[100 * (g["estimate"] - g["lower"]), 100 * (g["upper"] - g["estimate"])],
                            fmt="o", ms=3, lw=0.8, alpha=0.7, color=colours.get(fam),
                            label=f"{fam} (coverage {cov:.0%})")  # fmt: skip
            ax.plot([0, 100], [0, 100], "k--", lw=1)
            ax.set(xlim=(0, 100), ylim=(0, 100), xlabel="true accuracy (%)", ylabel=f"{method} estimate (%)",
                   title=f"{method} ± {kind} {level:.0%} interval, each family held out")  # fmt: skip
            ax.legend(fontsize=7, loc="upper left", ncol=2 if len(colours) > 8 else 1)
        return axes


def _check_rows(rows: pd.DataFrame, name: str) -> pd.DataFrame:
    if not isinstance(rows, pd.DataFrame):
        raise InputValidationError(
            f"{name}: expected a DataFrame of benchmark rows, got {type(rows).__name__}"
        )
    missing = _NEEDED - set(rows.columns)
    if missing:
        raise InputValidationError(f"{name}: missing columns {sorted(missing)}")
    return rows[np.isfinite(rows["estimate"].astype(float))]


def _stack_features(wide: pd.DataFrame, stack_methods: Sequence[str] | None) -> list[str]:
    if stack_methods is None:
        cols = [c for c in wide.columns if wide[c].notna().all()]
        if not cols:
            raise InputValidationError("rows: no method has an estimate on every set; pass stack_methods")
        return cols
    missing = [m for m in stack_methods if m not in wide.columns or wide[m].isna().any()]
    if missing:
        raise InputValidationError(
            f"stack_methods: {missing} lack an estimate on some sets; stack methods that ran everywhere"
        )
    return list(stack_methods)


def _interval_rows(
    test: pd.DataFrame, cal_est, cal_true, *, method, levels, ref_acc, cal_ref, floor, cal_groups, spread, cal_keys
) -> list[pd.DataFrame]:
    """Conformal interval rows for ``test`` (columns of _KEY + estimate + true_accuracy + task); ``cal_groups``
    is the family of every calibration set (for the pooled kind), ``cal_keys`` their (task, family, set) keys into
    ``spread``, the disagreement scale of every set (for the spread kind)."""
    kinds: list[tuple[str, Any, Any, Any]] = [("conformal", None, None, None)]
    if ref_acc is not None:
        kinds.append(("conformal_drop", difficulty_scale(cal_est, cal_ref, floor=floor),
                      difficulty_scale(test["estimate"].to_numpy(), test["task"].map(ref_acc).to_numpy(), floor=floor),
                      None))  # fmt: skip
    kinds.append(("conformal_pooled", None, None, np.asarray(cal_groups)))
    kinds.append(("conformal_spread", spread.loc[cal_keys].to_numpy(),
                  spread.loc[pd.MultiIndex.from_frame(test[_KEY])].to_numpy(), None))  # fmt: skip
    est, truth = test["estimate"].to_numpy(np.float64), test["true_accuracy"].to_numpy(np.float64)
    blocks = []  # one block of len(test) rows per (kind, level), built with numpy and framed once at the end
    for kind, cal_s, test_s, groups in kinds:
        s = np.ones(len(test)) if test_s is None else test_s
        for level in levels:
            q = conformal_radius(cal_est, cal_true, level=level, scales=cal_s, groups=groups)
            lo, hi = np.clip(est - q * s, 0, 1), np.clip(est + q * s, 0, 1)
            blocks.append({"interval": kind, "level": level, "lower": lo, "upper": hi, "radius": q})
    n = len(blocks)
    cols = {c: np.tile(test[c].to_numpy(), n) for c in _KEY}
    cols.update(method=method, interval=np.repeat([b["interval"] for b in blocks], len(test)),
                level=np.repeat([float(b["level"]) for b in blocks], len(test)), estimate=np.tile(est, n),
                true_accuracy=np.tile(truth, n), lower=np.concatenate([b["lower"] for b in blocks]),
                upper=np.concatenate([b["upper"] for b in blocks]))  # fmt: skip
    cols.update(covered=(cols["lower"] <= cols["true_accuracy"]) & (cols["true_accuracy"] <= cols["upper"]),
                width=cols["upper"] - cols["lower"], radius=np.repeat([b["radius"] for b in blocks], len(test)),
                n_calibration=len(cal_est))  # fmt: skip
    return [pd.DataFrame(cols)]


def _bootstrap_rows(bootstrap: Mapping[float, pd.DataFrame]) -> list[pd.DataFrame]:
    out = []
    for level, b in bootstrap.items():
        b = _check_rows(b, f"bootstrap[{level}]")
        b = b[np.isfinite(b["lower"].astype(float)) & np.isfinite(b["upper"].astype(float))]
        lo, hi, truth = (b[c].to_numpy(np.float64) for c in ("lower", "upper", "true_accuracy"))
        out.append(b[_KEY + ["method"]].reset_index(drop=True).assign(
            interval="bootstrap", level=float(level), estimate=b["estimate"].to_numpy(np.float64), true_accuracy=truth,
            lower=lo, upper=hi, covered=(lo <= truth) & (truth <= hi), width=hi - lo, radius=np.nan, n_calibration=0,
        ))  # fmt: skip
    return out


def leave_one_family_out(
    rows: pd.DataFrame,
    *,
    reference_accuracy: Mapping[str, float] | None = None,
    stack_methods: Sequence[str] | None = None,
    levels: Sequence[float] = (0.9, 0.95),
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    floor: float = 0.02,
    bootstrap: Mapping[float, pd.DataFrame] | None = None,
    local: str | None = None,
    min_calibration: int = 10,
) -> CrossFamilyResult:
    """Stacked estimator and conformal intervals, each family held out in turn (see the module docstring).

    Parameters
    ----------
    rows : DataFrame
        Benchmark rows (``BenchmarkResult.to_df()``); one estimate per (task, set, method).
    reference_accuracy : mapping task -> accuracy (fraction), optional
        The labelled reference accuracy of every task; enables the difficulty-scaled (``conformal_drop``) intervals.
    stack_methods : sequence of str, optional
        Methods whose estimates are the stacking features (and whose spread on a set is its disagreement scale);
        default: every method with an estimate on every set.
    levels : sequence of float
        Conformal levels.
    alphas : sequence of float
        Ridge penalties for the stacked estimator's inner cross-validation.
    floor : float
        Floor of the difficulty and disagreement scales (fraction).
    bootstrap : mapping level -> rows, optional
        Benchmark rows whose ``lower``/``upper`` are bootstrap intervals at that level, to compare against.
    local : str, optional
        A method of ``rows`` fitted without any other family (e.g. ``"stacked"``: the registered stacked estimator,
        which :func:`~helpers.benchmark.run_benchmark` fits on each task's own meta-set).  Adds
        :data:`STACKED_AUTO`: ``local`` where it ran, else the cross-family stacked prediction; its conformal
        intervals are Mondrian (each source calibrated on its own errors: ``local``'s on the other families, the
        cross-family stacker's inner out-of-fold errors).
    min_calibration : int
        Conformal intervals only for methods with at least this many calibration sets outside the held-out family
        (fewer give an infinite 90 % radius: 9 sets are the minimum).

    Returns
    -------
    CrossFamilyResult
    """
    r = _check_rows(rows, "rows")
    dup = r.duplicated(_KEY + ["method"])
    if dup.any():
        raise InputValidationError(f"rows: {int(dup.sum())} duplicate (task, family, set, method) rows")
    families = sorted(r["family"].unique())
    if len(families) < 3:
        raise InputValidationError(
            f"rows: expected at least 3 shift families (one held out, >= 2 to tune on), got {families}"
        )
    if reference_accuracy is not None:
        missing = sorted(set(r["task"]) - set(reference_accuracy))
        if missing:
            raise InputValidationError(f"reference_accuracy: missing tasks {missing}")
    wide = r.pivot_table(index=_KEY, columns="method", values="estimate", aggfunc="first")
    truth = r.groupby(_KEY)["true_accuracy"].first().loc[wide.index]
    if local is not None and local not in wide.columns:
        raise InputValidationError(
            f"local: {local!r} is not a method of rows; expected one of {sorted(wide.columns)}"
        )
    feats = _stack_features(wide.drop(columns=[local]) if local else wide, stack_methods)
    spread = pd.Series(disagreement_scale(wide[feats].to_numpy(), floor=floor), index=wide.index)
    fam = wide.index.get_level_values("family").to_numpy()
    x, y = wide[feats].to_numpy(), truth.to_numpy()
    preds = [r[_KEY + ["method", "estimate", "true_accuracy"]]]
    intervals, weights = [], []
    for held in families:
        test, train = fam == held, fam != held
        reg = StackedRegression(alphas=alphas).fit(x[train], y[train], groups=fam[train])
        stacked = wide.index[test].to_frame(index=False).assign(method=STACKED, estimate=reg.predict(x[test]),
                                                                true_accuracy=y[test])  # fmt: skip
        preds.append(stacked)
        weights.append({"held_out": held, "alpha": reg.alpha_, "intercept": reg.intercept_,
                        "inner_cv_mae": reg.cv_mae_[reg.alpha_], **dict(zip(feats, reg.coef_))})  # fmt: skip
        cal_tasks = wide.index[train].get_level_values("task")
        common = dict(levels=levels, ref_acc=reference_accuracy, floor=floor, spread=spread)
        cal_ref = None if reference_accuracy is None else np.array([reference_accuracy[t] for t in cal_tasks])
        intervals += _interval_rows(stacked, reg.oof_, y[train], method=STACKED, cal_ref=cal_ref,
                                    cal_groups=fam[train], cal_keys=wide.index[train], **common)  # fmt: skip
        if local is not None:
            own = wide[local].to_numpy()
            auto = stacked.assign(
                method=STACKED_AUTO, estimate=np.where(np.isfinite(own[test]), own[test], stacked["estimate"])
            )
            preds.append(auto)
            # Mondrian conformal: a prediction of each source is calibrated on errors of the same source only
            # (the local method's errors on the other families' sets where it ran; stacked_cross's inner
            # out-of-fold errors for the fallback), since the two predictors' errors are not exchangeable
            is_local, cal_local = np.isfinite(own[test]), np.isfinite(own[train])
            for part, cal_est, cal_true, ref_part, groups, keys in (
                (
                    is_local,
                    own[train][cal_local],
                    y[train][cal_local],
                    None if cal_ref is None else cal_ref[cal_local],
                    fam[train][cal_local],
                    wide.index[train][cal_local],
                ),
                (~is_local, reg.oof_, y[train], cal_ref, fam[train], wide.index[train]),
            ):
                if part.any() and len(cal_est) >= min_calibration:
                    intervals += _interval_rows(
                        auto[part], cal_est, cal_true, method=STACKED_AUTO, cal_ref=ref_part, cal_groups=groups,
                        cal_keys=keys, **common,
                    )  # fmt: skip
        for method, g in r.groupby("method"):
            cal, tst = g[g["family"] != held], g[g["family"] == held]
            if len(tst) == 0 or len(cal) < min_calibration:
                continue
            cal_ref_m = None if reference_accuracy is None else cal["task"].map(reference_accuracy).to_numpy()
            intervals += _interval_rows(tst, cal["estimate"].to_numpy(), cal["true_accuracy"].to_numpy(),
                                        method=method, cal_ref=cal_ref_m, cal_groups=cal["family"].to_numpy(),
                                        cal_keys=pd.MultiIndex.from_frame(cal[_KEY]), **common)  # fmt: skip
    if bootstrap:
        intervals += _bootstrap_rows(bootstrap)
    p = pd.concat(preds, ignore_index=True)
    p["abs_error"] = (p["estimate"] - p["true_accuracy"]).abs()
    iv = pd.concat(intervals, ignore_index=True) if intervals else pd.DataFrame(columns=_INTERVAL_COLUMNS)
    return CrossFamilyResult(p, iv, pd.DataFrame(weights))
