"""Which model will do best on this unlabelled set?  Rank candidate models with any registered estimator.

``rank_models({name: outputs on the target}, method=...)`` scores every model on the same unlabelled target set
and ranks them (rank 1 = best).  How a method ranks:

* an **accuracy** method (ATC, DoC, COT, CBPE, ALine-S / ALine-D, ...): by its estimated accuracy, each model's
  estimator fitted on that model's own labelled ``reference``;
* a **score** method (nuclear norm, MDE, MaNo, GdScore, ...): by the raw score, oriented by the method's
  ``direction`` (+1: a higher score, a higher accuracy; −1 for the Fréchet distance and GdScore), since one
  reference set cannot fit paper 5's score -> accuracy line; given labelled ``shifted`` sets per model the line
  is fitted on each model's own sets and the models are ranked by the accuracy read off it;
* **ALine-S / ALine-D** use the whole collection at once (agreement of every pair; at least three models), the
  ``reference`` sets sharing one set of labelled examples.

With the target's ``labels``, the result also gives each model's true accuracy and how well the ranking matches
it: Kendall's τ-b and Spearman's ρ between the method's ranking value and the true accuracy, and the **top-1
regret** (the best model's true accuracy minus that of the model ranked first, a fraction ≥ 0), each with a
percentile bootstrap interval over the target's examples, resampled jointly for every model (the models are
scored on the same examples; their scores are not independent).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 3, 400)
>>> outs = {f"m{s}": rng.normal(size=(400, 3)) + s * np.eye(3)[y] for s in (0.5, 1.0, 2.0)}
>>> r = rank_models(outs, method="average_confidence", labels=y, n_boot=50)
>>> r.to_df()["model"].tolist(), r.agreement["kendall_tau"]
(['m2.0', 'm1.0', 'm0.5'], 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from helpers.errors import InputValidationError
from helpers.estimators.base import declared_arguments

__all__ = ["ModelRanking", "rank_models", "ranking_agreement", "agreement_with_interval", "COLLECTION_METHODS"]

#: methods that estimate every model of a collection at once (from the agreement of its pairs)
COLLECTION_METHODS = {"aline_s": "s", "aline_d": "d"}


@dataclass
class ModelRanking:
    """Result of :func:`rank_models`: ``table`` (model, score, accuracy, value, rank[, true_accuracy]), what the
    ranking reads (``ranked_by``) and, with labels, ``agreement`` (kendall_tau, spearman_rho, top1_regret, each
    with ``_lower`` / ``_upper``)."""

    method: str
    table: pd.DataFrame
    ranked_by: str
    agreement: dict[str, float] = field(default_factory=dict)

    def to_df(self) -> pd.DataFrame:
        """The models best first (rank 1 = best)."""
        return self.table.sort_values("rank").reset_index(drop=True)

    def plot(self, ax=None):
        """The ranking value against the true accuracy (%) when known, else the ranking as bars."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
        t = self.to_df()
        if "true_accuracy" in t:
            ax.scatter(100 * t["true_accuracy"], t["value"])
            for row in t.itertuples():
                ax.annotate(f"{row.rank}. {row.model}", (100 * row.true_accuracy, row.value), fontsize=7)
            a = self.agreement
            ax.set(xlabel="true accuracy on the target (%)", ylabel=self.ranked_by,
                   title=f"{self.method}: τ {a['kendall_tau']:.2f} [{a['kendall_tau_lower']:.2f}, "
                         f"{a['kendall_tau_upper']:.2f}], top-1 regret {100 * a['top1_regret']:.1f} pts")  # fmt: skip
        else:
            ax.barh(t["model"][::-1], t["value"][::-1])
            ax.set(xlabel=self.ranked_by, title=f"{self.method}: models best first")
        return ax.figure


def ranking_agreement(value: np.ndarray, true_accuracy: np.ndarray) -> dict[str, float]:
    """Kendall's τ-b, Spearman's ρ and the top-1 regret of ranking by ``value`` (higher = better) against the
    true accuracies (fractions).  Ties in ``value``: the first model in order is taken as ranked first.

    >>> {k: round(v, 4) for k, v in ranking_agreement(np.array([3.0, 1.0, 2.0]), np.array([0.9, 0.8, 0.7])).items()}
    {'kendall_tau': 0.3333, 'spearman_rho': 0.5, 'top1_regret': 0.0}
    """
    v, t = np.asarray(value, dtype=np.float64), np.asarray(true_accuracy, dtype=np.float64)
    constant = np.ptp(v) == 0 or np.ptp(t) == 0
    tau = np.nan if constant else float(kendalltau(v, t).statistic)
    rho = np.nan if constant else float(spearmanr(v, t).statistic)
    return {"kendall_tau": tau, "spearman_rho": rho, "top1_regret": float(t.max() - t[int(np.argmax(v))])}


def _as_inputs(name: str, value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if hasattr(value, "shape") or isinstance(value, (list, str)):
        return {"logits": value}
    raise InputValidationError(f"{where}[{name!r}]: expected an (n, K) logits array or a dict of inputs, "
                               f"got {type(value).__name__}")  # fmt: skip


def _reference_inputs(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return {"logits": value[0], "labels": value[1]}
    return _as_inputs(name, value, "reference")


def _check_collection(outputs: Any) -> tuple[list[str], dict[str, dict[str, Any]], int, int]:
    if not isinstance(outputs, Mapping):
        raise InputValidationError(f"outputs: expected a dict model name -> outputs on the target, got "
                                   f"{type(outputs).__name__}")  # fmt: skip
    if len(outputs) < 2:
        raise InputValidationError(f"outputs: ranking needs at least 2 models, got {len(outputs)}")
    inputs = {str(k): _as_inputs(str(k), v, "outputs") for k, v in outputs.items()}
    shapes = {}
    for k, v in inputs.items():
        arr = v.get("logits", v.get("probs"))
        shape = np.shape(arr) if arr is not None else ()
        if len(shape) != 2:
            raise InputValidationError(f"outputs[{k!r}]: expected (n, K) logits or probs, got shape {shape}")
        shapes[k] = shape
    if len({s[0] for s in shapes.values()}) != 1:
        raise InputValidationError(
            f"outputs: every model must be scored on the same examples; lengths {shapes}"
        )
    if len({s[1] for s in shapes.values()}) != 1:
        raise InputValidationError(f"outputs: every model must have the same class count; shapes {shapes}")
    n, k = next(iter(shapes.values()))
    return list(inputs), inputs, int(n), int(k)


def _predicted(inputs: dict[str, Any]) -> np.ndarray:
    arr = inputs.get("logits", inputs.get("probs"))
    pred = arr.argmax(axis=1)
    return np.asarray(pred.compute() if hasattr(pred, "compute") else pred)


def _per_model(method: str, names, inputs, reference, shifted, params) -> tuple[dict, str, int]:
    """(fitted estimator per model, what the ranking reads, orientation)."""
    from helpers.estimators.registry import get_estimator

    fitted, reads_line = {}, shifted is not None
    for name in names:
        est = get_estimator(method, **dict(params or {}))
        fit_kw = _reference_inputs(name, reference[name]) if reference is not None else {}
        if shifted is not None:
            fit_kw["shifted"] = shifted[name]
        fit_kw = declared_arguments(est.fit, **fit_kw)
        if not fit_kw and getattr(est, "requires_fit", True):
            raise InputValidationError(f"reference: {method} is fitted on each model's labelled reference; pass "
                                       "reference={name: (logits, labels)}")  # fmt: skip
        fitted[name] = est.fit(**fit_kw) if fit_kw else est
    est = fitted[names[0]]
    if getattr(est, "output", "accuracy") == "accuracy" or reads_line:
        return fitted, "estimated accuracy", 1
    direction = int(getattr(est, "direction", 1))
    return fitted, f"{method} score ({'higher' if direction > 0 else 'lower'} = better)", direction


def _one(est: Any, target: dict[str, Any], by_accuracy: bool) -> Any:
    kw = declared_arguments(est.estimate, **target)
    return est.estimate(**kw) if by_accuracy else est.measure(**kw)


def _values(
    names, inputs, fitted, direction, by_accuracy, idx=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, estimated accuracy, ranking value) of every model, on the target rows ``idx`` (None: all)."""
    score, acc = np.full(len(names), np.nan), np.full(len(names), np.nan)
    for i, name in enumerate(names):
        target = inputs[name] if idx is None else {k: v[idx] for k, v in inputs[name].items()}
        out = _one(fitted[name], target, by_accuracy)
        score[i] = out.score if out.score is not None else np.nan
        acc[i] = out.accuracy
    return score, acc, (acc if by_accuracy else direction * score)


def _collection(method: str, names, inputs, reference, n: int):
    """ALine's point values and a function of the target's example weights giving them again."""
    from helpers.estimators.aline import aline_accuracies
    from helpers.validation import check_labels

    if reference is None or any(name not in reference for name in names):
        raise InputValidationError(f"reference: {method} needs every model's outputs on one labelled in-distribution "
                                   "set, {name: (logits, labels)}")  # fmt: skip
    refs = {name: _reference_inputs(name, reference[name]) for name in names}
    labels = [check_labels(r.get("labels"), f"reference[{name!r}] labels") for name, r in refs.items()]
    if any(len(y) != len(labels[0]) or not np.array_equal(y, labels[0]) for y in labels):
        raise InputValidationError("reference: ALine compares models on the same labelled examples; the models' "
                                   "reference labels differ")  # fmt: skip
    id_pred = np.stack([_predicted(refs[name]) for name in names])
    ood_pred = np.stack([_predicted(inputs[name]) for name in names])

    def values(weights: np.ndarray | None = None) -> np.ndarray:
        return aline_accuracies(
            id_pred, labels[0], ood_pred, method=COLLECTION_METHODS[method], ood_weights=weights
        )

    return values


def rank_models(outputs: Mapping[str, Any], *, method: str = "average_confidence", reference: Mapping | None = None,
                labels: Any = None, shifted: Mapping | None = None, params: Mapping | None = None, n_boot: int = 200,
                level: float = 0.95, random_state: int | None = 0) -> ModelRanking:  # fmt: skip
    """Rank models on one unlabelled target set with the registered estimator ``method`` (module docstring).

    Parameters
    ----------
    outputs : dict name -> (n, K) logits, or a dict of target inputs (``{"logits", "features", ...}``)
        Every model's outputs on the same n target examples, with the same class count K.  Arrays may be Dask
        arrays or store paths: a mergeable method then reads them out of core.
    method : str
        A registered estimator name (:func:`~helpers.estimators.list_estimators`).
    reference : dict name -> (logits, labels) or dict of fit inputs, optional
        Each model's outputs on its labelled reference (in-distribution) set; needed by the methods fitted on
        labels and by ALine (one shared set of labelled examples).
    labels : (n,) true target labels, optional
        Gives the true accuracies and the ranking's agreement with them (τ, ρ, top-1 regret and intervals).
    shifted : dict name -> labelled shifted sets, optional
        Per model, the sets a score method fits its score -> accuracy line on (then it ranks by that accuracy).
    params : dict, optional
        Parameters of the estimator (``get_estimator(method, **params)``).
    n_boot, level, random_state
        The bootstrap over target examples for the agreement's intervals (``n_boot=0``: none).
    """
    from helpers.estimators.registry import ESTIMATORS
    from helpers.validation import check_labels

    names, inputs, n, k = _check_collection(outputs)
    ESTIMATORS.get(method)  # an unknown name: UnknownNameError listing the registered ones
    for what, given in (("reference", reference), ("shifted", shifted)):
        if given is not None and (not isinstance(given, Mapping) or set(names) - set(map(str, given))):
            raise InputValidationError(f"{what}: expected a dict with an entry for every model {names}")
    if method in COLLECTION_METHODS:
        collection = _collection(method, names, inputs, reference, n)
        acc = collection()
        score, value, ranked_by = np.full(len(names), np.nan), acc, "estimated accuracy"
        replicate = lambda idx: collection(np.bincount(idx, minlength=n).astype(float))  # noqa: E731
    else:
        fitted, ranked_by, direction = _per_model(method, names, inputs, reference, shifted, params)
        by_accuracy = ranked_by == "estimated accuracy"
        score, acc, value = _values(names, inputs, fitted, direction, by_accuracy)
        replicate = lambda idx: _values(names, inputs, fitted, direction, by_accuracy, idx)[2]  # noqa: E731
    table = pd.DataFrame({"model": names, "score": score, "accuracy": acc, "value": value})
    table["rank"] = (-table["value"]).rank(method="first").astype(int)
    agreement: dict[str, float] = {}
    if labels is not None:
        y = check_labels(labels, "labels", n_classes=k, n=n)
        correct = np.stack([_predicted(inputs[name]) == y for name in names]).astype(np.float64)
        table["true_accuracy"] = correct.mean(axis=1)
        agreement = agreement_with_interval(
            value, correct, replicate, n_boot=n_boot, level=level, random_state=random_state
        )
    return ModelRanking(method, table, ranked_by, agreement)


def agreement_with_interval(value: np.ndarray, correct: np.ndarray, replicate: Any, *, n_boot: int = 200,
                            level: float = 0.95, random_state: int | None = 0) -> dict[str, float]:  # fmt: skip
    """:func:`ranking_agreement` of ``value`` against the models' true accuracies (``correct``: (models, n) 0/1),
    with a percentile bootstrap interval over the target's n examples, drawn once for every model:
    ``replicate(idx)`` gives the ranking values on the rows ``idx`` (a constant for a value that needs no target,
    e.g. the models' reference accuracy)."""
    out = ranking_agreement(value, correct.mean(axis=1))
    if not n_boot:
        return out
    rng, n = np.random.default_rng(random_state), correct.shape[1]
    reps = []
    for _ in range(int(n_boot)):
        idx = rng.integers(0, n, n)
        reps.append(ranking_agreement(replicate(idx), correct[:, idx].mean(axis=1)))
    frame = pd.DataFrame(reps)
    tail = 100 * (1 - float(level)) / 2
    for key in list(out):
        lo, hi = (
            np.nanpercentile(frame[key], [tail, 100 - tail]) if frame[key].notna().any() else (np.nan, np.nan)
        )
        out[f"{key}_lower"], out[f"{key}_upper"] = float(lo), float(hi)
    return out
