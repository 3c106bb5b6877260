"""Set-level measures, meta-set tables and stress tests for the Meta-Distribution Energy notebook (paper 5).

Every measure is a scalar per set that goes through the same meta-set regression
(:class:`helpers.estimators.metaset.MetaSetRegression`, paper 5 Algorithm 1):

==============  ===========================================================================================
measure         definition (functions from :mod:`helpers.estimators`)
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
from helpers.estimators import (
    FrechetDistance,
    agreement_score,
    atc_accuracy,
    atc_scores,
    atc_threshold,
    average_confidence,
    average_energy,
    average_negative_entropy,
    cot_error,
    doc_accuracy,
    label_distribution,
    mde,
    nuclear_norm_score,
    softmax,
)
from helpers.estimators.metaset import MetaSetRegression, compare_measures
from helpers.validation import check_logits

__all__ = [
    "MEASURES",
    "PAPER_CIFAR10_RESNET20",
    "Reference",
    "fit_reference",
    "set_measures",
    "features_and_logits",
    "word_model_outputs",
    "correlation_table",
    "mae_table",
    "fit_regressions",
    "temperature_sweep",
    "imbalance_stress",
    "mae_ranking",
    "scatter_with_fit",
    "collect_outputs",
    "measure_frame",
    "train_text_classifier",
    "collapse_analysis",
    "metaset_frame",
    "fit_logistic_head",
    "minilm_outputs",
    "TEXT_MODELS",
]

MEASURES = (
    "ConfScore",
    "Entropy",
    "ATC",
    "ATC-MC",
    "DoC",
    "AvgEnergy",
    "MDE",
    "NuclearNorm",
    "Frechet",
    "COT",
    "Agreement",
)

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
    """What the reference-based measures keep from the labelled, unshifted reference set."""

    probs: np.ndarray
    labels: np.ndarray
    atc_threshold: float
    label_distribution: np.ndarray
    frechet: FrechetDistance
    frechet_input: str
    atc_threshold_mc: float = float("nan")


def fit_reference(*, logits, labels, features=None) -> Reference:
    """Fit ATC's thresholds (NE and MC scores), DoC's reference, COT's label distribution and Fréchet's Gaussian on the reference.

    Parameters
    ----------
    logits : array (n, K)
        Model logits on the labelled reference (in-distribution validation) set.
    labels : array of int (n,)
    features : array (n, d), optional
        Penultimate features for the Fréchet distance; default: the logits are used as features.
    """
    z = check_logits(logits, "logits")
    y = np.asarray(labels)
    if y.shape != (z.shape[0],):
        raise InputValidationError(f"labels: expected shape ({z.shape[0]},), got {y.shape}")
    p = softmax(z)
    correct = p.argmax(1) == y
    thr = atc_threshold(atc_scores(p, score="ne"), correct)
    thr_mc = atc_threshold(atc_scores(p, score="mc"), correct)
    feats = features if features is not None else z
    fre = FrechetDistance().fit(features=np.asarray(feats, dtype=np.float64))
    return Reference(
        p,
        y,
        float(thr),
        label_distribution(y, z.shape[1]),
        fre,
        "features" if features is not None else "logits",
        float(thr_mc),
    )


def set_measures(
    reference: Reference,
    *,
    logits,
    features=None,
    other_logits=None,
    T: float = 1.0,
    normalize_mde: bool = True,
) -> dict[str, float]:
    """All :data:`MEASURES` of one unlabelled set (``Agreement`` is NaN without ``other_logits``).

    Parameters
    ----------
    reference : Reference
        From :func:`fit_reference` (same model).
    logits : array (N, K)
    features : array (N, d), optional
        Needed when the reference was fitted on features.
    other_logits : array (N, K), optional
        A second model's logits on the same examples, for the agreement score.
    T : float
        Temperature of AvgEnergy and MDE (one temperature for meta-set and test sets).
    normalize_mde : bool
        Subtract log N from MDE (see the module docstring).
    """
    z = check_logits(logits, "logits")
    p = softmax(z)
    if reference.frechet_input == "features":
        if features is None:
            raise InputValidationError(
                "features: the reference Fréchet Gaussian was fitted on features; pass them"
            )
        fre = reference.frechet.estimate(features=np.asarray(features, dtype=np.float64)).score
    else:
        fre = reference.frechet.estimate(features=z.astype(np.float64)).score
    agree = (
        np.nan if other_logits is None else agreement_score(z.argmax(1), np.asarray(other_logits).argmax(1))
    )
    return {
        "ConfScore": average_confidence(p),
        "Entropy": average_negative_entropy(p),
        "ATC": atc_accuracy(atc_scores(p, score="ne"), reference.atc_threshold),
        "ATC-MC": atc_accuracy(atc_scores(p, score="mc"), reference.atc_threshold_mc),
        "DoC": doc_accuracy(
            reference_probs=reference.probs, reference_labels=reference.labels, target_probs=p
        ),
        "AvgEnergy": average_energy(z, T=T),
        "MDE": mde(z, T=T, normalize=normalize_mde),
        "NuclearNorm": nuclear_norm_score(p),
        "Frechet": float(fre),
        "COT": 1.0 - cot_error(p, reference.label_distribution),
        "Agreement": float(agree),
    }


def features_and_logits(
    model, x, *, head: Callable | None = None, batch_size: int = 500, preprocess: Callable | None = None
) -> dict[str, np.ndarray]:
    """Penultimate features and logits of ``model`` on ``x`` in one pass, in order (eval mode, no gradients).

    ``model.features(x)`` gives the features and ``head`` (default ``model.linear`` or ``model.classifier``) the
    logits from them; ``preprocess`` maps a numpy batch to the model's input tensor (default ``torch.as_tensor``)
    or to a mapping of keyword inputs (e.g. a MiniLM tokenizer's output), passed as ``model.features(**batch)``.
    Batches go to the device of the model's parameters; the arrays come back on the CPU.
    """
    import torch

    head = head or getattr(model, "linear", None) or getattr(model, "classifier", None)
    if head is None or not hasattr(model, "features"):
        raise InputValidationError(
            "model: expected .features() and a .linear/.classifier head, or pass head="
        )
    if batch_size < 1:
        raise InputValidationError(f"batch_size: expected a positive integer, got {batch_size!r}")
    prep = preprocess or (lambda b: torch.as_tensor(np.asarray(b, dtype=np.float32)))
    model.eval()
    param = next(model.parameters(), None)
    dev = param.device if param is not None else torch.device("cpu")  # e.g. left on the GPU by training.fit
    feats, logits = [], []
    with torch.inference_mode():
        for i in range(0, len(x), batch_size):
            batch = prep(x[i : i + batch_size])
            if isinstance(batch, Mapping):
                f = model.features(**{k: v.to(dev) for k, v in batch.items()})
            else:
                f = model.features(batch.to(dev))
            feats.append(f.float().cpu().numpy())
            logits.append(head(f).float().cpu().numpy())
    return {"features": np.concatenate(feats), "logits": np.concatenate(logits)}


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
    *,
    T: float = 1.0,
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
    T : float
        The meta-set's temperature.

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
                T=T,
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
        The sets (see :mod:`helpers.metaset_data`); ``spec.name`` and ``spec.key()`` enter the cache key.
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
        from tqdm.auto import tqdm
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
            out[name][spec.name] = cached_arrays("05_mde", parts, lambda fn=fn: dict(fn(data())))
    return out


def measure_frame(
    outputs: Mapping[str, Mapping[str, Mapping[str, np.ndarray]]],
    sets: Sequence,
    *,
    labels: Callable[[object], np.ndarray],
    references: Mapping[str, Reference],
    partners: Mapping[str, str] | None = None,
    setup: str = "",
    T: float = 1.0,
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
                T=T,
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


TEXT_MODELS = ("bow", "embsum", "textcnn", "lstm", "minilm", "minilm-frozen")


def fit_logistic_head(linear, features, labels, *, C: float = 1.0) -> object:
    """Fit ``linear`` (a ``torch.nn.Linear(d, K)``) as an L2-regularised logistic regression on fixed features.

    scikit-learn's ``LogisticRegression(C=C)`` is fitted on the standardised ``features``; the standardisation is
    folded into the weights, and the logits are centred over the classes (for K = 2 they are ``±s/2`` with ``s``
    the log-odds): softmax probabilities are exactly the regression's, and the free energy −logsumexp(z) — hence
    MDE and Avg Energy — does not depend on an arbitrary per-class offset (the L2 penalty of a multinomial
    regression also drives the logits' class-sum to zero).  Returns ``linear``, updated in place.
    """
    import torch
    from sklearn.linear_model import LogisticRegression

    f = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels).astype(int)
    k = int(linear.out_features)
    if f.ndim != 2 or f.shape[1] != linear.in_features or y.shape != (f.shape[0],):
        raise InputValidationError(
            f"features, labels: expected shapes (n, {linear.in_features}) and (n,), got {f.shape} and {y.shape}"
        )
    if y.min() < 0 or y.max() >= k or len(np.unique(y)) < 2:
        raise InputValidationError(f"labels: expected at least two classes in 0..{k - 1}, got {np.unique(y)}")
    mu, sd = f.mean(0), f.std(0) + 1e-8
    reg = LogisticRegression(C=C, max_iter=2000).fit((f - mu) / sd, y)
    w = np.zeros((k, f.shape[1]))
    b = np.zeros(k)
    if reg.coef_.shape[0] == 1:  # binary: log-odds of class classes_[1] against classes_[0]
        w[reg.classes_[1]], b[reg.classes_[1]] = reg.coef_[0], reg.intercept_[0]
    else:
        w[reg.classes_], b[reg.classes_] = reg.coef_, reg.intercept_
    w, b = w / sd, b - (w / sd) @ mu
    w, b = w - w.mean(0), b - b.mean()
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(w, dtype=linear.weight.dtype))
        linear.bias.copy_(torch.as_tensor(b, dtype=linear.bias.dtype))
    return linear


def minilm_outputs(
    model, collate, *, batch_size: int = 64
) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
    """texts → {"features", "logits"} of a MiniLM classifier, in input order.

    Two exact speed-ups for long reviews on a CPU: each text is cut to its first ``2 * collate.max_length``
    whitespace words before tokenising (every word gives at least one WordPiece, so the kept tokens are the same),
    and texts are batched in order of length (less padding; padding is masked, so outputs do not change).
    """
    cap = 2 * int(collate.max_length)

    def outputs(xs: Sequence[str]) -> dict[str, np.ndarray]:
        xs = [" ".join(str(t).split()[:cap]) for t in xs]
        order = np.argsort([len(t) for t in xs], kind="stable")
        out = features_and_logits(
            model, [xs[i] for i in order], batch_size=batch_size, preprocess=collate.encode
        )
        inv = np.empty_like(order)
        inv[order] = np.arange(len(order))
        return {k: v[inv] for k, v in out.items()}

    return outputs


def _train_minilm(
    name, texts, labels, *, epochs, max_steps, lr, batch_size, max_len, seed, checkpoint_dir, cache_key
):
    from helpers.cache import cached_arrays
    from helpers.models import build_model
    from helpers.models.minilm import MiniLMCollator
    from helpers.training import fit

    frozen = name == "minilm-frozen"
    model = build_model("minilm", seed=seed, num_labels=2, freeze_encoder=frozen)
    collate = MiniLMCollator(model.tokenizer, max_length=max_len)
    outputs = minilm_outputs(model, collate)
    if frozen:  # pretrained encoder as a fixed feature extractor, logistic-regression head on its embeddings
        parts = {
            "minilm_train_features": texts,
            "max_length": max_len,
            "pooling": model.pooling,
            **(cache_key or {}),
        }
        feats = cached_arrays("05_mde", parts, lambda: {"features": outputs(texts)["features"]})["features"]
        fit_logistic_head(model.classifier, feats, labels)
    else:
        fit(
            model,
            list(zip(texts, labels)),
            epochs=epochs,
            max_steps=max_steps,
            batch_size=min(batch_size, 32),
            lr=lr or 5e-5,
            seed=seed,
            collate_fn=collate,
            checkpoint_dir=checkpoint_dir,
            progress=False,
        )
    model.eval()
    return model, outputs


def train_text_classifier(
    name: str,
    texts: Sequence[str],
    labels: Sequence[int],
    *,
    vocab=None,
    epochs: int = 3,
    max_steps: int | None = None,
    lr: float | None = None,
    batch_size: int = 64,
    max_len: int = 256,
    seed: int = 0,
    checkpoint_dir=None,
    cache_key: Mapping | None = None,
) -> tuple[object, Callable[[Sequence[str]], dict[str, np.ndarray]]]:
    """Train one sentiment classifier and return it with a function texts → {"logits"[, "features"]}.

    Parameters
    ----------
    name : str
        One of :data:`TEXT_MODELS`: a word-level model of :func:`helpers.models.build_model` (``"bow"``,
        ``"embsum"`` = mean of word embeddings, ``"textcnn"``, ``"lstm"``) over ``vocab``; ``"minilm"``
        (MiniLM-L6 fine-tuned end to end, its own WordPiece tokenizer; GPU-sized); or ``"minilm-frozen"`` (the
        pretrained MiniLM-L6 encoder kept fixed, mean-pooled sentence embeddings, a logistic-regression head fitted
        by :func:`fit_logistic_head`; one forward pass per text, CPU-sized).
    texts, labels
        Training texts and integer labels.
    vocab : helpers.models.text.Vocab
        Word vocabulary (required for the word-level models).
    epochs, max_steps, lr, batch_size, seed, checkpoint_dir
        Passed to :func:`helpers.training.fit` (``lr`` defaults to 3e-3, 5e-5 for MiniLM; ``batch_size`` 32 for
        MiniLM); unused by ``"minilm-frozen"``.  Pass ``checkpoint_dir`` so that re-running resumes instead of
        retraining.
    max_len : int
        Words (WordPiece tokens for MiniLM) kept per text.
    cache_key : mapping, optional
        Extra key parts for the disk cache of ``"minilm-frozen"``'s training embeddings (the texts, ``max_len``
        and pooling are always part of the key).
    """
    from helpers.models import build_model
    from helpers.models.text import Vocab
    from helpers.training import fit

    texts, labels = list(texts), [int(v) for v in labels]
    if name not in TEXT_MODELS:
        raise InputValidationError(f"name: expected one of {TEXT_MODELS}, got {name!r}")
    if len(texts) != len(labels) or not texts:
        raise InputValidationError(
            f"texts, labels: expected equal non-zero lengths, got {len(texts)} and {len(labels)}"
        )
    if name.startswith("minilm"):
        return _train_minilm(
            name,
            texts,
            labels,
            epochs=epochs,
            max_steps=max_steps,
            lr=lr,
            batch_size=batch_size,
            max_len=max_len,
            seed=seed,
            checkpoint_dir=checkpoint_dir,
            cache_key=cache_key,
        )
    if vocab is None:
        raise InputValidationError(f"vocab: required for the word-level model {name!r}")
    kwargs = {"pooling": "mean"} if name == "embsum" else {}
    model = build_model(name, seed=seed, vocab_size=len(vocab), **kwargs)
    fit(
        model,
        vocab.dataset(texts, labels, max_len=max_len),
        epochs=epochs,
        max_steps=max_steps,
        batch_size=batch_size,
        lr=lr or 3e-3,
        seed=seed,
        collate_fn=Vocab.collate,
        checkpoint_dir=checkpoint_dir,
        progress=False,
    )
    return model, word_model_outputs(model.eval(), vocab, max_len=max_len)


def word_model_outputs(
    model, vocab, *, max_len: int
) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
    """texts → ``{"logits"[, "features"]}`` of a trained word-vocabulary text model (eval mode, batched).

    Texts are encoded with ``vocab`` (first ``max_len`` words); models with ``.features()`` also return their
    penultimate features (:func:`features_and_logits`), the others only logits.
    """
    from helpers.models.text import Vocab
    from helpers.training import predict

    def outputs(xs: Sequence[str]) -> dict[str, np.ndarray]:
        ids = vocab.encode_batch(list(xs), max_len=max_len)
        if hasattr(model, "features"):
            return features_and_logits(model, ids, preprocess=Vocab.pad)
        return {"logits": predict(model, ids, collate_fn=Vocab.pad)}

    return outputs


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
    from helpers.metaset_data import ShiftSpec

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
        )
        for b in names
    }
    frame = measure_frame(
        outputs, sets, labels=labels, references=references, partners=partners, setup=setup, T=T
    )
    for b in names:
        frame.loc[frame.backbone == b, "reference_accuracy"] = float(
            (ref_out[b]["reference"]["logits"].argmax(1) == np.asarray(reference_labels)).mean()
        )
    return frame, outputs, references
