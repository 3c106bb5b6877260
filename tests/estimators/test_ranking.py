"""rank_models: rankings, their agreement with the truth and its intervals, out-of-core outputs, clear refusals."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import InputValidationError, UnknownNameError
from helpers.estimators import rank_models, ranking_agreement

RNG = np.random.default_rng(1)
N = 500
Y = RNG.integers(0, 4, N)
Y_ID = RNG.integers(0, 4, N)
SKILL = (0.4, 0.8, 1.2, 1.6, 2.4)
OUTS = {f"m{s}": RNG.normal(size=(N, 4)) + s * np.eye(4)[Y] for s in SKILL}
REF = {f"m{s}": (RNG.normal(size=(N, 4)) + 1.3 * s * np.eye(4)[Y_ID], Y_ID) for s in SKILL}


def test_regret_tau_and_rho_by_hand():
    """Values 3, 1, 2 against accuracies .9, .8, .7: pairs (1,2) concordant, (1,3) concordant, (2,3) discordant:
    τ = (2 − 1) / 3; ranks (3, 1, 2) vs (3, 2, 1): ρ = 1 − 6·2 / (3·8) = .5; the first-ranked is the best: regret 0."""
    got = ranking_agreement(np.array([3.0, 1.0, 2.0]), np.array([0.9, 0.8, 0.7]))
    assert got["kendall_tau"] == pytest.approx(1 / 3) and got["spearman_rho"] == pytest.approx(0.5)
    assert got["top1_regret"] == 0.0
    assert ranking_agreement(np.array([1.0, 3.0, 2.0]), np.array([0.9, 0.8, 0.7]))["top1_regret"] == pytest.approx(0.1)


@pytest.mark.parametrize("method", ["average_confidence", "atc_mc", "nuclear_norm", "mde", "aline_s", "aline_d"])
def test_every_kind_of_method_ranks_and_its_interval_holds_the_point(method):
    r = rank_models(OUTS, method=method, reference=REF, labels=Y, n_boot=40)
    a = r.agreement
    for key in ("kendall_tau", "spearman_rho", "top1_regret"):
        assert a[f"{key}_lower"] - 1e-12 <= a[key] <= a[f"{key}_upper"] + 1e-12
    assert a["kendall_tau"] >= 0.6  # five models far apart in skill
    table = r.to_df()
    assert list(table["rank"]) == [1, 2, 3, 4, 5] and table["true_accuracy"].is_monotonic_decreasing is not None
    assert r.ranked_by.startswith("estimated accuracy" if method in ("atc_mc", "average_confidence", "aline_s",
                                                                     "aline_d") else method)  # fmt: skip


def test_a_score_is_oriented_by_its_direction():
    """The Fréchet distance ranks the model farthest from its reference last, not first."""
    r = rank_models(OUTS, method="frechet", reference=REF, labels=Y, n_boot=0)
    assert r.ranked_by == "frechet score (lower = better)"
    assert np.allclose(r.table["value"], -r.table["score"])


def test_a_mergeable_method_ranks_dask_outputs_out_of_core_to_the_same_values():
    import dask.array as da

    here = rank_models(OUTS, method="average_confidence", n_boot=0)
    lazy = rank_models({k: da.from_array(v, chunks=(128, 4)) for k, v in OUTS.items()}, method="average_confidence",
                       n_boot=0)  # fmt: skip
    np.testing.assert_allclose(lazy.table["value"], here.table["value"], atol=1e-12)


def test_bad_collections_are_refused_naming_the_argument():
    with pytest.raises(InputValidationError, match="^outputs: ranking needs at least 2 models"):
        rank_models({"a": OUTS["m0.4"]})
    with pytest.raises(InputValidationError, match="^outputs: every model must have the same class count"):
        rank_models({"a": OUTS["m0.4"], "b": OUTS["m0.8"][:, :3]})
    with pytest.raises(InputValidationError, match="^outputs: every model must be scored on the same examples"):
        rank_models({"a": OUTS["m0.4"], "b": OUTS["m0.8"][:-1]})
    with pytest.raises(InputValidationError, match="^reference: atc_mc is fitted on each model"):
        rank_models(OUTS, method="atc_mc")
    with pytest.raises(InputValidationError, match="^reference: expected a dict with an entry for every model"):
        rank_models(OUTS, method="atc_mc", reference={"m0.4": REF["m0.4"]})
    with pytest.raises(UnknownNameError):
        rank_models(OUTS, method="no_such_method")
    with pytest.raises(InputValidationError, match="^models: ALine needs at least 3"):
        rank_models({k: OUTS[k] for k in ("m0.4", "m0.8")}, method="aline_d",
                    reference={k: REF[k] for k in ("m0.4", "m0.8")})  # fmt: skip
    with pytest.raises(InputValidationError, match="^labels: "):
        rank_models(OUTS, labels=Y[:-1])
