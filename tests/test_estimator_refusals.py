"""Inputs an estimator cannot use are refused with an error that names them, never turned into a number.

Every registered estimator meets the same bad inputs (probabilities passed as logits, NaN / inf, a wrong shape,
out-of-range or fractional labels in ``fit`` and in ``shifted=``, a class count unlike the reference's); per-chunk
monitoring meets bad labels and a reference of another class count; ``ShiftConformal`` meets too few calibration
sets for its level.  Each case must raise :class:`~helpers.errors.InputValidationError` (or a subclass).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_estimator_common_contract import NEEDS_FEATURES, PROJ, Y, Z, _extra, _shifted

from helpers.errors import InputValidationError
from helpers.estimators import ShiftConformal, get_estimator, list_estimators, min_calibration_sets, softmax
from helpers.monitoring import estimate_chunks


def _fitted(name: str):
    est = get_estimator(name)
    return est.fit(logits=Z, labels=Y, **_shifted(name))


def _target(name: str, logits: np.ndarray) -> dict:
    features = Z @ PROJ if name in NEEDS_FEATURES else None
    return {"logits": logits, "features": features, **_extra(name)}


@pytest.mark.parametrize("name", list_estimators())
def test_probabilities_passed_as_logits_are_refused_naming_probs(name):
    """A softmax of probabilities is nearly uniform: MaNo read .412 instead of .266 and COTT 0.0 instead of .385
    before this was refused."""
    est = _fitted(name)
    with pytest.raises(InputValidationError, match="probs="):
        est.estimate(**_target(name, softmax(Z)))


@pytest.mark.parametrize("name", list_estimators())
@pytest.mark.parametrize("bad", ["nan", "inf", "one_dim", "three_classes"])
def test_broken_target_logits_are_refused(name, bad):
    est = _fitted(name)
    z = Z.copy()
    if bad == "nan":
        z[3, 1] = np.nan
    elif bad == "inf":
        z[0, 0] = np.inf
    elif bad == "one_dim":
        z = z[:, 0]
    else:
        z = z[:, :3]
    with pytest.raises(InputValidationError):
        est.estimate(**_target(name, z) if bad != "one_dim" else {"logits": z, **_extra(name)})


@pytest.mark.parametrize("name", [n for n in list_estimators() if "labels" in
                                  __import__("inspect").signature(get_estimator(n).fit).parameters])  # fmt: skip
@pytest.mark.parametrize("labels", ["out_of_range", "fractional", "negative"])
def test_bad_reference_labels_are_refused(name, labels):
    y = {"out_of_range": Y + 4, "fractional": Y + 0.5, "negative": Y - 1}[labels]
    shifted, target = _shifted(name), _target(name, Z)
    est = get_estimator(name)
    try:
        est.fit(logits=Z, labels=y, **shifted)
    except InputValidationError:
        return
    # an estimator that does not read labels (a label-free score) ignores them: its estimate must not change
    good = get_estimator(name).fit(logits=Z, labels=Y, **shifted)
    assert est.estimate(**target).accuracy == good.estimate(**target).accuracy


@pytest.mark.parametrize("name", [n for n in list_estimators() if "shifted" in _shifted(n)])
def test_bad_labels_in_shifted_sets_are_refused(name):
    """Out-of-range labels in a shifted set read as accuracy 0 (MaNo's line then read 0, stacked_sota .002)."""
    sets = dict(_shifted(name)["shifted"])
    first = next(iter(sets))
    z, y = (sets[first]["logits"], sets[first]["labels"]) if isinstance(sets[first], dict) else sets[first]
    bad = {"logits": z, "labels": y + 4}
    if name in NEEDS_FEATURES:
        bad["features"] = sets[first]["features"]
    sets[first] = bad
    with pytest.raises(InputValidationError, match=r"shifted\[.*labels"):
        get_estimator(name).fit(logits=Z, labels=Y, shifted=sets)


def test_agreement_fits_on_nothing_as_documented():
    est = get_estimator("agreement").fit()
    assert 0.0 <= est.estimate(logits=Z, other_logits=Z + 0.1).accuracy <= 1.0


# ---------------------------------------------------------------------------------------------- monitoring
EST = get_estimator("atc_mc").fit(logits=Z, labels=Y)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"labels": Y + 4}, r"labels: expected labels in \[0, 3\]"),
        ({"labels": Y + 0.5}, "labels: expected integer class indices"),
        ({"reference_logits": Z, "reference_labels": Y + 4}, r"reference_labels: expected labels in \[0, 3\]"),
        ({"reference_logits": Z[:, :3] + 0.0}, "reference_logits: expected 4 classes like the stream"),
        ({"reference_logits": np.c_[Z, Z], "reference_labels": Y}, "expected 4 classes like the stream"),
    ],
)
def test_monitoring_refuses_bad_labels_and_a_reference_of_another_class_count(kwargs, match):
    """Realised accuracy 0 in every chunk (bad stream labels), every chunk alerting (bad reference labels) and a
    silently wrong band (a 5-class reference beside a 10-class stream) were the numbers these gave before."""
    with pytest.raises(InputValidationError, match=match):
        estimate_chunks(EST, Z, chunk_size=20, **kwargs)


# ----------------------------------------------------------------------------------------- ShiftConformal
def test_shift_conformal_says_how_many_calibration_sets_its_level_needs():
    """7 sets at level 0.9 gave [0, 1] for every target (an infinite radius); now an error names the minimum."""
    assert (min_calibration_sets(0.9), min_calibration_sets(0.95), min_calibration_sets(0.5)) == (9, 19, 1)
    rng = np.random.default_rng(1)
    sets = {}
    for i in range(7):
        y = rng.integers(0, 4, 60)
        z = rng.normal(size=(60, 4))
        z[np.arange(60), y] += 2.0 - 0.2 * i
        sets[f"s{i}"] = (z, y)
    with pytest.raises(InputValidationError, match="7 calibration sets .* from m = 9 on"):
        ShiftConformal("atc_mc", level=0.9).fit(logits=Z, labels=Y, shifted=sets)
    est = ShiftConformal("atc_mc", level=0.8).fit(logits=Z, labels=Y, shifted=sets)  # 0.8 needs 4
    assert np.isfinite(est.radius_)


@pytest.mark.parametrize("name", ["cot", "cott"])
def test_cot_and_cott_on_fewer_rows_than_classes_warn(name):
    """One row read as accuracy 0 without a word (COTT on 1-row chunks); now a SmallSampleWarning says why."""
    from helpers.estimators import SmallSampleWarning

    est = _fitted(name)
    with pytest.warns(SmallSampleWarning, match="1 target row"):
        est.estimate(logits=Z[:1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        est.estimate(logits=Z[:4])  # as many rows as classes: no warning


@pytest.mark.parametrize("name", ["stacked", "stacked_sota"])
@pytest.mark.parametrize("form", ["dask", "store"])
def test_stacked_estimators_refuse_out_of_core_inputs_at_once(name, form, tmp_path):
    """A Dask array ran silently (each base method read it) and a store path raised an unexplained IndexError;
    stacked_sota failed only after its streamable base methods had read the store, with COT's message."""
    da = pytest.importorskip("dask.array")
    est = get_estimator(name).fit(logits=Z, labels=Y, **_shifted(name))
    target = da.from_array(Z, chunks=(30, 4))
    if form == "store":
        pytest.importorskip("zarr")
        target.to_zarr(str(tmp_path / "z.zarr"))
        target = str(tmp_path / "z.zarr")
    est._row = lambda *_a, **_k: pytest.fail("a base method ran before the refusal")
    with pytest.raises(InputValidationError, match="does not run out of core"):
        est.estimate(logits=target)


def test_cbpe_on_a_tiny_reference_says_why_instead_of_a_scikit_learn_error():
    """8 reference rows raised scikit-learn's ValueError from inside NannyML's calibration check."""
    z = np.array([[2.0, 0.5, 0.1], [0.2, 1.5, 0.3], [0.1, 0.4, 1.8], [1.2, 1.0, 0.2],
                  [0.3, 0.2, 0.9], [1.1, 0.1, 1.3], [0.2, 2.2, 0.4], [0.9, 0.3, 0.6]])  # fmt: skip
    with pytest.raises(InputValidationError, match="reference of 8 rows is too small for CBPE"):
        get_estimator("cbpe").fit(logits=z, labels=[0, 1, 2, 1, 2, 0, 1, 0])


@pytest.mark.parametrize("name", list_estimators())
def test_every_estimator_class_shows_its_exact_output_in_a_doctest(name):
    """The class docstring runs on a tiny fixed input and shows the number (tests/test_examples.py runs it)."""
    cls = type(get_estimator(name))
    assert ">>>" in (cls.__doc__ or ""), f"{cls.__name__}: no example in its docstring"
