"""CBPE (NannyML's confidence-based performance estimation): hand-computed pieces, bad input, and the real
``nannyml`` package on the same arrays (skipped when it is not installed: ``pip install -e .[peers]``)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError
from helpers.estimators import CBPE, cbpe_expected_correct, get_estimator, softmax
from helpers.estimators.cbpe import _bin_edges, _ece, cbpe_needs_calibration


def _data(n, k, shift, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) * 1.5
    z[np.arange(n), y] += 2.0 - shift
    return z, y


def test_bin_edges_follow_nannyml():
    assert _bin_edges(20, 4) == [(0, 5), (5, 10), (10, 15), (15, 20)]  # NannyML's docstring example
    edges = _bin_edges(25, 10)  # width 2, the last bin takes the remainder
    assert edges[0] == (0, 2) and edges[-1] == (22, 25) and len(edges) == 12
    assert _bin_edges(8, 10) == [(0, 2), (2, 4), (4, 6), (6, 8)]  # n <= 2 * bins: n // 2 bins
    with pytest.raises(InputValidationError, match="bins"):
        _bin_edges(3, 10)


def test_ece_by_hand():
    y = np.array([0, 0, 1, 1])
    p = np.array([0.1, 0.3, 0.6, 0.8])
    # bins {0.1, 0.3} and {0.6, 0.8}: 0.5 * |0.2 - 0| + 0.5 * |0.7 - 1| = 0.25
    assert _ece(y, p, [(0, 2), (2, 4)]) == pytest.approx(0.25)


def test_no_calibration_when_perfectly_separated_or_constant():
    p = np.linspace(0.01, 0.99, 100)
    assert not cbpe_needs_calibration((p > 0.5).astype(int), p)  # AUROC 1 > 0.999
    assert not cbpe_needs_calibration(np.ones(100, dtype=int), p)


def test_binary_estimate_by_hand_when_calibration_is_declined():
    # perfectly separable reference -> no calibrator; estimate = mean(p1 if pred 1 else 1 - p1)
    p1 = np.linspace(0.02, 0.98, 50)
    ref = np.column_stack([1 - p1, p1])
    est = CBPE().fit(probs=ref, labels=(p1 > 0.5).astype(int))
    assert est.calibrators_ == [None]
    tgt = np.array([[0.9, 0.1], [0.3, 0.7], [0.45, 0.55]])
    assert est.estimate(probs=tgt).accuracy == pytest.approx((0.9 + 0.7 + 0.55) / 3)


def test_multiclass_renormalises_and_zero_rows_become_uniform():
    class Const:
        def __init__(self, v):
            self.v = v

        def predict(self, x):
            return np.full(len(x), self.v)

    p = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    # calibrated columns 0.2, 0.2, 0.4 on every row -> normalised 0.25, 0.25, 0.5; predicted classes 0 and 1
    assert cbpe_expected_correct(p, [Const(0.2), Const(0.2), Const(0.4)]) == pytest.approx([0.25, 0.25])
    assert cbpe_expected_correct(p, [Const(0.0)] * 3) == pytest.approx([1 / 3, 1 / 3])
    assert cbpe_expected_correct(p, [None, None, None]) == pytest.approx([0.6, 0.5])


def test_recovers_accuracy_without_shift_and_gives_an_interval():
    z, y = _data(4000, 2, 0.0, 1)
    est = get_estimator("cbpe").fit(logits=z[:2000], labels=y[:2000])
    res = est.estimate(logits=z[2000:], interval=True)
    true = float((z[2000:].argmax(1) == y[2000:]).mean())
    assert abs(res.accuracy - true) < 0.03
    assert res.lower < res.accuracy < res.upper


def test_bad_input():
    z, y = _data(200, 3, 0.0, 1)
    with pytest.raises(InputValidationError, match="labels"):
        CBPE().fit(logits=z)
    est = CBPE().fit(logits=z, labels=y)
    with pytest.raises(InputValidationError, match="class"):
        est.estimate(logits=z[:, :2])
    bad = z.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputValidationError, match="logits"):
        est.estimate(logits=bad)


def _nannyml():
    """nannyml, imported with its telemetry off; skipped when not installed, a failure when installed but broken
    (e.g. without statsmodels, which it imports without declaring)."""
    import importlib.util
    import os

    import helpers  # noqa: F401  (sets NML_DISABLE_USAGE_LOGGING)

    if importlib.util.find_spec("nannyml") is None:
        pytest.skip("nannyml not installed: pip install -e .[peers]")
    assert os.environ.get("NML_DISABLE_USAGE_LOGGING") == "1"
    import nannyml

    return nannyml


def test_helpers_turns_nannyml_telemetry_off():
    import os

    import helpers  # noqa: F401

    assert os.environ["NML_DISABLE_USAGE_LOGGING"] == "1"


@pytest.mark.parametrize("k", [2, 4])
def test_matches_the_nannyml_package(k):
    nml = _nannyml()
    pd = pytest.importorskip("pandas")
    zr, yr = _data(3000, k, 0.0, 1)
    zt, yt = _data(1000, k, 1.0, 2)
    pr, pt = softmax(zr), softmax(zt)

    def frame(p, y=None):
        d = {"y_pred": p.argmax(1)}
        if y is not None:
            d["y_true"] = y
        d.update({"proba": p[:, 1]} if k == 2 else {f"p{c}": p[:, c] for c in range(k)})
        return pd.DataFrame(d)

    proba = "proba" if k == 2 else {c: f"p{c}" for c in range(k)}
    kind = "classification_binary" if k == 2 else "classification_multiclass"
    theirs = nml.CBPE(y_pred_proba=proba, y_pred="y_pred", y_true="y_true", problem_type=kind,
                      metrics=["accuracy"], chunk_number=1)  # fmt: skip
    df = theirs.fit(frame(pr, yr)).estimate(frame(pt)).to_df()
    value = float(df[df[("chunk", "period")] == "analysis"][("accuracy", "value")].iloc[0])
    ours = CBPE().fit(probs=pr, labels=yr).estimate(probs=pt).accuracy
    assert ours == pytest.approx(value, abs=1e-6)
