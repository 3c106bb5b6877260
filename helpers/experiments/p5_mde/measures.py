"""Set-level measures, meta-set tables and stress tests for the Meta-Distribution Energy notebook (paper 5).

Every measure is a scalar per set that goes through the same meta-set regression
(:class:`helpers.estimators.metaset.MetaSetRegression`, paper 5 Algorithm 1):

The paper's names are display names of estimators registered in :mod:`helpers.estimators`
(:data:`MEASURE_ESTIMATORS`, the one table that maps them):

==============  ===========================================================================================
measure         definition (registered estimator)
==============  ===========================================================================================
ConfScore       mean max-softmax probability (Hendrycks & Gimpel 2017)
Entropy         mean negative entropy Σ p log p
ATC             ATC-NE accuracy estimate (negative-entropy score, the variant of paper 5 Eq. 14-15), threshold
                from the |FP−FN| sweep on the labelled reference set
ATC-MC          ATC with the max-softmax (MC) score (Garg et al. 2022's other variant), same threshold sweep
DoC             reference accuracy + mean target confidence − mean reference confidence
AvgEnergy       −mean free energy at temperature T (paper 5 App. B, Eq. 16)
MDE             Meta-Distribution Energy at temperature T (paper 5 Eq. 5); ``normalize=True`` subtracts log N
NuclearNorm     normalised nuclear norm of the softmax matrix (Deng et al. 2023)
Frechet         Fréchet distance between reference and target features (Deng & Zheng 2021)
COT             1 − COT error (optimal transport of target probabilities to the reference label distribution)
Agreement       agreement rate of the model with a second model (Jiang et al. 2022)
MaNo            normalised entry-wise 4-norm of the softmax / Taylor-normalised logits (Xie et al. 2024)
SoftmaxCorr     cosine similarity of PᵀP/N with a diagonal prior (SoftmaxCorr, TMLR 2024)
COTT            share of examples whose COT transport cost is below the reference's threshold (Lu et al. 2023)
Dispersion      log between-class dispersion of penultimate features under pseudo-labels (Xie et al. 2023);
                NaN where a setup gives no features or a set is predicted as one class (its score is −inf)
==============  ===========================================================================================

MDE grows with the set size N (it carries a log N term, DESIGN.md "Pitfalls"): this module uses the normalised
variant by default, which for sets of one size differs from the raw MDE by a constant and therefore gives
identical correlations, regressions and MAEs, and which stays comparable when set sizes differ (class-imbalance
subsets, natural shifts of other sizes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.estimators import get_estimator, mde
from helpers.estimators.metaset import MetaSetRegression, compare_measures
from helpers.validation import check_logits

__all__ = [
    "PAPER_MEASURES",
    "NEW_MEASURES",
    "MEASURES",
    "MEASURE_ESTIMATORS",
    "PAPER_CIFAR10_RESNET20",
    "Reference",
    "fit_reference",
    "set_measures",
    "correlation_table",
    "mae_table",
    "fit_regressions",
    "temperature_sweep",
    "imbalance_stress",
    "mae_ranking",
    "scatter_with_fit",
    "collect_outputs",
    "measure_frame",
    "collapse_analysis",
    "metaset_frame",
]

#: the code behind the cached model outputs: the models, their training and the data and shifts they read
#: (its :func:`~helpers.cache.code_version` joins every ``05_mde`` key, so an edit recomputes the outputs)
OUTPUTS_CODE = ("helpers.models", "helpers.training", "helpers.data")

#: The one table of measures: the paper's display name (table columns) -> the estimator registered under that name
#: in :mod:`helpers.estimators` (:func:`~helpers.estimators.get_estimator`) and what it reads.  ``"MDE"`` is the
#: normalised MDE (``mde_normalized``) unless ``normalize_mde=False`` (then ``mde``); AvgEnergy and MDE take ``T``.
MEASURE_ESTIMATORS: dict[str, str] = {
    "ConfScore": "average_confidence",
    "Entropy": "average_negative_entropy",
    "ATC": "atc_ne",
    "ATC-MC": "atc_mc",
    "DoC": "doc",
    "AvgEnergy": "average_energy",
    "MDE": "mde_normalized",
    "NuclearNorm": "nuclear_norm",
    "Frechet": "frechet",
    "COT": "cot",
    "Agreement": "agreement",
    "MaNo": "mano",
    "SoftmaxCorr": "softmax_corr",
    "COTT": "cott",
    "Dispersion": "dispersion",
}
MEASURES = tuple(MEASURE_ESTIMATORS)
#: the measures of paper 5's comparison (its Tables 1-4), the set its claims are decided over; the methods of
#: 2023-2025 (MaNo, SoftmaxCorr, COTT, Dispersion) joined later and are compared by claims of their own
PAPER_MEASURES = MEASURES[: MEASURES.index("Agreement") + 1]
NEW_MEASURES = MEASURES[len(PAPER_MEASURES):]
_LABELLED = ("ATC", "ATC-MC", "DoC", "COT", "COTT")  # fitted on the reference's logits and labels
_TEMPERATURE = ("AvgEnergy", "MDE")

# Paper 5, Table 1/2, CIFAR-10, ResNet-20 (Spearman ρ, R²), fitted in-sample on CIFAR-10-C.
PAPER_CIFAR10_RESNET20 = {
    "MDE": {"spearman_rho": 0.992, "r2": 0.964},
    "ConfScore": {"spearman_rho": 0.991, "r2": 0.953},
    "ATC": {"spearman_rho": 0.962, "r2": 0.890},
    "NuclearNorm": {"spearman_rho": 0.996, "r2": 0.959},
    "AvgEnergy": {"spearman_rho": 0.989, "r2": 0.955},
}


@dataclass
class Reference:
    """The estimators of :data:`MEASURE_ESTIMATORS` fitted on the labelled, unshifted reference set.

    Attributes
    ----------
    estimators : dict display name -> fitted estimator
        Reference-free measures (confidence, entropy, energy, MDE, nuclear norm, agreement) are fitted too (they
        record the class count and check the target against it).
    frechet_input : {"features", "logits"}
        What the Fréchet Gaussian was fitted on.
    """

    estimators: dict
    frechet_input: str

    @property
    def atc_threshold(self) -> float:
        """Threshold of ATC's negative-entropy score (the paper's ATC row)."""
        return float(self.estimators["ATC"].threshold_)

    @property
    def atc_threshold_mc(self) -> float:
        """Threshold of ATC's max-softmax score (ATC-MC)."""
        return float(self.estimators["ATC-MC"].threshold_)


def fit_reference(*, logits, labels, features=None, T: float = 1.0, normalize_mde: bool = True) -> Reference:
    """Fit every measure's estimator on the labelled reference: ATC's thresholds (NE and MC scores), DoC's reference
    accuracy and confidence, COT's label distribution, Fréchet's Gaussian, and the class count of the others.

    Parameters
    ----------
    logits : array (n, K)
        Model logits on the labelled reference (in-distribution validation) set.
    labels : array of int (n,)
    features : array (n, d), optional
        Penultimate features for the Fréchet distance; default: the logits are used as features.
    T : float
        Temperature of AvgEnergy and MDE (one temperature for meta-set and test sets).
    normalize_mde : bool
        ``MDE`` is MDE − log N (``mde_normalized``, see the module docstring); ``False`` gives the raw MDE.
    """
    z = check_logits(logits, "logits")
    y = np.asarray(labels)
    if y.shape != (z.shape[0],):
        raise InputValidationError(f"labels: expected shape ({z.shape[0]},), got {y.shape}")
    fitted = {}
    for name, registered in MEASURE_ESTIMATORS.items():
        if name == "MDE" and not normalize_mde:
            registered = "mde"
        est = get_estimator(registered, **({"T": T} if name in _TEMPERATURE else {}))
        if name in _LABELLED:
            est.fit(logits=z, labels=y)
        elif name == "Frechet":
            est.fit(features=np.asarray(features if features is not None else z, dtype=np.float64))
        else:
            est.fit(logits=z)
        fitted[name] = est
    return Reference(fitted, "features" if features is not None else "logits")


def _value(estimate) -> float:
    """The measure's scalar: the raw score of a score-type estimator, else the unclipped accuracy estimate."""
    if estimate.score is not None:
        return float(estimate.score)
    return float(estimate.details.get("raw", estimate.accuracy))


def set_measures(reference: Reference, *, logits, features=None, other_logits=None) -> dict[str, float]:
    """All :data:`MEASURES` of one unlabelled set (``Agreement`` is NaN without ``other_logits``).

    Every measure is its registered estimator's estimate (:data:`MEASURE_ESTIMATORS`), fitted by
    :func:`fit_reference` on the same model's reference outputs (which also fixes ``T`` and the MDE variant).

    Parameters
    ----------
    reference : Reference
        From :func:`fit_reference` (same model).
    logits : array (N, K)
    features : array (N, d), optional
        Needed when the reference was fitted on features.
    other_logits : array (N, K), optional
        A second model's logits on the same examples, for the agreement score.
    """
    z = check_logits(logits, "logits")
    if reference.frechet_input == "features" and features is None:
        raise InputValidationError(
            "features: the reference Fréchet Gaussian was fitted on features; pass them"
        )
    out = {}
    for name, est in reference.estimators.items():
        if name == "Frechet":
            x = features if reference.frechet_input == "features" else z
            out[name] = _value(est.measure(features=np.asarray(x, dtype=np.float64)))
        elif name == "Agreement":
            out[name] = (
                np.nan if other_logits is None else _value(est.measure(logits=z, other_logits=other_logits))
            )
        elif name == "Dispersion":  # −inf when the set is predicted as one class (no dispersion): left out as NaN
            value = np.nan if features is None else _value(est.measure(logits=z, features=features))
            out[name] = value if np.isfinite(value) else np.nan
        else:
            out[name] = _value(est.measure(logits=z))
    return out


# ------------------------------------------------------------------------------------------------------ tables


def _split_frames(frame: pd.DataFrame, measures: Sequence[str]) -> list[str]:
    missing = [c for c in ("accuracy", "split", *measures) if c not in frame.columns]
    if missing:
        raise InputValidationError(f"frame: missing column(s) {missing}")
    return [m for m in measures if frame[m].notna().all()]


def correlation_table(
    frame: pd.DataFrame, *, measures: Sequence[str] = MEASURES, group: Sequence[str] = ("setup", "backbone")
) -> pd.DataFrame:
    """R², Pearson r, Spearman ρ (fit and held-out splits) and MAE (every split) per group and measure.

    ``frame`` holds one row per set with columns ``accuracy`` (fraction), ``split`` and one column per measure;
    the regression of each measure is fitted on the ``fit`` rows of its group (paper 5 Algorithm 1) with
    :func:`helpers.estimators.metaset.compare_measures`.  Measures with missing values in a group are skipped.

    Returns
    -------
    DataFrame with columns ``*group, score, split, measure, value, n_sets``.
    """
    out = []
    for keys, sub in frame.groupby(list(group), sort=False):
        ms = _split_frames(sub, measures)
        rep = compare_measures(sub[ms], sub["accuracy"].to_numpy(), sub["split"].to_numpy())
        for g, k in zip(group, keys if isinstance(keys, tuple) else (keys,)):
            rep.insert(0, g, k)
        out.append(rep)
    return pd.concat(out, ignore_index=True)[[*group, "score", "split", "measure", "value", "n_sets"]]


def mae_table(report: pd.DataFrame, *, splits: Sequence[str] = ("heldout", "unseen")) -> pd.DataFrame:
    """Wide MAE table in percent points: rows (setup, backbone, split), columns measures (paper 5 Tables 3/4)."""
    sub = report[(report.measure == "mae_pp") & report.split.isin(list(splits))]
    idx = [c for c in ("setup", "backbone") if c in sub.columns] + ["split"]
    return sub.pivot_table(index=idx, columns="score", values="value", sort=False)


def fit_regressions(
    frame: pd.DataFrame, *, measures: Sequence[str] = MEASURES
) -> dict[str, MetaSetRegression]:
    """One fitted :class:`MetaSetRegression` per measure on the ``fit`` rows of ``frame`` (one setup/backbone)."""
    fit = frame[frame.split == "fit"]
    return {
        m: MetaSetRegression().fit(scores=fit[m].to_numpy(), accuracies=fit["accuracy"].to_numpy())
        for m in _split_frames(fit, measures)
    }


def mae_ranking(report: pd.DataFrame, *, split: str = "unseen") -> pd.Series:
    """Measures ranked by their mean MAE (percent points) over the groups of ``report`` on one split."""
    sub = report[(report.measure == "mae_pp") & (report.split == split)]
    return sub.groupby("score")["value"].mean().sort_values()


def temperature_sweep(
    logit_sets: Sequence[np.ndarray],
    accuracies: Sequence[float],
    splits: Sequence[str],
    *,
    temperatures: Sequence[float] = (0.01, 0.5, 1, 2, 5, 10, 100),
    normalize: bool = True,
) -> pd.DataFrame:
    """MDE's R², r, ρ (fit and held-out) and MAE at each temperature (paper 5 Table 9); one T for all sets.

    Returns
    -------
    DataFrame with columns ``T, split, measure, value``.
    """
    if not (len(logit_sets) == len(accuracies) == len(splits)):
        raise InputValidationError(
            f"logit_sets, accuracies, splits: expected equal lengths, got {len(logit_sets)}, "
            f"{len(accuracies)}, {len(splits)}"
        )
    rows = []
    for T in temperatures:
        scores = {"MDE": [mde(z, T=float(T), normalize=normalize) for z in logit_sets]}
        rep = compare_measures(scores, np.asarray(accuracies), np.asarray(splits))
        rep.insert(0, "T", float(T))
        rows.append(rep[["T", "split", "measure", "value"]])
    return pd.concat(rows, ignore_index=True)


def imbalance_stress(
    bases: Mapping[str, Mapping[str, np.ndarray]],
    subsets: Callable[[np.ndarray], Mapping[float, np.ndarray]],
    reference: Reference,
    regressions: Mapping[str, MetaSetRegression],
) -> pd.DataFrame:
    """Absolute error of every measure's prediction on long-tailed subsets of shifted sets (paper 5 Fig. 3 right).

    Parameters
    ----------
    bases : mapping set name → {"logits", "labels", optional "features", "other_logits"}
        The balanced shifted sets (paper: CIFAR-10-C at severity 2).
    subsets : callable labels → {ratio: indices}
        E.g. ``lambda y: imbalance_subsets(y, ratios, seed=0)``.
    reference, regressions
        From :func:`fit_reference` and :func:`fit_regressions` (fitted on the balanced meta-set).

    Returns
    -------
    DataFrame with columns ``set, ratio, n, accuracy, measure, predicted, abs_error_pp``.
    """
    rows = []
    for name, arrays in bases.items():
        y = np.asarray(arrays["labels"])
        for ratio, idx in subsets(y).items():
            take = {k: (np.asarray(v)[idx] if v is not None else None) for k, v in arrays.items()}
            vals = set_measures(
                reference,
                logits=take["logits"],
                features=take.get("features"),
                other_logits=take.get("other_logits"),
            )
            acc = float((take["logits"].argmax(1) == take["labels"]).mean())
            for m, reg in regressions.items():
                pred = float(reg.predict([vals[m]])[0])
                rows.append(
                    {
                        "set": name,
                        "ratio": ratio,
                        "n": len(idx),
                        "accuracy": acc,
                        "measure": m,
                        "predicted": pred,
                        "abs_error_pp": 100 * abs(pred - acc),
                    }
                )
    return pd.DataFrame(rows)


def scatter_with_fit(ax, frame: pd.DataFrame, *, measure: str = "MDE", title: str = "") -> None:
    """Scatter of ``measure`` vs accuracy (percent) coloured by split, with the line fitted on the fit split."""
    colours = {"fit": "tab:blue", "heldout": "tab:orange", "unseen": "tab:red"}
    for split, sub in frame.groupby("split", sort=False):
        ax.scatter(
            sub[measure], 100 * sub["accuracy"], s=14, alpha=0.8, c=colours.get(split, "grey"), label=split
        )
    fit = frame[frame.split == "fit"]
    reg = MetaSetRegression().fit(scores=fit[measure].to_numpy(), accuracies=fit["accuracy"].to_numpy())
    xs = np.linspace(frame[measure].min(), frame[measure].max(), 50)
    ax.plot(xs, 100 * reg.predict(xs), color="black", lw=1)
    acc = 100 * frame["accuracy"].to_numpy()
    pad = 0.05 * max(float(np.ptp(acc)), 1.0)
    ax.set_ylim(max(0.0, acc.min() - pad), min(100.0, acc.max() + pad))  # the data's range within [0, 100] %
    ax.set(
        xlabel=measure,
        ylabel="accuracy (%)",
        title=f"{title}\nfit R²={reg.fit_r2_:.3f} ρ={reg.fit_spearman_rho_:.3f}",
    )
    ax.legend(fontsize=7)


# ---------------------------------------------------------------------------------------------------- pipeline


def collect_outputs(
    sets: Sequence,
    *,
    inputs: Callable[[object], object],
    predictors: Mapping[str, Callable[[object], Mapping[str, np.ndarray]]],
    key: Mapping,
    progress: bool = True,
) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """Model outputs of every predictor on every set, cached on disk per (predictor, set).

    Parameters
    ----------
    sets : sequence of ShiftSpec
        The sets (see :mod:`helpers.data.metaset`); ``spec.name`` and ``spec.key()`` enter the cache key.
    inputs : callable spec → model inputs
        Builds the set's inputs (corrupted images, perturbed texts, a natural-shift set); called at most once per
        set and only when some predictor's outputs are not cached yet.
    predictors : mapping name → callable inputs → {"logits", optional "features"}
    key : mapping
        Cache key parts naming the data, subsample and models (e.g. notebook, seed, set size, training run).

    Returns
    -------
    dict predictor → set name → arrays
    """
    from helpers.cache import cached_arrays

    try:
        from helpers.progress import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    out: dict[str, dict[str, dict[str, np.ndarray]]] = {p: {} for p in predictors}
    it = sets if not (progress and tqdm) else tqdm(sets, desc="sets", leave=False)
    for spec in it:
        memo: dict[str, object] = {}

        def data(spec=spec, memo=memo):
            if "x" not in memo:
                memo["x"] = inputs(spec)
            return memo["x"]

        for name, fn in predictors.items():
            parts = {**dict(key), "predictor": name, "set": spec.name, **spec.key()}
            out[name][spec.name] = cached_arrays(
                "05_mde", parts, lambda fn=fn: dict(fn(data())), code=OUTPUTS_CODE
            )
    return out


def measure_frame(
    outputs: Mapping[str, Mapping[str, Mapping[str, np.ndarray]]],
    sets: Sequence,
    *,
    labels: Callable[[object], np.ndarray],
    references: Mapping[str, Reference],
    partners: Mapping[str, str] | None = None,
    setup: str = "",
) -> pd.DataFrame:
    """One row per (backbone, set): setup, backbone, set, split, family, n, accuracy and every measure.

    ``labels(spec)`` gives the true labels of a set (used only for the accuracy); ``partners`` maps a backbone to
    the backbone whose predictions give its agreement score.
    """
    partners = dict(partners or {})
    rows = []
    for backbone, per_set in outputs.items():
        for spec in sets:
            arr = per_set[spec.name]
            other = outputs[partners[backbone]][spec.name]["logits"] if backbone in partners else None
            vals = set_measures(
                references[backbone],
                logits=arr["logits"],
                features=arr.get("features"),
                other_logits=other,
            )
            y = np.asarray(labels(spec))
            pred = arr["logits"].argmax(1)
            acc = float((pred == y).mean())
            rows.append(
                {
                    "setup": setup,
                    "backbone": backbone,
                    "set": spec.name,
                    "split": spec.split,
                    "family": spec.family,
                    "n": len(y),
                    "accuracy": acc,
                    "top_class_share": float(np.bincount(pred).max() / len(pred)),
                    **vals,
                }
            )
    return pd.DataFrame(rows)


def collapse_analysis(
    frame: pd.DataFrame, *, measures: Sequence[str] = MEASURES, max_share: float = 0.3
) -> pd.DataFrame:
    """In-sample R² of each measure's line on all fit sets vs on the fit sets without prediction collapse.

    A set "collapses" when more than ``max_share`` of its predictions fall in one class (label-free: computed from
    predictions only; a balanced 10-class set has about 0.1).  Heavy noise or fog can push a CIFAR network to
    predict one class for most images with high confidence, which breaks confidence- and energy-based measures
    but not measures of prediction diversity (nuclear norm, COT).

    ``frame`` has one setup/backbone with columns ``split``, ``accuracy``, ``top_class_share`` and the measures.
    Returns a DataFrame indexed by measure with ``r2_all``, ``r2_no_collapse``, ``n_all``, ``n_no_collapse``.
    """
    if "top_class_share" not in frame.columns:
        raise InputValidationError("frame: missing column 'top_class_share' (see measure_frame)")
    fit = frame[frame.split == "fit"]
    kept = fit[fit.top_class_share <= max_share]
    rows = {}
    for m in _split_frames(fit, measures):
        r_all = MetaSetRegression().fit(scores=fit[m].to_numpy(), accuracies=fit.accuracy.to_numpy()).fit_r2_
        r_kept = (
            MetaSetRegression().fit(scores=kept[m].to_numpy(), accuracies=kept.accuracy.to_numpy()).fit_r2_
            if len(kept) >= 3 and np.ptp(kept[m]) > 0
            else np.nan
        )
        rows[m] = {"r2_all": r_all, "r2_no_collapse": r_kept, "n_all": len(fit), "n_no_collapse": len(kept)}
    return pd.DataFrame.from_dict(rows, orient="index")


def metaset_frame(
    sets: Sequence,
    *,
    inputs: Callable[[object], object],
    labels: Callable[[object], np.ndarray],
    predictors: Mapping[str, Callable[[object], Mapping[str, np.ndarray]]],
    reference_inputs: object,
    reference_labels: np.ndarray,
    key: Mapping,
    setup: str,
    partners: Mapping[str, str] | None = None,
    T: float = 1.0,
    progress: bool = True,
) -> tuple[pd.DataFrame, dict, dict]:
    """The whole per-setup pipeline: cached outputs on every set and on the reference, references, measures.

    Combines :func:`collect_outputs` (sets and the clean labelled reference, each cached per predictor),
    :func:`fit_reference` per predictor (on features when the predictor returns them) and :func:`measure_frame`.
    ``partners`` defaults to pairing each predictor with the next one (cyclically) for the agreement score, none
    when there is a single predictor.

    Returns
    -------
    (frame, outputs, references)
        The measure frame, ``outputs[predictor][set name]`` arrays and the fitted :class:`Reference` per predictor.
    """
    from helpers.data.metaset import ShiftSpec

    names = list(predictors)
    if partners is None:
        partners = {b: names[(i + 1) % len(names)] for i, b in enumerate(names)} if len(names) > 1 else {}
    outputs = collect_outputs(sets, inputs=inputs, predictors=predictors, key=key, progress=progress)
    ref_spec = ShiftSpec("reference", "reference", "clean", (), 0)
    ref_out = collect_outputs(
        [ref_spec],
        inputs=lambda s: reference_inputs,
        predictors=predictors,
        key={**key, "part": "reference"},
        progress=False,
    )
    references = {
        b: fit_reference(
            logits=ref_out[b]["reference"]["logits"],
            labels=np.asarray(reference_labels),
            features=ref_out[b]["reference"].get("features"),
            T=T,
        )
        for b in names
    }
    frame = measure_frame(outputs, sets, labels=labels, references=references, partners=partners, setup=setup)
    for b in names:
        frame.loc[frame.backbone == b, "reference_accuracy"] = float(
            (ref_out[b]["reference"]["logits"].argmax(1) == np.asarray(reference_labels)).mean()
        )
    return frame, outputs, references
