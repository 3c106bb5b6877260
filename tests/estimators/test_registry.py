"""The string-keyed estimator registry and the shared contract across all estimators."""

import numpy as np
import pytest

from helpers.errors import InputValidationError, NotFittedError, UnknownNameError
from helpers.estimators import ATC, MDE, Estimate, get_estimator, list_estimators

EXPECTED = {
    "agreement",
    "atc_mc",
    "atc_ne",
    "average_confidence",
    "average_energy",
    "average_negative_entropy",
    "confusion_matrix_shift",
    "cot",
    "cott",
    "doc",
    "frechet",
    "mano",
    "maxprob",
    "mde",
    "mde_normalized",
    "nuclear_norm",
    "softmax_corr",
}
NEEDS_FIT = {"atc_mc", "atc_ne", "doc", "cot", "cott", "confusion_matrix_shift", "frechet"}


def test_names_and_params():
    assert EXPECTED <= set(list_estimators())
    est = get_estimator("atc_mc", rule="quantile")
    assert isinstance(est, ATC) and est.score == "mc" and est.rule == "quantile"
    assert get_estimator("atc_ne").score == "ne"
    assert isinstance(get_estimator("mde_normalized"), MDE) and get_estimator("mde_normalized").normalize
    assert get_estimator("mde", T=2.0).get_params()["T"] == 2.0
    with pytest.raises(UnknownNameError, match="atc_mc"):
        get_estimator("atc")
    with pytest.raises(InputValidationError, match="score"):
        get_estimator("atc_mc", score="ne")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_contract(name):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 4))
    y = rng.integers(0, 4, 200)
    est = get_estimator(name)
    target = {"logits": z} if name != "agreement" else {"logits": z, "other_logits": z[::-1]}
    if name in NEEDS_FIT:
        with pytest.raises(NotFittedError):
            est.estimate(**target)
        kw = {"logits": z} if name == "frechet" else {"logits": z, "labels": y}
        assert est.fit(**kw) is est
    if est.output == "score":  # a score becomes an accuracy through the line fitted on labelled shifted sets
        with pytest.raises(NotFittedError, match="shifted="):
            est.estimate(**target)
        shifted = {f"s{t}": (z * t, y) for t in (0.5, 1.0, 2.0, 3.0)}
        kw = {"logits": z} if name == "frechet" else {}
        assert est.fit(**kw, shifted=shifted) is est
    res = est.estimate(**target)
    assert isinstance(res, Estimate) and res.n == 200 and res.method == name
    assert 0.0 <= res.accuracy <= 1.0  # every registered estimator returns an accuracy, never NaN
    assert (res.score is None) == (est.output == "accuracy")
    frame = res.to_frame()
    assert list(frame["method"]) == [name]
    # NaN in the target is rejected with the argument's name
    bad = z.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputValidationError, match="logits"):
        est.estimate(**{**target, "logits": bad})
