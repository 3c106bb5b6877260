"""Paper 5's own CIFAR-10 protocol beside notebook 05's held-out one.

The authors (``pengr/Energy_AutoEval``, ``eval.py``) fit each measure's line on the released CIFAR-10-C, 19 types x
5 severities = 95 sets of the 10,000 test images, and report Spearman ρ and R² *in-sample* over those 95 sets (no
clean set, compositions or other shifts). :func:`cifar10c_frame` selects those sets from a measure frame of
:func:`~helpers.experiments.p5_mde.measures.metaset_frame` and marks all of them ``fit``, so that
:func:`~helpers.experiments.p5_mde.measures.correlation_table` computes the authors' numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from helpers.data.corruptions import CIFAR10C_NAMES
from helpers.errors import InputValidationError

__all__ = [
    "NOISE_TYPES",
    "cifar10c_frame",
    "corruption_type",
    "accuracy_grid",
    "collapse_by_type",
    "paper_table",
    "paper_protocol",
    "fit_temperature",
    "temperature_scaled_report",
]

#: The four CIFAR-10-C noise types (reported separately: they collapse the shipped ResNets' predictions).
NOISE_TYPES = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise")


def corruption_type(set_names: pd.Series) -> pd.Series:
    """``"fog-3"`` -> ``"fog"``: the corruption type of single-corruption set names."""
    return set_names.str.rsplit("-", n=1).str[0]


def cifar10c_frame(
    frame: pd.DataFrame, *, exclude_types: Sequence[str] = (), require_all: bool = True
) -> pd.DataFrame:
    """The single-corruption sets of the 19 CIFAR-10-C types (``family == "corruption"``), all with split ``fit``.

    Parameters
    ----------
    frame : DataFrame
        One row per (backbone, set) with columns ``set``, ``family``, ``split`` (notebook 05's CIFAR frame).
    exclude_types : list of str
        Corruption types to leave out (e.g. :data:`NOISE_TYPES`).
    require_all : bool
        Raise when a CIFAR-10-C type (not excluded) is missing; False takes the types present (smoke runs).

    Returns
    -------
    DataFrame
        The selected rows with ``split = "fit"`` and a ``type`` column; raises if a type of CIFAR-10-C is
        missing (not excluded) or if the types have different severity counts.
    """
    if not {"set", "family", "split"} <= set(frame.columns):
        raise InputValidationError("frame: expected columns 'set', 'family' and 'split'")
    single = frame[frame.family == "corruption"].copy()
    single["type"] = corruption_type(single.set)
    single = single[single.type.isin(CIFAR10C_NAMES) & ~single.type.isin(list(exclude_types))]
    wanted = [t for t in CIFAR10C_NAMES if t not in exclude_types]
    missing = sorted(set(wanted) - set(single.type))
    if missing and require_all:
        raise InputValidationError(
            f"frame: the CIFAR-10-C protocol needs every type at every severity; missing {missing} "
            "(list all 19 types in cifar_fit_names + cifar_heldout_names, heldout severities 1..5)"
        )
    counts = (
        single.groupby(["backbone", "type"]).size() if "backbone" in single else single.groupby("type").size()
    )
    if require_all and counts.nunique() != 1:
        raise InputValidationError(f"frame: types have different numbers of sets: {counts.to_dict()}")
    single["split"] = "fit"
    return single


def accuracy_grid(frame: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per corruption type (rows, CIFAR-10-C order) x backbone and severity (columns ``"resnet20 s1"``
    ...), in percent."""
    single = frame[frame.family == "corruption"].copy()
    single["type"] = corruption_type(single.set)
    single["severity"] = single.set.str.rsplit("-", n=1).str[1].astype(int)
    grid = single.pivot_table(index="type", columns=["backbone", "severity"], values="accuracy") * 100
    grid.columns = [f"{b} s{s}" for b, s in grid.columns]
    return grid.reindex([t for t in CIFAR10C_NAMES if t in grid.index])


def collapse_by_type(frame: pd.DataFrame, *, max_share: float = 0.3) -> pd.DataFrame:
    """Per corruption type and backbone: the largest share of predictions in one class over its severities
    (label-free; ~0.1 on a balanced 10-class set) and how many of its severities exceed ``max_share``."""
    single = frame[frame.family == "corruption"].copy()
    single["type"] = corruption_type(single.set)
    single["collapsed"] = single.top_class_share > max_share
    out = single.groupby(["type", "backbone"]).agg(
        max_share=("top_class_share", "max"), n_collapsed=("collapsed", "sum")
    )
    out = out.unstack("backbone")
    out.columns = [f"{b} {k}" for k, b in out.columns]
    return out.reindex([t for t in CIFAR10C_NAMES if t in out.index])


def paper_table(
    paper: Mapping[str, Mapping[str, float]],
    reports: Mapping[str, pd.DataFrame],
    *,
    backbone: str,
    heldout: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per measure: the paper's ρ / R² beside ours under each protocol (in-sample on the fit split of each
    report in ``reports``) and, from ``heldout`` (notebook 05's report), R² on held-out types and MAE (pp) on the
    held-out and unseen splits. Measures with no paper value get NaN in the paper columns."""
    measures = list(paper) + [m for m in next(iter(reports.values())).score.unique() if m not in paper]
    rows = []
    for m in measures:
        row = {"measure": m, "paper ρ": paper.get(m, {}).get("spearman_rho", np.nan),
               "paper R²": paper.get(m, {}).get("r2", np.nan)}  # fmt: skip
        for label, rep in reports.items():
            sub = rep[(rep.backbone == backbone) & (rep.score == m) & (rep.split == "fit")].set_index(
                "measure"
            )
            row[f"ρ {label}"] = float(sub.value.get("spearman_rho", np.nan))
            row[f"R² {label}"] = float(sub.value.get("r2", np.nan))
        if heldout is not None:
            sub = heldout[(heldout.backbone == backbone) & (heldout.score == m)]
            for split, meas, col in (("heldout", "r2", "R² held-out types"), ("heldout", "mae_pp", "MAE held-out (pp)"),
                                     ("unseen", "mae_pp", "MAE unseen (pp)")):  # fmt: skip
                v = sub[(sub.split == split) & (sub.measure == meas)].value
                row[col] = float(v.iloc[0]) if len(v) else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("measure")


def fit_temperature(
    logits: np.ndarray, labels: np.ndarray, *, bounds: tuple[float, float] = (0.05, 20.0)
) -> float:
    """Temperature scaling (Guo et al. 2017): the τ minimising the mean negative log-likelihood of
    ``softmax(logits / τ)`` on labelled data, searched on log τ within ``bounds``."""
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels)
    if z.ndim != 2 or len(z) != len(y) or not np.isfinite(z).all():
        raise InputValidationError(
            f"logits: expected finite (n, k) aligned with labels, got {z.shape} / {y.shape}"
        )

    def nll(log_t: float) -> float:
        return float(-log_softmax(z / np.exp(log_t), axis=1)[np.arange(len(y)), y].mean())

    res = minimize_scalar(nll, bounds=tuple(np.log(bounds)), method="bounded", options={"xatol": 1e-6})
    return float(np.exp(res.x))


def paper_protocol(
    frame: pd.DataFrame,
    report: pd.DataFrame,
    paper: Mapping[str, Mapping[str, float]],
    *,
    paper_backbone: str = "resnet20",
    require_all: bool = True,
    measures: Sequence[str] | None = None,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, list[str]]:
    """Notebook 05's paper-protocol tables for one setup's measure frame.

    Fits every measure in-sample on the CIFAR-10-C sets (:func:`cifar10c_frame`) with and without
    :data:`NOISE_TYPES` and builds :func:`paper_table` per backbone (paper values for ``paper_backbone`` only),
    with the held-out protocol's columns from ``report`` (:func:`~.measures.correlation_table` of ``frame``).
    ``measures`` defaults to every measure of :data:`~.measures.MEASURES`.

    Returns
    -------
    (tables, selected, labels)
        ``tables[backbone]``, the selected 95-set frame and the two protocol labels (``"in-sample (95 sets)"``,
        ``"in-sample, no noise (75 sets)"``, with the actual counts).
    """
    from helpers.experiments.p5_mde.measures import MEASURES, correlation_table

    measures = list(MEASURES if measures is None else measures)
    full = cifar10c_frame(frame, require_all=require_all)
    no_noise = cifar10c_frame(frame, exclude_types=NOISE_TYPES, require_all=require_all)
    n_all, n_clean = (int(f.groupby("backbone").size().iloc[0]) for f in (full, no_noise))
    reports = {
        f"in-sample ({n_all} sets)": correlation_table(full, measures=measures),
        f"in-sample, no noise ({n_clean} sets)": correlation_table(no_noise, measures=measures),
    }
    tables = {
        bb: paper_table(paper if bb == paper_backbone else {}, reports, backbone=bb, heldout=report)
        for bb in full.backbone.unique()
    }
    return tables, full, list(reports)


def temperature_scaled_report(
    logit_sets: Sequence[np.ndarray],
    accuracies: Sequence[float],
    *,
    reference_logits: np.ndarray,
    reference_labels: np.ndarray,
    T: float = 1.0,
) -> tuple[float, pd.DataFrame]:
    """In-sample ρ / R² of MDE, AvgEnergy and ConfScore on ``logits / τ``, τ from :func:`fit_temperature` on the
    labelled reference (a test of whether the logit scale of a checkpoint explains MDE's fit).

    Returns ``(τ, report)`` with the report rows of :func:`~helpers.estimators.metaset.compare_measures` for the
    fit split, measures ``spearman_rho`` and ``r2``.
    """
    from scipy.special import softmax

    from helpers.estimators import average_energy, mde
    from helpers.estimators.metaset import compare_measures

    tau = fit_temperature(reference_logits, reference_labels)
    z = [np.asarray(lg) / tau for lg in logit_sets]
    scores = {
        "MDE (τ-scaled)": [mde(lg, T=T, normalize=True) for lg in z],
        "AvgEnergy (τ-scaled)": [average_energy(lg, T=T) for lg in z],
        "ConfScore (τ-scaled)": [float(softmax(lg, axis=1).max(1).mean()) for lg in z],
    }
    rep = compare_measures(scores, np.asarray(accuracies), np.full(len(z), "fit"))
    return tau, rep[(rep.split == "fit") & rep.measure.isin(["spearman_rho", "r2"])]
