"""CBPE, confidence-based performance estimation as NannyML defines it (the packaged production tool of the field).

NannyML (``nannyml.CBPE``, version 0.13) estimates accuracy without labels in three steps:

1. **Calibrate on the labelled reference**, one isotonic regression per class of the one-vs-rest probability
   (``sklearn.isotonic.IsotonicRegression(out_of_bounds="clip")``); binary problems use one calibrator on the
   probability of class 1.
2. **Only where calibration helps** (``nannyml.calibration.needs_calibration``): no calibration when the class
   is constant in the reference or the probability separates it perfectly (one-vs-rest AUROC > 0.999);
   otherwise ``StratifiedShuffleSplit(n_splits=10, test_size=0.1, random_state=42)`` folds, isotonic fitted on
   each fold's train part, and the expected calibration error (ECE, equal-count bins on the pooled test parts:
   :func:`_ece`) before and after; calibrate iff ECE before > ECE after.
3. **Expected accuracy on the target**: multiclass — calibrate every class column, renormalise rows to sum to 1
   (an all-zero row becomes uniform 1/K), accuracy = mean calibrated probability of the predicted class;
   binary — ``mean(p̃ if ŷ = 1 else 1 − p̃)`` with ``p̃`` the calibrated probability of class 1.

The predicted class ŷ is the argmax of the model's outputs (NannyML takes ``y_pred`` from the user; with
``argmax`` a tie goes to the lower class index).  The whole target is one chunk (NannyML splits a stream into
chunks; pass one chunk's rows to estimate it).  ``tests/test_cbpe.py`` checks this module against the real
``nannyml`` package to 1e-6 when it is installed (``pip install -e .[peers]``), on float64 probabilities; with
float32 probabilities NannyML's isotonic calibration differs from this one by up to 3e-4 (reported with nannyml
0.13), so compare in float64.  ``import helpers`` sets
``NML_DISABLE_USAGE_LOGGING=1`` (NannyML's usage telemetry off) unless the user set it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedShuffleSplit

from helpers.errors import InputValidationError
from helpers.estimators._common import n_classes_of, resolve_probs
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_labels

__all__ = ["CBPE", "cbpe_needs_calibration", "fit_cbpe_calibrators", "cbpe_expected_correct", "cbpe_accuracy"]

#: NannyML's defaults for the calibration check
_BIN_COUNT = 10
_SPLIT_COUNT = 10
_SPLIT_SEED = 42


def _bin_edges(n: int, bin_count: int) -> list[tuple[int, int]]:
    """Equal-count bins over ``n`` sorted values, NannyML's rule (the last bin takes the remainder)."""
    if n <= 2 * bin_count:
        bin_count = n // 2
    if bin_count < 2:
        raise InputValidationError(f"cannot split {n} values into at least 2 calibration bins")
    width = n // bin_count
    edges = np.asarray(range(0, n + 1, width))
    edges[-1] = n
    return list(zip(edges[:-1], edges[1:]))


def _ece(y_true: np.ndarray, proba: np.ndarray, edges: list[tuple[int, int]]) -> float:
    """Expected calibration error: ``sum_b (n_b / n) |mean(p in b) − mean(y in b)|`` over equal-count bins of
    the values sorted by ``p`` (NumPy's default sort, as NannyML)."""
    order = proba.argsort()
    p, y = proba[order], y_true[order]
    return float(sum((r - le) / len(p) * abs(p[le:r].mean() - y[le:r].mean()) for le, r in edges))


def cbpe_needs_calibration(
    y_true: Any, proba: Any, *, bin_count: int = _BIN_COUNT, split_count: int = _SPLIT_COUNT
) -> bool:
    """Whether isotonic calibration lowers the cross-validated ECE of ``proba`` for the 0/1 target ``y_true``
    (NannyML's ``needs_calibration``; see the module docstring, step 2)."""
    y = np.asarray(y_true)
    p = np.asarray(proba, dtype=np.float64)
    if len(np.unique(y)) == 1 or roc_auc_score(y, p) > 0.999:
        return False
    splits = StratifiedShuffleSplit(n_splits=split_count, test_size=0.1, random_state=_SPLIT_SEED)
    ys, raw, cal = [], [], []
    for train, test in splits.split(p, y):
        iso = IsotonicRegression(out_of_bounds="clip", increasing=True).fit(p[train], y[train])
        ys.append(y[test])
        raw.append(p[test])
        cal.append(iso.predict(p[test]))
    y_test, p_test, c_test = (np.concatenate(v) for v in (ys, raw, cal))
    edges = _bin_edges(len(p_test), bin_count)
    return _ece(y_test, p_test, edges) > _ece(y_test, c_test, edges)


def fit_cbpe_calibrators(probs: Any, labels: Any) -> list[IsotonicRegression | None]:
    """One calibrator per calibrated column (binary: the class-1 column only), ``None`` where calibration does
    not help (:func:`cbpe_needs_calibration`).

    Parameters
    ----------
    probs : array (n, K)
        Reference probabilities (rows sum to 1).
    labels : array (n,)
        Reference labels in ``[0, K)``.
    """
    p = np.asarray(probs, dtype=np.float64)
    y = check_labels(labels, "labels", n_classes=p.shape[1], n=p.shape[0])
    columns = [1] if p.shape[1] == 2 else range(p.shape[1])
    out: list[IsotonicRegression | None] = []
    for k in columns:
        target = (y == k).astype(np.int64)
        try:
            needs = cbpe_needs_calibration(target, p[:, k])
        except ValueError as exc:  # scikit-learn's stratified split cannot cut so small a reference
            raise InputValidationError(
                f"labels: a reference of {len(y)} rows is too small for CBPE's calibration check (NannyML's: 10 % "
                f"held out in a stratified split, at least 2 rows and 2 of each outcome of class {k}) ({exc})"
            ) from exc
        if needs:
            out.append(IsotonicRegression(out_of_bounds="clip", increasing=True).fit(p[:, k], target))
        else:
            out.append(None)
    return out


def cbpe_expected_correct(probs: Any, calibrators: list[IsotonicRegression | None]) -> np.ndarray:
    """Per-example calibrated probability that the prediction (argmax) is correct; its mean is CBPE's accuracy.

    Binary (K = 2, one calibrator): ``p̃1`` where the model predicts class 1, ``1 − p̃1`` where it predicts 0.
    Multiclass: every column calibrated, rows renormalised (all-zero rows -> 1/K), the predicted class's entry.
    """
    p = np.asarray(probs, dtype=np.float64)
    pred = p.argmax(axis=1)
    if p.shape[1] == 2:
        cal = p[:, 1] if calibrators[0] is None else calibrators[0].predict(p[:, 1])
        return np.where(pred == 1, cal, 1.0 - cal)
    cal = np.column_stack([p[:, k] if c is None else c.predict(p[:, k]) for k, c in enumerate(calibrators)])
    total = cal.sum(axis=1, keepdims=True)
    cal = np.divide(cal, total, out=np.full_like(cal, 1.0 / p.shape[1]), where=total != 0)
    return cal[np.arange(len(p)), pred]


def cbpe_accuracy(*, reference_probs: Any, reference_labels: Any, target_probs: Any) -> float:
    """CBPE's estimated accuracy (fraction) of ``target_probs`` after calibrating on the labelled reference."""
    calibrators = fit_cbpe_calibrators(reference_probs, reference_labels)
    return float(cbpe_expected_correct(target_probs, calibrators).mean())


class CBPE(LabelFreeEstimator):
    """Confidence-based performance estimation (NannyML's CBPE, accuracy metric); see the module docstring.

    ``fit(logits=|probs=, labels=)`` on the labelled reference fits the calibrators; ``estimate(logits=|probs=)``
    returns the mean calibrated probability of the predicted class; ``interval=True`` adds a percentile bootstrap
    over target examples with the calibrators held fixed.

    Parameters
    ----------
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Attributes
    ----------
    calibrators_ : list of IsotonicRegression or None
        Per calibrated column (binary: class 1 only); ``None`` where NannyML's check declined calibration.
    n_classes_ : int

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(CBPE().fit(logits=np.tile(z, (5, 1)), labels=np.tile(y, 5)).estimate(logits=target).accuracy, 4)
    0.5837
    """

    name = "cbpe"

    def __init__(self, *, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(self, *, logits: Any = None, probs: Any = None, labels: Any = None) -> CBPE:
        """Fit the per-class isotonic calibrators on the labelled reference."""
        self._check_params()
        p = resolve_probs(logits=logits, probs=probs, where="CBPE.fit")
        if labels is None:
            raise InputValidationError("CBPE.fit: labels= is required (the reference's integer labels)")
        self.calibrators_ = fit_cbpe_calibrators(p, labels)
        self.n_classes_ = int(p.shape[1])
        return self

    def _prepare_target(self, *, logits: Any = None, probs: Any = None) -> Prepared:
        self._check_target_classes(n_classes_of(logits, probs))
        p = resolve_probs(logits=logits, probs=probs, where="CBPE.estimate")
        calibrated = [c is not None for c in self.calibrators_]
        return Prepared(
            n=p.shape[0],
            arrays={"expected": cbpe_expected_correct(p, self.calibrators_)},
            details={"calibrated_columns": int(sum(calibrated))},
        )

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["expected"]

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["expected"].mean())
