"""Shift-aware prediction intervals: split-conformal quantiles of an estimator's error on labelled shifted sets.

A bootstrap interval over target examples (``estimate(..., interval=True)``) measures *sampling* noise of a fixed
estimator; under a real shift the estimator's *bias* dominates and those intervals cover the true accuracy far less
often than their level says (notebook 06).  This module calibrates the error itself.

Method (split conformal prediction, Vovk et al. 2005; Lei et al. 2018, Sec. 2.2), one *set* = one data point:

1. on m labelled shifted sets (the calibration sets), compute the point estimate ``â_i`` and the true accuracy
   ``a_i``, and the nonconformity score ``r_i = |â_i − a_i| / s_i``;
2. the radius is ``q = r_(k)``, the k-th smallest score with ``k = ⌈(m + 1)·level⌉`` (``+inf`` if k > m: too few
   sets for that level — 9 sets give a finite 90 % radius, 19 a 95 % one);
3. on a new set: ``[â − q·s, â + q·s]``, clipped to [0, 1].

``s_i`` is 1 (plain, the default) or a label-free *difficulty* of the set (normalised conformal, Lei et al. 2018,
Sec. 5.2): ``scale="drop"`` uses ``s = |â − acc_ref| + floor``, the drop from the reference accuracy that the
estimator itself predicts, so that mild shifts get narrow intervals and large ones wide intervals;
:func:`disagreement_scale` gives ``s = std_j(â_j) + floor``, the spread of several estimators' estimates on the set
(their disagreement), which needs no reference accuracy.

Validity, and what it does not promise
--------------------------------------
If the m calibration sets and the new set are **exchangeable** — drawn from one distribution *of shifts* — then
``P(a ∈ interval) ≥ level`` (marginally over the draw of calibration and test sets; ≤ level + 1/(m+1) when the
scores have no ties).  Nothing is promised for a shift unlike every calibration shift: calibrating on synthetic
corruptions and testing on a new domain breaks exchangeability.  Notebook 06 measures how much that matters with a
leave-one-family-out protocol (calibrate on every shift family but one, test on the held-out family).

Families of shifts: CDF pooling
-------------------------------
When the calibration sets come in groups (shift families: CIFAR corruptions, text domains, ...) and the new set
belongs to a *new* group, the exchangeable unit is the group, not the set: a family with 92 sets would otherwise
outvote one with 8.  ``groups=`` switches the quantile to **CDF pooling** (Dunn, Wasserman & Ramdas 2023, JASA,
"Distribution-free prediction sets for two-layer hierarchical models"): the radius is the smallest calibration
score t with ``F̄(t) = (1/K) Σ_k (1/n_k) #{i in group k : r_i ≤ t} ≥ level``, every group weighing 1/K whatever its
size.  Its coverage of a new group drawn like the K calibration groups holds only asymptotically in K (no
finite-sample guarantee: with 3 families it is a heuristic, and notebook 06 reports what it achieves).  A
finite-sample guarantee for a new group treats each group as one exchangeable point (Dunn et al.'s one set per
group): split conformal over K groups, finite only when ``⌈(K + 1)·level⌉ ≤ K``, i.e. K ≥ 9 groups at 90 % and
K ≥ 19 at 95 % (:func:`conformal_quantile` with m = K returns ``inf`` below that).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators.base import BaseEstimator, Estimate
from helpers.estimators.bootstrap import _check_level as check_level
from helpers.validation import check_labels, check_vector

__all__ = [
    "conformal_quantile",
    "pooled_conformal_quantile",
    "conformal_radius",
    "min_calibration_sets",
    "conformal_intervals",
    "difficulty_scale",
    "disagreement_scale",
    "ShiftConformal",
]

SCALES = (None, "drop")


def _check_level(level: Any) -> float:
    """The bootstrap's level check (a number in (0, 1)), returning the level as a float."""
    check_level(level)
    return float(level)


def conformal_quantile(scores: Any, level: float = 0.9) -> float:
    """The split-conformal quantile: the ``⌈(m + 1)·level⌉``-th smallest of m scores (``inf`` if that is > m).

    Parameters
    ----------
    scores : array (m,)
        Nonconformity scores of the calibration sets (finite, >= 0).
    level : float in (0, 1)
        Target coverage.

    Examples
    --------
    >>> conformal_quantile([0.1, 0.4, 0.2, 0.3], level=0.5)  # k = ceil(5 * 0.5) = 3
    0.3
    >>> conformal_quantile([0.1, 0.4, 0.2, 0.3], level=0.9)  # k = 5 > 4
    inf
    """
    level = _check_level(level)
    r = check_vector(np.atleast_1d(scores), "scores").astype(np.float64)
    if r.min() < 0:
        raise InputValidationError(
            f"scores: expected nonconformity scores >= 0, got a minimum of {r.min():.4g}"
        )
    m = r.size
    k = math.ceil((m + 1) * level - 1e-12)  # the tolerance keeps (m + 1)·level = 9.000000000000002 at 9
    if k > m:
        return math.inf
    return float(np.partition(r, k - 1)[k - 1])


def pooled_conformal_quantile(scores: Any, groups: Any, level: float = 0.9) -> float:
    """CDF pooling (module docstring): the smallest score t with ``(1/K) Σ_k F̂_k(t) ≥ level``, ``F̂_k`` the
    empirical CDF of group k's scores, so every group weighs 1/K whatever its size.

    Examples
    --------
    >>> pooled_conformal_quantile([0.1, 0.2, 0.3, 0.4, 1.0], ["a", "a", "a", "a", "b"], level=0.6)
    1.0
    >>> conformal_quantile([0.1, 0.2, 0.3, 0.4, 1.0], level=0.6)  # the sets counted alike: k = ceil(6 * 0.6) = 4
    0.4
    """
    level = _check_level(level)
    r = check_vector(np.atleast_1d(scores), "scores").astype(np.float64)
    if r.min() < 0:
        raise InputValidationError(
            f"scores: expected nonconformity scores >= 0, got a minimum of {r.min():.4g}"
        )
    g = np.asarray(groups).ravel()
    if g.size != r.size:
        raise InputValidationError(f"groups: expected {r.size} labels (one per score), got {g.size}")
    _, codes, counts = np.unique(g, return_inverse=True, return_counts=True)
    order = np.argsort(r, kind="stable")
    cdf = np.cumsum(1.0 / (counts.size * counts[codes[order]]))  # pooled CDF at each sorted score
    hit = np.nonzero(cdf >= level - 1e-12)[0]
    return float(r[order][hit[0]])


def difficulty_scale(estimates: Any, reference_accuracy: Any, *, floor: float = 0.02) -> np.ndarray:
    """Label-free difficulty ``s = |â − acc_ref| + floor``: the accuracy drop the estimator predicts, plus a floor
    (a fraction) so that sets with no predicted drop keep a non-zero interval."""
    a = np.asarray(estimates, dtype=np.float64)
    if not np.isfinite(floor) or floor <= 0:
        raise InputValidationError(f"floor: expected a positive fraction, got {floor!r}")
    return np.abs(a - np.asarray(reference_accuracy, dtype=np.float64)) + floor


def disagreement_scale(estimates: Any, *, floor: float = 0.02) -> np.ndarray:
    """Label-free difficulty ``s_i = sqrt(mean_j (â_ij − mean_j â_ij)²) + floor`` of every set i: the population
    standard deviation of J estimators' accuracy estimates on the set (fractions), plus a floor.

    Parameters
    ----------
    estimates : array of shape (n_sets, n_estimators)
        One row per set, one column per estimator; finite fractions.
    floor : float
        Positive fraction added so that sets where the estimators agree keep a non-zero interval.

    Returns
    -------
    ndarray of shape (n_sets,)
    """
    a = np.asarray(estimates, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] < 2:
        raise InputValidationError(
            f"estimates: expected a 2-D array (sets x estimators) with at least 2 estimators, got shape {a.shape}"
        )
    if not np.isfinite(a).all():
        raise InputValidationError("estimates: expected finite values (every estimator on every set), got NaN or inf")
    if not np.isfinite(floor) or floor <= 0:
        raise InputValidationError(f"floor: expected a positive fraction, got {floor!r}")
    return a.std(axis=1) + floor


def _check_scale_vector(scales: Any, name: str, m: int) -> np.ndarray:
    if scales is None:
        return np.ones(m)
    s = check_vector(np.atleast_1d(scales), name).astype(np.float64)
    if s.size != m:
        raise InputValidationError(f"{name}: expected {m} values (one per set), got {s.size}")
    if s.min() <= 0:
        raise InputValidationError(
            f"{name}: expected positive difficulty scales, got a minimum of {s.min():.4g}"
        )
    return s


def min_calibration_sets(level: float) -> int:
    """The fewest calibration sets (or groups) m with a finite split-conformal radius at ``level``: the smallest m
    with ⌈(m + 1)·level⌉ ≤ m.

    >>> min_calibration_sets(0.9), min_calibration_sets(0.95)
    (9, 19)
    """
    m = 1
    while math.ceil((m + 1) * level - 1e-12) > m:
        m += 1
    return m


def conformal_radius(
    estimates: Any, accuracies: Any, *, level: float = 0.9, scales: Any = None, groups: Any = None
) -> float:
    """Radius q of the split-conformal interval from calibration sets: the conformal quantile of
    ``|estimate − accuracy| / scale`` (fractions; ``scales=None`` means 1); with ``groups`` (one label per set,
    e.g. the shift family) the CDF-pooled quantile, every group weighing alike (module docstring)."""
    e = check_vector(np.atleast_1d(estimates), "estimates").astype(np.float64)
    a = check_vector(np.atleast_1d(accuracies), "accuracies").astype(np.float64)
    if e.size != a.size:
        raise InputValidationError(
            f"estimates and accuracies: expected equal lengths, got {e.size} and {a.size}"
        )
    s = _check_scale_vector(scales, "scales", e.size)
    if groups is not None:
        return pooled_conformal_quantile(np.abs(e - a) / s, groups, level)
    return conformal_quantile(np.abs(e - a) / s, level)


def conformal_intervals(
    estimates: Any,
    *,
    calibration_estimates: Any,
    calibration_accuracies: Any,
    level: float = 0.9,
    scales: Any = None,
    calibration_scales: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` arrays, ``estimate ∓ q·scale`` clipped to [0, 1], with q from the calibration sets.

    Pass both ``scales`` and ``calibration_scales`` (normalised conformal) or neither (plain)."""
    if (scales is None) != (calibration_scales is None):
        raise InputValidationError(
            "scales and calibration_scales: pass both (normalised conformal) or neither"
        )
    q = conformal_radius(
        calibration_estimates, calibration_accuracies, level=level, scales=calibration_scales
    )
    e = check_vector(np.atleast_1d(estimates), "estimates").astype(np.float64)
    s = _check_scale_vector(scales, "scales", e.size)
    return np.clip(e - q * s, 0.0, 1.0), np.clip(e + q * s, 0.0, 1.0)


def _shifted_sets(shifted: Any) -> list[dict[str, Any]]:
    """Normalise ``shifted`` (a mapping or sequence of (logits, labels) pairs, LabelledLogits-like objects with
    ``.logits``/``.labels``, or dicts with ``logits``/``probs``, ``labels`` and optional ``features``)."""
    if shifted is None:
        raise InputValidationError(
            "shifted: expected labelled shifted sets to calibrate on (a dict or list of (logits, labels)), got None"
        )
    names = [repr(k) for k in shifted] if isinstance(shifted, Mapping) else None
    items = list(shifted.values()) if isinstance(shifted, Mapping) else list(shifted)
    out = []
    for i, item in enumerate(items):
        where = f"shifted[{names[i] if names else i}]"
        if isinstance(item, Mapping):
            d = dict(item)
        elif hasattr(item, "logits") and hasattr(item, "labels"):
            d = {"logits": item.logits, "labels": item.labels}
        elif isinstance(item, Sequence) and len(item) == 2:
            d = {"logits": item[0], "labels": item[1]}
        else:
            raise InputValidationError(
                f"{where}: expected (logits, labels), a dict or an object with .logits/.labels, "
                f"got {type(item).__name__}"
            )
        if "labels" not in d or ("logits" not in d and "probs" not in d):
            raise InputValidationError(f"{where}: expected logits= or probs= and labels=")
        outputs = np.asarray(d["logits"] if d.get("logits") is not None else d["probs"])
        if outputs.ndim != 2:
            raise InputValidationError(f"{where}: expected (n, K) logits or probs, got shape {outputs.shape}")
        # integers in [0, K): an out-of-range label would count as an error and the set's accuracy read 0
        d["labels"] = check_labels(d["labels"], f"{where} labels", n=outputs.shape[0], n_classes=outputs.shape[1])
        out.append(d)
    return out


def set_accuracy(d: Mapping[str, Any]) -> float:
    """Top-1 accuracy (fraction) of one labelled set given as a dict with ``logits`` or ``probs`` and ``labels``."""
    out = np.asarray(d["logits"] if d.get("logits") is not None else d["probs"])
    labels = np.asarray(d["labels"])
    if out.ndim != 2 or labels.shape != (out.shape[0],):
        raise InputValidationError(
            f"shifted set: expected outputs (n, K) and labels (n,), got {out.shape} and {labels.shape}"
        )
    return float((out.argmax(axis=1) == labels).mean())


class ShiftConformal(BaseEstimator):
    """Wrap any accuracy estimator with a split-conformal interval calibrated on labelled shifted sets.

    ``fit(logits=|probs=, labels=, features=, shifted=...)`` fits the wrapped estimator on the reference, runs it
    on every shifted set, and stores the conformal radius; ``estimate(...)`` returns the wrapped estimate with
    ``lower``/``upper`` = ``â ∓ radius_·s`` (see the module docstring for the guarantee and its condition).

    Parameters
    ----------
    estimator : str or estimator
        A registry name (``"atc_mc"``) or an unfitted estimator whose ``estimate`` returns an accuracy.
    level : float, default 0.9
        Target coverage over exchangeable shifts.
    scale : {None, "drop"}, default None
        None: plain intervals of constant width; "drop": widths proportional to ``|â − acc_ref| + floor``.
    floor : float, default 0.02
        Added to the predicted drop (``scale="drop"`` only), a fraction.
    pool_groups : bool, default False
        With ``groups`` passed to ``fit`` (the shift family of every set): the CDF-pooled radius, every family
        weighing alike (for a new *family*; see the module docstring), instead of every set weighing alike.

    Attributes
    ----------
    estimator_ : the fitted wrapped estimator
    radius_ : float
        q (fraction for ``scale=None``; multiples of s for ``"drop"``); ``inf`` when there are too few sets.
    reference_accuracy_ : float
    calibration_ : dict of arrays
        ``estimate``, ``accuracy``, ``scale`` of every calibration set.
    """

    name = "shift_conformal"
    output = "accuracy"

    def __init__(
        self,
        estimator: Any = "atc_mc",
        *,
        level: float = 0.9,
        scale: str | None = None,
        floor: float = 0.02,
        pool_groups: bool = False,
    ):
        self.estimator = estimator
        self.level = level
        self.scale = scale
        self.floor = floor
        self.pool_groups = pool_groups

    def _base(self) -> Any:
        if isinstance(self.estimator, str):
            from helpers.estimators.registry import get_estimator

            return get_estimator(self.estimator)
        from sklearn.base import clone

        return clone(self.estimator)

    def _check_params(self) -> None:
        _check_level(self.level)
        if self.scale not in SCALES:
            raise InputValidationError(f"scale: expected one of {SCALES}, got {self.scale!r}")
        if self.scale == "drop":
            difficulty_scale(0.0, 0.0, floor=self.floor)
        if not isinstance(self.pool_groups, (bool, np.bool_)):
            raise InputValidationError(f"pool_groups: expected True or False, got {self.pool_groups!r}")

    def _scales(self, estimates: np.ndarray) -> np.ndarray | None:
        if self.scale is None:
            return None
        return difficulty_scale(estimates, self.reference_accuracy_, floor=self.floor)

    def fit(
        self,
        *,
        logits: Any = None,
        probs: Any = None,
        labels: Any = None,
        features: Any = None,
        shifted: Any = None,
        groups: Any = None,
    ) -> ShiftConformal:
        """Fit the wrapped estimator on the labelled reference and calibrate on the labelled ``shifted`` sets.

        A wrapped estimator that itself learns from shifted sets (its ``fit`` takes ``shifted=``, e.g.
        :class:`~helpers.estimators.stacking.StackedEstimator`) gets them too (with ``groups``), and the interval
        is calibrated on its out-of-fold estimates ``cross_fitted_`` — never on sets it was fitted on."""

        self._check_params()
        sets = _shifted_sets(shifted)
        if labels is None:
            raise InputValidationError("ShiftConformal.fit: labels= (the reference labels) is required")
        base = self._base()
        ref = {"logits": logits, "probs": probs, "labels": labels, "features": features}
        from helpers.estimators.registry import learns_from_shifted_sets

        if learns_from_shifted_sets(base):
            base.fit(**ref, shifted=sets, groups=groups)
            est = np.asarray(base.cross_fitted_, dtype=np.float64)
        else:
            base.fit(**ref)
            est = np.array([self._point(base, d) for d in sets])
        self.reference_accuracy_ = set_accuracy(ref)
        acc = np.array([set_accuracy(d) for d in sets])
        self.estimator_ = base
        scales = self._scales(est)
        if self.pool_groups and groups is None:
            raise InputValidationError(
                "pool_groups=True: pass groups= (the shift family of every shifted set)"
            )
        pooled = groups if self.pool_groups else None
        self.radius_ = conformal_radius(est, acc, level=self.level, scales=scales, groups=pooled)
        if not math.isfinite(self.radius_):  # an interval of [0, 1] for every set says nothing: refuse it
            have = len(set(np.asarray(groups).tolist())) if pooled is not None else len(sets)
            what = "shift families (groups)" if pooled is not None else "calibration sets (shifted=)"
            raise InputValidationError(
                f"shifted: {have} {what} give no finite radius at level {self.level:g}; the "
                f"⌈(m + 1)·level⌉-th smallest of m scores exists from m = {min_calibration_sets(self.level)} on "
                f"(or lower the level)"
            )
        self.calibration_ = {
            "estimate": est,
            "accuracy": acc,
            "scale": np.ones_like(est) if scales is None else scales,
        }
        return self

    @staticmethod
    def _point(base: Any, d: Mapping[str, Any]) -> float:
        if getattr(base, "output", "accuracy") == "score" and getattr(base, "regressor", None) is None:
            raise InputValidationError(
                f"{base.name}: returns a score, not an accuracy; give it a regressor (score -> accuracy) fitted on "
                f"other sets first (its own line fitted on these shifted sets would understate the error)"
            )
        e = base.estimate(logits=d.get("logits"), probs=d.get("probs"), features=d.get("features"))
        if not np.isfinite(e.accuracy):
            raise InputValidationError(
                f"{e.method}: returns a score, not an accuracy; give it a regressor (score -> accuracy) first"
            )
        return float(e.accuracy)

    def estimate(
        self, *, logits: Any = None, probs: Any = None, features: Any = None, interval: bool = True
    ) -> Estimate:
        """The wrapped estimate with the conformal interval (``interval=False`` drops it)."""
        self._check_fitted("radius_")
        if not isinstance(interval, (bool, np.bool_)):
            raise InputValidationError(f"interval: expected True or False, got {interval!r}")
        a = self._point(self.estimator_, {"logits": logits, "probs": probs, "features": features})
        details = {"base": getattr(self.estimator_, "name", type(self.estimator_).__name__), "level": self.level,
                   "radius": self.radius_, "scale": self.scale, "calibration_sets": len(self.calibration_["estimate"])}  # fmt: skip
        n = int(np.shape(logits if logits is not None else probs)[0])
        if not interval:
            return Estimate(self.name, a, None, None, None, n, details)
        s = 1.0 if self.scale is None else float(self._scales(np.array([a]))[0])
        lo, hi = max(0.0, a - self.radius_ * s), min(1.0, a + self.radius_ * s)
        return Estimate(
            self.name, a, lo, hi, None, n, {**details, "interval": "split conformal over shifted sets"}
        )
