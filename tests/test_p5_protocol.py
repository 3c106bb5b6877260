"""Paper 5's CIFAR-10-C protocol helpers: the 95-set selection, the accuracy grid, the paper-vs-ours table and
temperature scaling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_softmax

from helpers.data.corruptions import CIFAR10C_NAMES
from helpers.errors import InputValidationError
from helpers.experiments.p5_mde import (
    NOISE_TYPES,
    accuracy_grid,
    cifar10c_frame,
    collapse_by_type,
    correlation_table,
    fit_temperature,
    paper_table,
)


def _frame(types=CIFAR10C_NAMES, backbones=("resnet20",)) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [{"backbone": b, "set": "clean", "family": "clean", "split": "fit", "accuracy": 0.9, "MDE": 0.0}
            for b in backbones]  # fmt: skip
    for b in backbones:
        for i, t in enumerate(types):
            for s in range(1, 6):
                acc = 0.9 - 0.1 * s - 0.005 * i
                rows.append({"backbone": b, "set": f"{t}-{s}", "family": "corruption",
                             "split": "fit" if i % 2 else "heldout", "accuracy": acc,
                             "MDE": 2 * acc + rng.normal(scale=0.01)})  # fmt: skip
    rows.append({"backbone": backbones[0], "set": "comp-0", "family": "composition", "split": "fit",
                 "accuracy": 0.5, "MDE": 1.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_cifar10c_frame_takes_the_95_single_sets_all_fit():
    sel = cifar10c_frame(_frame())
    assert len(sel) == 95 and set(sel.split) == {"fit"} and set(sel.family) == {"corruption"}
    assert sel.groupby("type").size().eq(5).all()
    no_noise = cifar10c_frame(_frame(), exclude_types=NOISE_TYPES)
    assert len(no_noise) == 75 and not no_noise.type.isin(NOISE_TYPES).any()
    # in-sample R² of a line through all 95 sets, as the authors compute it
    rep = correlation_table(sel.assign(setup="c"), measures=["MDE"])
    r2 = rep[(rep.split == "fit") & (rep.measure == "r2")].value.iloc[0]
    assert r2 > 0.99 and rep[rep.split == "fit"].n_sets.iloc[0] == 95


def test_cifar10c_frame_refuses_incomplete_grids():
    with pytest.raises(InputValidationError, match="missing"):
        cifar10c_frame(_frame(types=CIFAR10C_NAMES[:5]))
    assert len(cifar10c_frame(_frame(types=CIFAR10C_NAMES[:5]), require_all=False)) == 25
    f = _frame()
    with pytest.raises(InputValidationError, match="different numbers"):
        cifar10c_frame(f[f.set != "fog-5"])
    with pytest.raises(InputValidationError, match="columns"):
        cifar10c_frame(f.drop(columns="family"))


def test_accuracy_grid_rows_in_cifar10c_order_percent():
    grid = accuracy_grid(_frame())
    assert list(grid.index) == list(CIFAR10C_NAMES)
    assert grid.loc["fog", "resnet20 s1"] == pytest.approx(100 * (0.8 - 0.005 * CIFAR10C_NAMES.index("fog")))


def test_paper_table_columns_and_missing_paper_values():
    sel = cifar10c_frame(_frame()).assign(setup="c")
    rep = correlation_table(sel, measures=["MDE"])
    tab = paper_table({"MDE": {"spearman_rho": 0.99, "r2": 0.96}, "ATC": {"spearman_rho": 0.9, "r2": 0.8}},
                      {"95": rep}, backbone="resnet20", heldout=rep)  # fmt: skip
    assert list(tab.index) == ["MDE", "ATC"]
    assert tab.loc["MDE", "paper R²"] == 0.96 and tab.loc["MDE", "R² 95"] > 0.99
    assert np.isnan(tab.loc["ATC", "R² 95"]) and np.isnan(tab.loc["MDE", "MAE unseen (pp)"])


def test_fit_temperature_recovers_a_known_scale():
    rng = np.random.default_rng(1)
    true = rng.normal(scale=2.0, size=(4000, 10))
    y = np.array([rng.choice(10, p=np.exp(r - r.max()) / np.exp(r - r.max()).sum()) for r in true])
    tau = fit_temperature(3.0 * true, y)  # logits 3x too sharp: the NLL optimum is near 3
    assert tau == pytest.approx(3.0, rel=0.1)
    grid = np.linspace(2, 4, 201)
    nll = [-log_softmax(3.0 * true / t, axis=1)[np.arange(len(y)), y].mean() for t in grid]
    assert tau == pytest.approx(grid[int(np.argmin(nll))], abs=0.02)
    with pytest.raises(InputValidationError):
        fit_temperature(np.full((3, 2), np.nan), np.zeros(3, int))


def test_collapse_by_type_counts_severities_over_the_share():
    f = _frame()
    f["top_class_share"] = 0.1
    f.loc[f.set.isin(["fog-4", "fog-5"]), "top_class_share"] = [0.35, 0.8]
    tab = collapse_by_type(f)
    assert tab.loc["fog", "resnet20 max_share"] == 0.8 and tab.loc["fog", "resnet20 n_collapsed"] == 2
    assert tab.loc["snow", "resnet20 n_collapsed"] == 0 and list(tab.index) == list(CIFAR10C_NAMES)


def test_cifar_setup_refuses_more_images_than_the_test_set():
    from helpers.experiments.p5_mde import cifar_setup, notebook_parameters

    p = notebook_parameters("smoke", cifar_base="jpeg", cifar_n_per_set=9500, cifar_n_reference=1000)
    with pytest.raises(InputValidationError, match="at most 10000 images of the 'jpeg'"):
        cifar_setup(p)
    p = notebook_parameters("smoke", cifar_n_per_set=1018, cifar_n_reference=0)  # the originals: 1,017 images
    with pytest.raises(InputValidationError, match="at most 1017 images of the 'original'"):
        cifar_setup(p)
    with pytest.raises(InputValidationError, match="cifar_base: expected one of"):
        cifar_setup(notebook_parameters("smoke", cifar_base="png"))


def test_cifar_pool_of_the_originals_uses_its_own_clean_images_as_reference():
    from helpers.experiments.p5_mde.setups import cifar_pool, notebook_parameters

    cifar, pool, ref = cifar_pool(notebook_parameters("default"))
    assert len(cifar.y) == 1017 and len(pool) == 1017 and np.array_equal(pool, ref)
    _, pool_j, ref_j = cifar_pool(notebook_parameters("default", cifar_base="jpeg", cifar_n_per_set=2000,
                                                      cifar_n_reference=1000))  # fmt: skip
    assert len(pool_j) == 2000 and len(ref_j) == 1000 and not set(pool_j) & set(ref_j)


def test_paper_protocol_tables_per_backbone_and_labels():
    from helpers.experiments.p5_mde import paper_protocol

    f = _frame(backbones=("resnet20", "resnet32")).assign(setup="cifar10")
    rep = correlation_table(f, measures=["MDE"])
    tabs, sel, labels = paper_protocol(f, rep, {"MDE": {"spearman_rho": 0.99, "r2": 0.96}}, measures=["MDE"])
    assert labels == ["in-sample (95 sets)", "in-sample, no noise (75 sets)"] and len(sel) == 190
    assert tabs["resnet20"].loc["MDE", "paper R²"] == 0.96 and np.isnan(tabs["resnet32"].loc["MDE", "paper R²"])
    assert tabs["resnet32"].loc["MDE", "R² in-sample (95 sets)"] > 0.99


def test_temperature_scaled_report_fits_tau_then_correlates():
    from helpers.experiments.p5_mde import temperature_scaled_report

    rng = np.random.default_rng(0)
    ref = rng.normal(size=(500, 10)) * 3
    y = ref.argmax(1)
    base = rng.normal(size=(200, 10))
    sets = [base * s for s in (0.5, 1, 2, 3, 4)]  # one set at growing logit scales
    tau, rep = temperature_scaled_report(sets, [0.2, 0.3, 0.5, 0.6, 0.7], reference_logits=ref, reference_labels=y)
    assert tau == pytest.approx(fit_temperature(ref, y)) and tau < 1  # labels = argmax: sharpen
    assert set(rep.measure) == {"spearman_rho", "r2"} and len(rep) == 6
    rho = rep[(rep.score == "ConfScore (τ-scaled)") & (rep.measure == "spearman_rho")].value.iloc[0]
    assert rho == pytest.approx(1.0)  # confidence grows with the logit scale, as the accuracies do
