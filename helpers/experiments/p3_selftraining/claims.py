"""Paper 3's claims (self-training ensembles), each registered once and decided with a bootstrap over target points.

Inputs are the per-example outcomes of every method on every (pair, f-architecture) run of the notebook
(:func:`helpers.experiments.p3_selftraining.runs.pair_examples`), grouped into *setups*: the paper's Table 1 rows
(dataset category x architecture of f: Amazon/typical, digits/typical, digits/DANN-arch).  Each replicate resamples
the target points of every pair independently, recomputes every method's absolute error (and F1), averages them
over the setup's pairs and takes the claim's statistic; a claim over several setups uses the least favourable
setup (the maximum of the per-setup gaps, recomputed in each replicate), so it holds only where it holds on all.

The ablation claims (Figure 2) are decided over the ablation pairs (bootstrap over pairs: with two pairs the
interval spans the two pairs' gains, so both must agree); the success conditions (Sec. 5, App. C.4) over runs.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from helpers.claims import (
    Claim,
    Decision,
    GroupsRule,
    MeanRule,
    Power,
    ShareRule,
    bootstrap_decision,
    bootstrap_groups,
    share_decision,
)
from helpers.experiments.p3_selftraining.power import F1_GAPS, MAE_GAPS

__all__ = ["CLAIMS", "ACCURACY_BASELINES", "DETECTION_BASELINES", "claim_inputs"]

#: Table 1's existing methods the paper compares T_RM with (accuracy estimation; error detection)
ACCURACY_BASELINES = ("Avg Conf", "Ens Avg Conf", "Proxy Risk")
DETECTION_BASELINES = ("MSP", "Trust Score", "Proxy Risk")
RM = "Ours (RM)"
N_BOOT = 1000

#: runs[(setup, pair)] = pair_examples(...) output
Runs = Mapping[tuple[str, str], Mapping]


def _f1(flags: np.ndarray, err: np.ndarray) -> float:
    tp = float(np.sum(flags & err))
    denom = float(np.sum(flags) + np.sum(err))
    return 2 * tp / denom if denom else 0.0


def _setup_gaps(runs: Runs, idx: Mapping | None, *, kind: str) -> dict[str, float]:
    """Per setup: MAE_RM - min MAE of the baselines (kind "mae"), or max F1 of the baselines - F1_RM ("f1")."""
    per_setup: dict[str, list[dict[str, float]]] = {}
    for (setup, pair), ex in runs.items():
        i = None if idx is None else idx[(setup, pair)]
        err = ex["true_error"] if i is None else ex["true_error"][i]
        vals = {}
        for m in ((*ACCURACY_BASELINES, RM) if kind == "mae" else (*DETECTION_BASELINES, RM)):
            if kind == "mae":
                r = ex["residual"][m] if i is None else ex["residual"][m][i]
                vals[m] = abs(float(r.mean()))
            else:
                f = ex["flags"][m] if i is None else ex["flags"][m][i]
                vals[m] = _f1(f, err)
        per_setup.setdefault(setup, []).append(vals)
    out = {}
    for setup, rows in per_setup.items():
        mean = pd.DataFrame(rows).mean()
        base = mean.drop(RM)
        out[setup] = float(mean[RM] - base.min()) if kind == "mae" else float(base.max() - mean[RM])
    return out


def _worst_gap(runs: Runs, *, kind: str, n_boot: int = N_BOOT) -> Decision:
    """max over setups of the per-setup gap (< 0: RM better on every setup), bootstrap over target points."""
    full = _setup_gaps(runs, None, kind=kind)
    detail = pd.DataFrame({"setup": list(full), "gap": list(full.values()),
                           "pairs": [sum(1 for s, _ in runs if s == k) for k in full]})  # fmt: skip
    return bootstrap_groups(lambda idx: max(_setup_gaps(runs, idx, kind=kind).values()),
                            {k: len(ex["true_error"]) for k, ex in runs.items()}, n_boot=n_boot, detail=detail,
                            setups_held=int(sum(v < 0 for v in full.values())), setups=len(full))  # fmt: skip


def _self_training_gain(runs: Runs, *, n_boot: int = N_BOOT) -> Decision:
    """MAE of round 1 (T = 1) - MAE after T rounds, over every RI and RM run; > 0 when self-training helps."""

    def gain(idx: Mapping) -> float:
        g = [abs(ex["residual"][f"{m} round 1"][idx[k]].mean()) - abs(ex["residual"][m][idx[k]].mean())
             for k, ex in runs.items() for m in ("Ours (RI)", RM) if f"{m} round 1" in ex["residual"]]  # fmt: skip
        return float(np.mean(g)) if g else float("nan")

    return bootstrap_groups(gain, {k: len(ex["true_error"]) for k, ex in runs.items()}, n_boot=n_boot)


def _ablation_gain(ablation: pd.DataFrame, *, param: str) -> Decision:
    """Mean over ablation pairs of F1 at the largest value of ``param`` - F1 at the smallest; bootstrap over pairs."""
    a = ablation[ablation["param"] == param]
    gains = []
    for pair, g in a.groupby("pair", sort=True):
        g = g.sort_values("value")
        gains.append({"pair": pair, "from": g["value"].iloc[0], "to": g["value"].iloc[-1],
                      "gain": float(g["f1"].iloc[-1] - g["f1"].iloc[0])})  # fmt: skip
    detail = pd.DataFrame(gains, columns=["pair", "from", "to", "gain"])
    v = detail["gain"].to_numpy(float)
    return bootstrap_decision(lambda i: float(v[i].mean()), len(v), detail=detail,
                              setups_held=int((v > 0).sum()), setups=len(v))  # fmt: skip


def _conditions(conditions: pd.DataFrame) -> Decision:
    """Share of self-training runs whose ν̃ + γ̃ (what the ensemble gets wrong) stays below σ²_L (its diversity)."""
    c = conditions.dropna(subset=["nu_tilde", "gamma_tilde", "sigma2_L"])
    flags = (c["nu_tilde"] + c["gamma_tilde"]) < c["sigma2_L"]
    return share_decision(flags, detail=c[["pair", "method", "nu_tilde", "gamma_tilde", "sigma2_L"]])


# ---- plausible frames for the tests -----------------------------------------------------------------------------
def _example(rng, n: int, acc: float, biases: Mapping[str, float], noise: Mapping[str, float]) -> dict:
    """One pair: each method's per-point estimate of correctness off by its bias; detectors flag errors with a
    method-specific miss/false-alarm rate."""
    err = rng.uniform(size=n) > acc
    ex = {"true_error": err, "estimate": {}, "residual": {}, "flags": {}}
    for m in ("Avg Conf", "Ens Avg Conf", "MSP", "Trust Score", "Proxy Risk", "Ours (RI)", RM):
        flip = rng.uniform(size=n) < noise.get(m, 0.3)
        flags = np.where(flip, ~err, err)
        if m in ("Avg Conf", "Ens Avg Conf"):
            conf = np.clip((~err) + biases.get(m, 0.0) + rng.normal(0, 0.05, n), 0, 1)
            ex["flags"][m], ex["residual"][m] = None, conf - (~err)
        else:
            ex["flags"][m], ex["residual"][m] = flags, (1.0 - flags) - (~err)
        ex["estimate"][m] = float(1 - err.mean() + ex["residual"][m].mean())
    ex["residual"][f"{RM} round 1"] = ex["residual"][RM] + biases.get("round 1", 0.0)
    return ex


def _runs(rm_good: bool) -> dict:
    rng = np.random.default_rng(3)
    biases = {"Avg Conf": 0.6, "Ens Avg Conf": 0.5, "round 1": 0.08}
    noise = {"MSP": 0.30, "Trust Score": 0.30, "Proxy Risk": 0.25, RM: 0.05 if rm_good else 0.45,
             "Ours (RI)": 0.2}  # fmt: skip
    return {(s, f"p{i}"): _example(rng, 1500, 0.75, biases, noise) for s in ("amazon/typical", "digits/typical")
            for i in range(3)}  # fmt: skip


def _ablation(rises: bool) -> pd.DataFrame:
    rows = []
    for pair, base in (("a", 0.5), ("b", 0.6)):
        for param in ("N", "T"):
            for step, v in enumerate([1, 2, 5]):
                rows.append({"pair": pair, "param": param, "value": v,
                             "f1": base + (0.04 if rises else -0.04) * step})  # fmt: skip
    return pd.DataFrame(rows)


def _cond(ok: bool) -> pd.DataFrame:
    return pd.DataFrame({"pair": [f"p{i}" for i in range(12)], "method": "RM", "nu_tilde": 0.03,
                         "gamma_tilde": 0.01, "sigma2_L": 0.25 if ok else 0.01})  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="p3.rm_lowest_mae", paper="P3",
        statement="our method (with T_RM) achieves significantly better results [accuracy estimation] across various "
                  "dataset categories compared to existing methods ... and has a large advantage on the pre-trained "
                  "models using DANN-arch",
        source="paper 3, Sec. 6.2 and Table 1",
        quantity="largest over Table 1 setups of MAE(T_RM) - the lowest MAE of Avg Conf, Ens Avg Conf, Proxy Risk",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="'better across dataset categories': lower MAE than every existing method on every setup run "
                  "(Amazon and digits with the typical f, digits with the DANN-arch f); the largest per-setup gap is "
                  "recomputed on each bootstrap resample of the target points.",
        decide=lambda runs, n_boot=N_BOOT: _worst_gap(runs, kind="mae", n_boot=n_boot),
        cases={"holds": lambda: {"runs": _runs(True), "n_boot": 200},
               "fails": lambda: {"runs": _runs(False), "n_boot": 200}},
        power=Power(GroupsRule("max"), MAE_GAPS, "paper 3, Table 1: MAE(RM) - the lowest baseline MAE "
                    "per setup", seeds=True),
    ),
    Claim(
        id="p3.rm_best_f1", paper="P3",
        statement="our method with T_RM outperforms existing methods on all dataset categories [error detection]",
        source="paper 3, Sec. 6.2 and Table 1",
        quantity="largest over Table 1 setups of the best F1 of MSP, Trust Score, Proxy Risk - F1(T_RM)",
        threshold=0.0, direction="<", criterion_source="paper",
        rationale="'on all dataset categories': a higher F1 than every existing detector on every setup run; the "
                  "largest gap recomputed on each bootstrap resample of the target points.",
        decide=lambda runs, n_boot=N_BOOT: _worst_gap(runs, kind="f1", n_boot=n_boot),
        cases={"holds": lambda: {"runs": _runs(True), "n_boot": 200},
               "fails": lambda: {"runs": _runs(False), "n_boot": 200}},
        power=Power(GroupsRule("max"), F1_GAPS, "paper 3, Table 1: the best baseline F1 - F1(RM) per setup",
                    seeds=True),
    ),
    Claim(
        id="p3.self_training_lowers_mae", paper="P3",
        statement="both ensemble and self-training techniques have positive effects for identifying error points "
                  "and thus also for accuracy estimation",
        source="paper 3, Sec. 6.3 (Ablation Studies, Figure 2)",
        quantity="MAE after the first round (T = 1) - MAE after T rounds, mean over the RI and RM runs",
        threshold=0.0, direction=">", criterion_source="paper",
        rationale="Self-training helps accuracy estimation if T rounds end with a lower absolute error than the "
                  "first round of the same run; bootstrap over target points.",
        decide=_self_training_gain,
        cases={"holds": lambda: {"runs": _runs(True), "n_boot": 200},
               "fails": lambda: {"runs": {k: {**v, "residual": {**v["residual"], f"{RM} round 1": v["residual"][RM]
                                                                * 0.2}} for k, v in _runs(True).items()},
                                 "n_boot": 200}},
        power=Power(GroupsRule("mean", groups=1), 0.01, "ours: a gain of 1 point of MAE "
                    "(Figure 2 gives curves only)", seeds=True),
    ),
    Claim(
        id="p3.larger_n_raises_f1", paper="P3",
        statement="increasing T and N can lead to further improvement [of error-detection F1]",
        source="paper 3, Sec. 6.3 and Figure 2 (ensemble size N)",
        quantity="F1 at the largest ablation N - F1 at the smallest, mean over the ablation pairs",
        threshold=0.0, direction=">", criterion_source="paper",
        rationale="Figure 2's rising F1 with N; bootstrap over the ablation pairs.",
        decide=lambda ablation: _ablation_gain(ablation, param="N"),
        cases={"holds": lambda: {"ablation": _ablation(True)}, "fails": lambda: {"ablation": _ablation(False)}},
        power=Power(MeanRule("gain"), 0.02, "ours: 2 points of F1 (Figure 2 gives curves only)",
                    seeds=True),
    ),
    Claim(
        id="p3.larger_t_raises_f1", paper="P3",
        statement="increasing T and N can lead to further improvement [of error-detection F1]",
        source="paper 3, Sec. 6.3 and Figure 2 (self-training rounds T)",
        quantity="F1 at the largest ablation T - F1 at T = 1, mean over the ablation pairs",
        threshold=0.0, direction=">", criterion_source="paper",
        rationale="Figure 2's rising F1 with T; bootstrap over the ablation pairs.",
        decide=lambda ablation: _ablation_gain(ablation, param="T"),
        cases={"holds": lambda: {"ablation": _ablation(True)}, "fails": lambda: {"ablation": _ablation(False)}},
        power=Power(MeanRule("gain"), 0.02, "ours: 2 points of F1 (Figure 2 gives curves only)",
                    seeds=True),
    ),
    Claim(
        id="p3.success_conditions", paper="P3",
        statement="Our analysis relies on three conditions (A)(B)(C) ... empirically they are roughly satisfied "
                  "(e.g. ν̃ = 3.39 %, γ̃ = 0.73 % while σ²_L = 26.58 %)",
        source="paper 3, Sec. 6.3 and App. C.4 (Table 3)",
        quantity="share of self-training runs with ν̃ + γ̃ < σ²_L",
        threshold=0.5, direction=">", criterion_source="ours",
        rationale="The paper's example has the ensemble's errors on U minus R_X (ν̃) and on R_X (γ̃) far below the "
                  "diversity σ²_L; 'roughly satisfied' is read as ν̃ + γ̃ < σ²_L on most runs; exact binomial "
                  "interval over runs.",
        decide=_conditions,
        cases={"holds": lambda: {"conditions": _cond(True)}, "fails": lambda: {"conditions": _cond(False)}},
        power=Power(ShareRule(), 1.0, "paper 3, App. C.4: its example meets the conditions "
                    "(ν̃ + γ̃ = 3.2 % < σ²_L = 28.9 %)", seeds=True, paper_units=(True,)),
    ),
)


def claim_inputs(runs: Runs, ablation: pd.DataFrame, conditions: pd.DataFrame) -> dict[str, dict]:
    """Each claim's inputs: ``runs`` from :func:`pair_examples` keyed by (setup, pair), the ablation table and the
    conditions table of the notebook."""
    out: dict[str, dict] = {c: {"runs": runs} for c in ("p3.rm_lowest_mae", "p3.rm_best_f1", "p3.self_training_lowers_mae")}
    out["p3.larger_n_raises_f1"] = out["p3.larger_t_raises_f1"] = {"ablation": ablation}
    out["p3.success_conditions"] = {"conditions": conditions}
    return out

