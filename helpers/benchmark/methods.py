"""Which label-free estimators the benchmark runs and how each one is fed (the method catalogue).

``accuracy`` methods output an accuracy directly (fitted on the labelled reference where needed); ``score``
methods output a set-level score that the task's meta-set regression maps to accuracy (:mod:`.engine`).  A name
added with :func:`helpers.estimators.register_estimator` runs through the common contract: its ``fit`` and
``estimate`` get the arguments they declare (:func:`helpers.estimators.declared_arguments`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.benchmark.task import ShiftTask
from helpers.errors import UnknownNameError
from helpers.estimators import get_estimator, learns_from_shifted_sets, list_estimators
from helpers.estimators.base import declared_arguments

__all__ = ["ACCURACY_METHODS", "SCORE_METHODS", "DEFAULT_METHODS", "FEATURE_METHODS", "applicable"]

ACCURACY_METHODS: tuple[str, ...] = (
    "average_confidence",
    "doc",
    "maxprob",
    "atc_mc",
    "atc_ne",
    "cot",
    "agreement",
    "cbpe",
    "cott",
    "confusion_matrix_shift",
)
SCORE_METHODS: tuple[str, ...] = (
    "average_negative_entropy",
    "average_energy",
    "mde",
    "mde_normalized",
    "nuclear_norm",
    "frechet",
    "mano",
    "softmax_corr",
    "dispersion",
)
DEFAULT_METHODS: tuple[str, ...] = ACCURACY_METHODS + SCORE_METHODS

#: methods that need the task's penultimate features (others may use them when given)
FEATURE_METHODS: tuple[str, ...] = ("dispersion",)
#: accuracy methods fitted on the labelled reference (logits and labels)
_LABELLED_FIT = ("doc", "maxprob", "atc_mc", "atc_ne", "cot", "average_confidence", "cbpe", "cott",
                 "confusion_matrix_shift")  # fmt: skip


def _is_custom(method: str) -> bool:
    """A name added with :func:`helpers.estimators.register_estimator` (not one of :data:`DEFAULT_METHODS`)."""
    return method not in DEFAULT_METHODS and method in list_estimators()


def _build(method: str, *, n_boot: int, level: float, seed: int) -> Any:
    """The estimator behind ``method``; a registered estimator gets the bootstrap settings if it takes them."""
    if not _is_custom(method):
        return get_estimator(method, n_boot=n_boot, level=level, random_state=seed)
    est = get_estimator(method)
    if hasattr(est, "set_params") and hasattr(est, "get_params"):
        settings = {"n_boot": n_boot, "level": level, "random_state": seed}
        est.set_params(**{k: v for k, v in settings.items() if k in est.get_params(deep=False)})
    return est


def _is_score(method: str, est: Any = None) -> bool:
    """Score-type methods are mapped to accuracy by a regression on the task's meta-set."""
    if method in SCORE_METHODS:
        return True
    if _is_custom(method):
        est = get_estimator(method) if est is None else est
        return getattr(est, "output", "accuracy") == "score"
    return False


def applicable(task: ShiftTask, method: str) -> tuple[bool, str]:
    """Whether ``method`` can run on ``task`` and, if not, why (an empty reason when it can)."""
    if method not in DEFAULT_METHODS and not _is_custom(method):
        raise UnknownNameError("benchmark method", method, DEFAULT_METHODS + tuple(list_estimators()))
    if _is_custom(method):
        if task.meta:
            return True, ""
        if _is_score(method):
            return False, "no meta-set to regress the score on"
        if learns_from_shifted_sets(get_estimator(method)):
            return False, "no meta-set (labelled shifted sets) to learn from"
        return True, ""
    if method == "agreement" and not task.partner:
        return False, "no partner-model logits"
    if method in FEATURE_METHODS and not task.features:
        return False, "no penultimate features"
    if method in SCORE_METHODS:
        if not task.meta:
            return False, "no meta-set to regress the score on"
        if method == "mde":
            sizes = {s.n for s in task.meta.values()} | {s.n for s in task.targets.values()}
            if len(sizes) > 1:
                return False, f"raw MDE needs equal set sizes, got sizes {sorted(sizes)} (use mde_normalized)"
    return True, ""


def _inputs(task: ShiftTask, method: str, set_name: str, logits: np.ndarray) -> dict[str, Any]:
    """Keyword arguments of ``estimate`` for one set (a registered estimator gets the common contract's)."""
    if _is_custom(method):
        return {"logits": logits, "features": task.features[set_name] if task.features else None}
    if method == "agreement":
        return {"logits": logits, "other_logits": task.partner[set_name]}
    if method == "frechet":
        return {"features": task.features[set_name]} if task.features else {"logits": logits}
    if method in FEATURE_METHODS:
        return {"logits": logits, "features": task.features[set_name]}
    return {"logits": logits}


def _declared(call: Any, method: str, arguments: dict[str, Any]) -> dict[str, Any]:  # a user's: what it declares
    return declared_arguments(call, **arguments) if _is_custom(method) else arguments


def _fit(task: ShiftTask, method: str, est: Any) -> Any:
    ref = task.reference
    if _is_custom(method):
        given = {"logits": ref.logits, "labels": ref.labels, "features": (task.features or {}).get("reference")}
        if learns_from_shifted_sets(est):  # e.g. the stacked estimator: the meta-set is its labelled shifted sets
            given["shifted"] = {m: {"logits": s.logits, "labels": s.labels, "features": (task.features or {}).get(m)}
                                for m, s in task.meta.items()}  # fmt: skip
        return est.fit(**declared_arguments(est.fit, **given))  # what your fit declares (the others stay out)
    if method == "frechet":
        return est.fit(**_inputs(task, method, "reference", ref.logits))
    if method in _LABELLED_FIT:
        return est.fit(logits=ref.logits, labels=ref.labels)
    return est.fit(logits=ref.logits)
