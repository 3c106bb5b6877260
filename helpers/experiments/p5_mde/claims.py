"""Paper 5's claims (Meta-Distribution Energy), each registered once and decided on the paper's own setup.

The paper's two headline claims ("MDE correlates best with accuracy", "lowest MAE on unseen sets") are decided on
CIFAR-10 with the pretrained ResNets, the setup the paper reports (Tables 1-4); the notebook's other setups (8x8
digits, USPS, bag-of-words and MiniLM text) are this project's additions and appear in the per-setup detail of the
report, not in the verdict.  Inputs:

* ``cifar95``: the 95 CIFAR-10-C sets (19 types x 5 severities) per backbone, one row per (backbone, set) with the
  accuracy and one column per measure (:func:`helpers.experiments.p5_mde.protocol.paper_protocol`);
  in-sample R² of a one-variable line = squared Pearson r; intervals resample the 19 corruption types as clusters
  (a drawn type brings its 5 severities, on every backbone: the sets of a type are not independent).
* ``sets``: every set of the notebook (``setup, backbone, split, accuracy`` and one column per measure): the lines
  are fitted on the ``fit`` split and read on the ``unseen`` sets (the strong-noise transforms); intervals
  resample the unseen sets, each drawn on every backbone.
* ``sweep``: the temperature sweep (``setup, backbone, T, split, measure, value``); ``imbalance``: the long-tail
  subsets (``backbone, set, ratio, measure, abs_error_pp``), resampled by set (every backbone and ratio of a drawn
  set).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from helpers.claims import (
    MEI_SHARE,
    Claim,
    Decision,
    GroupsRule,
    PointRule,
    Power,
    ShareRule,
    bootstrap_clusters,
    share_decision,
)
from helpers.experiments.p5_mde.power import (
    _IMBALANCE,
    _MAX2,
    _MAX2_UNSEEN,
    _OURS_MAE,
    _OURS_R2,
    NATURAL_MAE_GAP,
    R2_GAP,
)

__all__ = ["CLAIMS", "claim_inputs"]

N_BOOT = 1000


def _r2(frame: pd.DataFrame, measures: Sequence[str]) -> pd.Series:
    acc = frame["accuracy"].to_numpy(float)
    out = {}
    for m in measures:
        x = frame[m].to_numpy(float)
        out[m] = float(np.corrcoef(x, acc)[0, 1] ** 2) if np.std(x) > 0 and np.std(acc) > 0 else float("nan")
    return pd.Series(out)


def _per_backbone_boot(groups: dict[str, pd.DataFrame], stat, *, n_boot: int,
                       clusters: dict[str, Sequence] | None = None) -> Decision:  # fmt: skip
    """max over backbones of ``stat(frame)``, its interval from resampling whole clusters of rows — the same
    corruption type (every severity) or set on every backbone (``clusters[backbone]``: one label per row;
    default: the ``type`` column, else the ``set`` column, else the row index)."""
    full = {b: stat(g) for b, g in groups.items()}
    detail = pd.DataFrame({"backbone": list(full), "gap": list(full.values()), "sets": [len(g) for g in groups.values()]})
    if clusters is None:
        clusters = {b: (g["type"] if "type" in g else g["set"] if "set" in g else g.index).tolist()
                    for b, g in groups.items()}  # fmt: skip
    return bootstrap_clusters(lambda idx: max(stat(g.iloc[idx[b]]) for b, g in groups.items()), clusters,
                              n_boot=n_boot, detail=detail.assign(clusters=[len(set(clusters[b])) for b in full]),
                              setups_held=int(sum(v < 0 for v in full.values())), setups=len(full))  # fmt: skip


def _measures(frame: pd.DataFrame, measures: Sequence[str]) -> list[str]:
    return [m for m in measures if m in frame and frame[m].notna().all()]


def _mde_r2_gap(cifar95: pd.DataFrame, measures: Sequence[str], n_boot: int = N_BOOT) -> Decision:
    """max over backbones of (best R² of the other measures - R² of MDE), in-sample on the 95 sets."""
    groups = {b: g for b, g in cifar95.groupby("backbone", sort=True)}

    def stat(g: pd.DataFrame) -> float:
        r2 = _r2(g, _measures(g, measures))
        return float(r2.drop("MDE").max() - r2["MDE"])

    return _per_backbone_boot(groups, stat, n_boot=n_boot)


def _r2_gap(cifar95: pd.DataFrame, better: str, than: str, n_boot: int = N_BOOT) -> Decision:
    """max over backbones of R²(``than``) − R²(``better``), in-sample on the 95 sets (< 0: ``better`` ahead on
    every backbone)."""
    groups = {b: g for b, g in cifar95.groupby("backbone", sort=True)}

    def stat(g: pd.DataFrame) -> float:
        r2 = _r2(g, [better, than])
        return float(r2[than] - r2[better])

    return _per_backbone_boot(groups, stat, n_boot=n_boot)


def _raw_mae_gap(cifar95: pd.DataFrame, better: str, than: str, n_boot: int = N_BOOT) -> Decision:
    """max over backbones of MAE(``better``) − MAE(``than``) (pp) of the two accuracy estimates as they come (no
    line), on the 95 sets (< 0: ``better`` more accurate on every backbone)."""
    groups = {b: g for b, g in cifar95.groupby("backbone", sort=True)}

    def stat(g: pd.DataFrame) -> float:
        acc = g["accuracy"].to_numpy(float)
        return float(100 * (np.abs(g[better].to_numpy(float) - acc).mean() - np.abs(g[than].to_numpy(float) - acc).mean()))

    return _per_backbone_boot(groups, stat, n_boot=n_boot)


def _unseen_errors(sets: pd.DataFrame, measures: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Per backbone: the unseen sets' absolute errors (pp) of every measure's line fitted on the fit sets."""
    from helpers.estimators.metaset import MetaSetRegression

    out = {}
    for b, g in sets.groupby("backbone", sort=True):
        fit, unseen = g[g["split"] == "fit"], g[g["split"] == "unseen"]
        ms = _measures(g, measures)
        errs = {m: 100 * np.abs(MetaSetRegression().fit(scores=fit[m].to_numpy(), accuracies=fit["accuracy"].to_numpy())
                                .predict(unseen[m].to_numpy()) - unseen["accuracy"].to_numpy()) for m in ms}  # fmt: skip
        out[b] = pd.DataFrame(errs, index=unseen["set"].to_numpy())
    return out


def _mde_mae_gap(sets: pd.DataFrame, measures: Sequence[str], *, versus: str | None = None,
                 n_boot: int = N_BOOT) -> Decision:  # fmt: skip
    """max over backbones of MAE(MDE) - the lowest MAE of the other measures (or of ``versus``) on unseen sets."""
    groups = _unseen_errors(sets, measures)

    def stat(e: pd.DataFrame) -> float:
        mae = e.mean()
        return float(mae["MDE"] - (mae[versus] if versus else mae.drop("MDE").min()))

    return _per_backbone_boot(groups, stat, n_boot=n_boot)


def _temperature(sweep: pd.DataFrame, measure: str = "r2") -> Decision:
    s = sweep[(sweep["split"] == "fit") & (sweep["measure"] == measure)]
    rows = []
    for (setup, bb), g in s.groupby(["setup", "backbone"], sort=True):
        best = g.loc[g["value"].idxmax(), "T"]
        at1 = g.loc[g["T"] == 1, "value"]
        rows.append({"setup": setup, "backbone": bb, "best_T": float(best),
                     "best_at_1": bool(len(at1) and at1.iloc[0] >= g["value"].max() - 1e-12)})  # fmt: skip
    detail = pd.DataFrame(rows)
    return share_decision(detail["best_at_1"], detail=detail)


def _imbalance(imbalance: pd.DataFrame, n_boot: int = N_BOOT) -> Decision:
    """Mean over (backbone, set, ratio) of MDE's - nuclear norm's absolute error (pp); bootstrap over the sets (a
    drawn set brings every backbone's subsets of it)."""
    w = imbalance.pivot_table(index=["backbone", "set", "ratio"], columns="measure", values="abs_error_pp")
    per_pair = (w["MDE"] - w["NuclearNorm"]).groupby(level=["backbone", "set"]).mean()
    diff = per_pair.to_numpy(float)
    detail = (w["MDE"] - w["NuclearNorm"]).groupby(level="ratio").mean().rename("MDE - NuclearNorm (pp)").reset_index()
    return bootstrap_clusters(lambda i: float(diff[i[0]].mean()), {0: per_pair.index.get_level_values("set").tolist()},
                              n_boot=n_boot, detail=detail)  # fmt: skip


def _imbalance_moderate(imbalance: pd.DataFrame, n_boot: int = N_BOOT, min_ratio: float = 0.4) -> Decision:
    """Largest over the ratios r >= ``min_ratio`` of the mean over (backbone, set) of MDE's - nuclear norm's absolute
    error (pp); the maximum recomputed on each bootstrap resample of the sets (each with every backbone)."""
    w = imbalance[imbalance["ratio"] >= min_ratio - 1e-12]
    if w.empty:  # a run without a moderate ratio cannot decide it
        return Decision(float("nan"), float("nan"), float("nan"), note=f"no imbalance ratio >= {min_ratio}")
    w = w.pivot_table(index=["backbone", "set"], columns=["ratio", "measure"], values="abs_error_pp")
    ratios = sorted({r for r, _ in w.columns})
    diff = np.column_stack([w[(r, "MDE")] - w[(r, "NuclearNorm")] for r in ratios])  # (backbone, set) x ratio
    detail = pd.DataFrame({"ratio": ratios, "MDE - NuclearNorm (pp)": diff.mean(axis=0)})
    return bootstrap_clusters(lambda i: float(diff[i[0]].mean(axis=0).max()),
                              {0: w.index.get_level_values("set").tolist()}, n_boot=n_boot, detail=detail,
                              setups_held=int((diff.mean(axis=0) < 0).sum()), setups=len(ratios))  # fmt: skip


def _temperature_rho(sweep: pd.DataFrame) -> Decision:
    """Share of (setup, backbone) whose best meta-set Spearman ρ over the temperatures is at T = 1."""
    return _temperature(sweep, measure="spearman_rho")


# ---- plausible frames for the tests -----------------------------------------------------------------------------
MEASURES_T = ("MDE", "ConfScore", "NuclearNorm")


def _sets(mde_noise: float, n_fit: int = 60, n_unseen: int = 20) -> pd.DataFrame:
    """Sets whose accuracy each measure tracks up to its noise (MDE's ``mde_noise``, the others 0.04)."""
    rng = np.random.default_rng(11)
    rows = []
    for bb in ("resnet20", "resnet32"):
        for i in range(n_fit + n_unseen):
            acc = rng.uniform(0.3, 0.9)
            row = {"setup": "cifar10", "backbone": bb, "set": f"s{i}", "split": "fit" if i < n_fit else "unseen",
                   "accuracy": acc}  # fmt: skip
            for m in MEASURES_T:
                row[m] = acc + rng.normal(0, mde_noise if m == "MDE" else 0.04)
            rows.append(row)
    return pd.DataFrame(rows)


def _sweep(best_at_one: bool, measure: str = "r2") -> pd.DataFrame:
    rows = []
    for setup, bb in [("cifar10", f"resnet{d}") for d in (20, 32, 44, 56)] + [("text", m) for m in "abcd"]:
        for t in (0.01, 0.5, 1.0, 2.0, 5.0):
            v = 0.9 - 0.05 * abs(np.log10(t)) if best_at_one else 0.9 - 0.01 * t
            rows.append({"setup": setup, "backbone": bb, "T": t, "split": "fit", "measure": measure, "value": v})
    return pd.DataFrame(rows)


def _imb(mde_better: bool) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    rows = []
    for bb in ("resnet20", "resnet32"):
        for s in range(10):
            for r in (0.1, 0.4, 0.6, 1.0):
                for m, e in (("MDE", 3.0 if mde_better else 8.0), ("NuclearNorm", 6.0)):
                    rows.append({"backbone": bb, "set": f"s{s}", "ratio": r, "measure": m,
                                 "abs_error_pp": e + rng.normal(0, 1)})  # fmt: skip
    return pd.DataFrame(rows)


def _case(**kw) -> dict:
    return {"measures": MEASURES_T, "n_boot": 200, **kw}


def _pair_sets(better_noise: float, *, other_noise: float = 0.04, names=("A", "B")) -> pd.DataFrame:
    """95-set-like rows where measure ``names[0]`` tracks accuracy up to ``better_noise``, ``names[1]`` up to
    ``other_noise`` (as accuracy estimates: the noise is their error)."""
    rng = np.random.default_rng(5)
    rows = []
    for bb in ("resnet20", "resnet32"):
        for i in range(95):
            acc = rng.uniform(0.3, 0.9)
            rows.append({"backbone": bb, "set": f"s{i}", "accuracy": acc,
                         names[0]: acc + rng.normal(0, better_noise), names[1]: acc + rng.normal(0, other_noise)})
    return pd.DataFrame(rows)


def _new_claim(id_: str, statement: str, source: str, better: str, than: str, *, power: Power,
               mae: bool = False) -> Claim:
    """A claim of one of the 2023-2025 methods' own papers, decided on the 95 CIFAR-10-C sets of every backbone
    (registered before the run that first computed it)."""
    if mae:
        quantity = f"largest over the CIFAR-10 ResNets of MAE({better}) - MAE({than}) (pp), raw estimates, 95 sets"
        decide = lambda cifar95, n_boot=N_BOOT: _raw_mae_gap(cifar95, better, than, n_boot)  # noqa: E731
    else:
        quantity = f"largest over the CIFAR-10 ResNets of R²({than}) - R²({better}), in-sample on the 95 sets"
        decide = lambda cifar95, n_boot=N_BOOT: _r2_gap(cifar95, better, than, n_boot)  # noqa: E731
    return Claim(
        id=id_, paper="P5", group="method", statement=statement, source=source, quantity=quantity, threshold=0.0,
        direction="<",
        criterion_source="ours",
        rationale=f"Fixed before the run that first computed {better}: {better} ahead of {than} on every backbone of "
                  "paper 5's CIFAR-10-C protocol (the one synthetic-shift suite all of these papers report); the "
                  "largest gap recomputed on each bootstrap resample of the corruption types (a type's 5 severities on "
                  "every backbone).",
        decide=decide,
        cases={"holds": lambda: {"cifar95": _pair_sets(0.005, names=(better, than)), "n_boot": 200},
               "fails": lambda: {"cifar95": _pair_sets(0.15, names=(better, than)), "n_boot": 200}},
        power=power,
    )


#: claims of the 2023-2025 methods' own papers that paper 5's CIFAR-10-C protocol can decide (the same suite for
#: all of them; COTT's is on the raw estimates, as Lu et al. report errors, the others on R² as their papers do)
NEW_METHOD_CLAIMS: tuple[Claim, ...] = (
    _new_claim("p5.mano_r2_above_cot",
               "MaNo ... outperforms state-of-the-art baselines [among them COT] across synthetic, natural and "
               "subpopulation shifts (R² of the accuracy prediction)",
               "Xie et al., NeurIPS 2024 (MaNo), Sec. 5 and Tables 1-3; not in the project's paper corpus",
               "MaNo", "COT", power=Power(_MAX2, (-0.02, -0.02), _OURS_R2)),
    _new_claim("p5.cott_mae_below_cot",
               "COTT, the thresholded variant of COT, further reduces the prediction error of COT",
               "Lu et al., NeurIPS 2023 (COT / COTT), Sec. 4.2 and Sec. 5; not in the project's paper corpus",
               "COTT", "COT", mae=True, power=Power(_MAX2, (-1.0, -1.0), "ours: 1 point of MAE (the method's "
                                                    "paper is not in the corpus)")),
    _new_claim("p5.softmax_corr_r2_above_confscore",
               "SoftmaxCorr ... outperforms ... MaxPred [the maximum softmax probability] in forecasting model "
               "performance on OOD test sets",
               "Tu, Deng, Zheng & Gedeon, TMLR 2024 (SoftmaxCorr), abstract and Sec. 5 (they rank many classifiers "
               "per test set; with two CIFAR backbones the set-level reading is the one our data can decide)",
               "SoftmaxCorr", "ConfScore", power=Power(_MAX2, (-0.02, -0.02), _OURS_R2)),
    _new_claim("p5.dispersion_r2_above_frechet",
               "feature separability [the dispersion score] is a better predictor of OOD accuracy than the "
               "distribution distance between training and test features",
               "Xie et al., NeurIPS 2023 (Dispersion), Sec. 1 and Sec. 5; not in the project's paper corpus",
               "Dispersion", "Frechet", power=Power(_MAX2, (-0.02, -0.02), _OURS_R2)),
)


_PAPER_CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="p5.mde_correlates_best", paper="P5",
        statement="MDE ... outperforms common training-free methods: the average R² of MDE on CIFAR-10 (0.973) ... "
                  "exceeds the ConfScore, Entropy, Frechet, and ATC by a notable margin",
        source="paper 5, Sec. 4.2 and Tables 1-2",
        quantity="largest over the CIFAR-10 ResNets of (best in-sample R² of the other measures - MDE's R²) on the "
                 "95 CIFAR-10-C sets",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="MDE's R² above every other measure on the paper's setup (CIFAR-10-C, the authors' in-sample "
                  "protocol) for every backbone; the largest gap recomputed on each bootstrap resample of the corruption "
                  "types (a type's 5 severities on every backbone).",
        decide=lambda cifar95, measures, n_boot=N_BOOT: _mde_r2_gap(cifar95, measures, n_boot),
        cases={"holds": lambda: _case(cifar95=_sets(0.005)), "fails": lambda: _case(cifar95=_sets(0.15))},
        power=Power(_MAX2, (R2_GAP, R2_GAP), "paper 5, Table 1 (CIFAR-10, ResNet-20): nuclear norm "
                    "0.959 - MDE 0.964"),
    ),
    Claim(
        id="p5.mde_lowest_unseen_mae", paper="P5", superseded_by="p5.mde_lowest_natural_mae",
        statement="MDE ... sets a new SOTA record for test performance evaluation [lowest MAE on the unseen test "
                  "sets]",
        source="paper 5, Sec. 1 and Sec. 4.3 (Tables 3-4)",
        quantity="largest over the CIFAR-10 ResNets of MAE(MDE) - the lowest MAE of the other measures (pp) on "
                 "the unseen sets",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="MDE's line (fitted on the meta-set) has the lowest MAE on the unseen sets for every backbone; "
                  "bootstrap over the unseen sets (each drawn on every backbone).",
        decide=lambda sets, measures, n_boot=N_BOOT: _mde_mae_gap(sets, measures, n_boot=n_boot),
        cases={"holds": lambda: _case(sets=_sets(0.005)), "fails": lambda: _case(sets=_sets(0.15))},
        power=Power(_MAX2_UNSEEN, (NATURAL_MAE_GAP, NATURAL_MAE_GAP), "paper 5, Sec. 4.3: natural-shift "
                    "MAE 3.14 vs 5.25 (the claim is decided on stress sets)"),
    ),
    Claim(
        id="p5.temperature_one_best", paper="P5", superseded_by="p5.temperature_one_best_rho",
        statement="the performance declines as temperature increases and the best performance appears in T = 1",
        source="paper 5, Sec. 4.4 (Figure 7a, Table 9)",
        quantity="share of (setup, backbone) whose best meta-set R² over T in {0.01, 0.5, 1, 2, 5, 10, 100} is at "
                 "T = 1",
        threshold=0.5, direction=">", criterion_source="ours",
        rationale="'the best performance appears in T = 1' on most setups; exact binomial interval over setups.",
        decide=_temperature,
        cases={"holds": lambda: {"sweep": _sweep(True)}, "fails": lambda: {"sweep": _sweep(False)}},
        power=Power(ShareRule(), 0.0, "paper 5, Table 9: the best R² is at T = 0.01, not T = 1",
                    paper_units=(False,), mei=0.65, mei_source=MEI_SHARE),
    ),
    Claim(
        id="p5.strong_noise_beats_nuclear_norm", paper="P5",
        statement="under the noised data undergoing new transformations, our method consistently achieves more "
                  "superior results (MAE < 5.92) than Nuclear Norm",
        source="paper 5, Sec. 4.5 (Figure 3 left)",
        quantity="largest over the CIFAR-10 ResNets of MAE(MDE) - MAE(nuclear norm) (pp) on the strong-noise "
                 "(unseen) sets",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="Lower MAE than the nuclear norm on the strong-noise sets for every backbone; bootstrap over the sets (each drawn on every backbone).",
        decide=lambda sets, measures, n_boot=N_BOOT: _mde_mae_gap(sets, measures, versus="NuclearNorm",
                                                                  n_boot=n_boot),
        cases={"holds": lambda: _case(sets=_sets(0.005)), "fails": lambda: _case(sets=_sets(0.15))},
        power=Power(_MAX2_UNSEEN, (-1.0, -1.0), _OURS_MAE),
    ),
    Claim(
        id="p5.imbalance_beats_nuclear_norm", paper="P5", superseded_by="p5.imbalance_beats_nuclear_norm_moderate",
        statement="our method is robust under moderate imbalance (r ≥ 0.4) than Nuclear Norm ... when there is a "
                  "severe class imbalance (r ≤ 0.2) ... it still precede Nuclear Norm",
        source="paper 5, Sec. 4.5 (Figure 3 right)",
        quantity="MAE(MDE) - MAE(nuclear norm) (pp) on long-tailed subsets of the severity-2 sets, mean over "
                 "ratios, sets and backbones",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="MDE ahead of the nuclear norm at every imbalance ratio, read as on average over the ratios; "
                  "bootstrap over the severity-2 sets (each drawn with every backbone).",
        decide=_imbalance,
        cases={"holds": lambda: {"imbalance": _imb(True), "n_boot": 200},
               "fails": lambda: {"imbalance": _imb(False), "n_boot": 200}},
        power=Power(GroupsRule("mean", groups=1, of=_IMBALANCE), -1.0,
                    _OURS_MAE),
    ),
)


#: the sources read as written (registered after the first readings' results; the first ones stay, superseded)
AS_WRITTEN: tuple[Claim, ...] = (
    Claim(
        id="p5.imbalance_beats_nuclear_norm_moderate", paper="P5",
        statement="our method is robust under moderate imbalance (r ≥ 0.4) than Nuclear Norm",
        source="paper 5, Sec. 4.5 (Figure 3 right)",
        quantity="largest over the ratios r >= 0.4 of MAE(MDE) - MAE(nuclear norm) (pp), mean over sets and "
                 "backbones, on long-tailed subsets of the severity-2 sets",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="The sentence's own reading: MDE ahead of the nuclear norm at each moderate ratio (r >= 0.4), not "
                  "on average over all ratios; the largest per-ratio gap recomputed on each bootstrap resample of "
                  "the sets (each with every backbone). Registered after p5.imbalance_beats_nuclear_norm's per-ratio table was "
                  "known.",
        decide=_imbalance_moderate,
        cases={"holds": lambda: {"imbalance": _imb(True), "n_boot": 200},
               "fails": lambda: {"imbalance": _imb(False), "n_boot": 200}},
        power=Power(GroupsRule("max", groups=4, se=1.4, of=_IMBALANCE), (-1.0,) * 4,
                    _OURS_MAE + "; four ratios r >= 0.4; se per ratio twice the "
                    "all-ratio mean's (its published interval)"),
    ),
    Claim(
        id="p5.temperature_one_best_rho", paper="P5",
        statement="the performance declines as temperature increases and the best performance appears in T = 1",
        source="paper 5, Sec. 4.4 (Figure 7a) and Table 9 (where T = 1 is best in Spearman ρ; R² and MAE are best "
               "at T = 0.01)",
        quantity="share of (setup, backbone) whose best meta-set Spearman ρ over the swept temperatures is at T = 1",
        threshold=0.5, direction=">", criterion_source="ours",
        rationale="Table 9, the source the sentence cites, shows T = 1 best in ρ only: the claim is read in ρ, on "
                  "most setups; exact binomial interval over setups. Registered after p5.temperature_one_best (R²) "
                  "was decided.",
        decide=_temperature_rho,
        cases={"holds": lambda: {"sweep": _sweep(True, "spearman_rho")},
               "fails": lambda: {"sweep": _sweep(False, "spearman_rho")}},
        power=Power(ShareRule(n=9), 1.0, "paper 5, Table 9: the best ρ is at T = 1 on its one "
                    "setup", paper_units=(True,)),
    ),
    Claim(
        id="p5.mde_lowest_natural_mae", paper="P5",
        statement="our method reduces the average MAE from 5.25 to 3.14 by about 40.0% upon prior SOTA method "
                  "(Nuclear Norm) [on the natural shifted sets]",
        source="paper 5, Sec. 4.3 (Tables 3-4)",
        quantity="MAE(MDE) - MAE(nuclear norm) (pp), averaged over the natural shifted sets",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="The paper's natural shifts (CIFAR-10.1, CIFAR-10.2, CINIC-10, STL-10 and the others of Tables "
                  "3-4) are not in the project's data.",
        decide=lambda **_: Decision(float("nan"), float("nan"), float("nan")),
        untested="the natural shifted sets of Tables 3-4 (CIFAR-10.1/10.2, CINIC-10, STL-10, ...) are not in the "
                 "project's data",
        power=Power(PointRule("no data", needed="the natural shifted sets (not in the data)"),
                    NATURAL_MAE_GAP, "paper 5, Sec. 4.3"),
    ),
)

CLAIMS: tuple[Claim, ...] = _PAPER_CLAIMS + NEW_METHOD_CLAIMS + AS_WRITTEN


def claim_inputs(*, cifar95: pd.DataFrame, sets: pd.DataFrame, sweep: pd.DataFrame, imbalance: pd.DataFrame,
                 measures: Sequence[str]) -> dict[str, dict]:  # fmt: skip
    """Each claim's inputs from the notebook's frames (CIFAR-10 rows only for the set-level claims).  Paper 5's
    claims compare MDE with the measures of its own comparison (:data:`~.measures.PAPER_MEASURES`, as when they
    were registered), whatever else ``measures`` holds."""
    from helpers.experiments.p5_mde.measures import PAPER_MEASURES

    cifar = sets[sets["setup"] == "cifar10"]
    measures = [m for m in measures if m in PAPER_MEASURES]
    new = {c.id: {"cifar95": cifar95} for c in NEW_METHOD_CLAIMS}
    return new | {
        "p5.mde_correlates_best": {"cifar95": cifar95, "measures": measures},
        "p5.mde_lowest_unseen_mae": {"sets": cifar, "measures": measures},
        "p5.temperature_one_best": {"sweep": sweep},
        "p5.strong_noise_beats_nuclear_norm": {"sets": cifar, "measures": measures},
        "p5.imbalance_beats_nuclear_norm": {"imbalance": imbalance},
        "p5.imbalance_beats_nuclear_norm_moderate": {"imbalance": imbalance},
        "p5.temperature_one_best_rho": {"sweep": sweep},
        "p5.mde_lowest_natural_mae": {},
    }
