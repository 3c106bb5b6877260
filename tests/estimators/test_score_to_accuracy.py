"""Set-level scores become accuracies as paper 5 defines it: a line fitted on labelled shifted sets (#44 item 5)."""

import numpy as np
import pytest

from helpers.errors import InputValidationError, NotFittedError
from helpers.estimators import get_estimator

SCORES = ["mde", "mde_normalized", "average_energy", "average_negative_entropy", "nuclear_norm", "frechet"]


def _sets(seed: int = 0, n: int = 300, k: int = 5):
    """Shifted sets of one model: logits sharpened or flattened, labels agreeing with the argmax less and less."""
    rng = np.random.default_rng(seed)
    out = {}
    for i, (scale, flip) in enumerate([(3.0, 0.05), (2.0, 0.15), (1.5, 0.3), (1.0, 0.45), (0.6, 0.6)]):
        z = rng.normal(size=(n, k)) * scale
        y = z.argmax(1)
        wrong = rng.random(n) < flip
        y[wrong] = (y[wrong] + 1) % k
        out[f"set{i}"] = (z, y)
    return out


@pytest.mark.parametrize("name", SCORES)
def test_the_exact_case_of_the_issue_raises_instead_of_nan(name):
    z, y = _sets()["set0"]
    est = get_estimator(name).fit(logits=z, labels=y)
    with pytest.raises(NotFittedError, match=r"shifted=\{set name: \(logits, labels\)"):
        est.estimate(logits=z)
    assert np.isfinite(est.measure(logits=z).score)  # the raw score stays available


@pytest.mark.parametrize("name", SCORES)
def test_fit_on_shifted_sets_gives_the_least_squares_line_of_accuracy_on_score(name):
    sets = _sets()
    z0, y0 = sets.pop("set0")
    est = get_estimator(name).fit(logits=z0, shifted=sets)
    scores = np.array([est.measure(logits=z).score for z, _ in sets.values()])
    accs = np.array([np.mean(z.argmax(1) == y) for z, y in sets.values()])
    slope, intercept = np.polyfit(scores, accs, 1)  # reference: numpy's least squares
    res = est.estimate(logits=z0)
    expected = float(np.clip(slope * res.score + intercept, 0.0, 1.0))
    assert res.accuracy == pytest.approx(expected, abs=1e-9)
    assert res.score == pytest.approx(est.measure(logits=z0).score)


def test_hand_computed_line():
    # three sets whose average energies are 1, 2, 3 (constant logits c: energy -c - log K) with accuracies .5/.6/.7
    k = 2
    sets = {}
    for c, acc in ((1.0, 0.5), (2.0, 0.6), (3.0, 0.7)):
        z = np.full((10, k), c - np.log(k))
        z[:, 0] += 1e-9  # argmax = class 0
        sets[f"c{c}"] = {"logits": z, "accuracy": acc}
    est = get_estimator("average_energy").fit(shifted=sets)
    target = np.full((10, k), 2.5 - np.log(k))
    assert est.estimate(logits=target).accuracy == pytest.approx(0.65, abs=1e-6)  # 0.1 * 2.5 + 0.4


def test_features_score_the_distance_and_outputs_give_the_accuracy():
    rng = np.random.default_rng(1)
    ref = rng.normal(size=(200, 3))
    sets = {}
    for i, shift in enumerate([0.0, 0.5, 1.0, 2.0]):
        logits = rng.normal(size=(200, 4))
        labels = np.where(rng.random(200) < 0.9 - 0.2 * i, logits.argmax(1), (logits.argmax(1) + 1) % 4)
        sets[f"s{i}"] = {"features": ref + shift, "logits": logits, "labels": labels}
    est = get_estimator("frechet").fit(features=ref, shifted=sets)
    far = est.estimate(features=ref + 3.0)
    near = est.estimate(features=ref)
    assert far.accuracy < near.accuracy and 0.0 <= far.accuracy <= 1.0


@pytest.mark.parametrize(
    "shifted, message",
    [
        ([1, 2, 3], "shifted: expected a mapping"),
        ({"a": 3}, r"shifted\['a'\]: expected \(logits, labels\)"),
        ({"a": {"logits": np.zeros((3, 2))}}, r"shifted\['a'\]: the set's accuracy needs labels"),
        ({"a": {"logit": np.zeros((3, 2))}}, r"shifted\['a'\]: unknown key\(s\) \['logit'\]"),
        ({"a": (np.zeros((3, 2)), [0, 1, 0])}, "at least 3 labelled shifted sets"),
    ],
)
def test_bad_shifted_sets_name_the_set(shifted, message):
    with pytest.raises(InputValidationError, match=message):
        get_estimator("mde").fit(shifted=shifted)
