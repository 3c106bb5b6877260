"""String-keyed registry of label-free estimators, so a papermill parameter can name one.

>>> from helpers.estimators import get_estimator, list_estimators
>>> est = get_estimator("atc_mc", rule="quantile")     # == ATC(score="mc", rule="quantile")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.errors import InputValidationError
from helpers.estimators.agreement import AgreementScore
from helpers.estimators.aline import ALineD, ALineS
from helpers.estimators.atc import ATC
from helpers.estimators.cbpe import CBPE
from helpers.estimators.confidence import AverageConfidence, AverageNegativeEntropy, DoC, MaxProbThreshold
from helpers.estimators.cot import COT
from helpers.estimators.cott import COTT
from helpers.estimators.dispersion import Dispersion
from helpers.estimators.dispersity import FrechetDistance, NuclearNorm
from helpers.estimators.energy import MDE, AverageEnergy
from helpers.estimators.gdscore import GdScore
from helpers.estimators.mano import MaNo
from helpers.estimators.prior_shift import ConfusionMatrixShift
from helpers.estimators.softmax_corr import SoftmaxCorr
from helpers.estimators.stacking import STACK_METHODS_SOTA, StackedEstimator
from helpers.registry import Registry

__all__ = ["ESTIMATORS", "get_estimator", "list_estimators", "register_estimator", "learns_from_shifted_sets"]

#: name -> factory(**params) returning an unfitted estimator
ESTIMATORS: Registry[Callable[..., Any]] = Registry("estimator")


def _fixed(cls: type, name: str, **fixed: Any) -> Callable[..., Any]:
    """Factory for ``cls(**fixed, **params)`` that refuses to override the fixed parameters."""

    def factory(**params: Any) -> Any:
        clash = sorted(set(fixed) & set(params))
        if clash:
            raise InputValidationError(
                f"{clash[0]}: fixed to {fixed[clash[0]]!r} by the estimator name {name!r}; use another name instead"
            )
        return cls(**fixed, **params)

    factory.__name__ = f"make_{name}"
    factory.__doc__ = f"``{cls.__name__}({', '.join(f'{k}={v!r}' for k, v in fixed.items())}, **params)``"
    return factory


ESTIMATORS.register("average_confidence", AverageConfidence)
ESTIMATORS.register("average_negative_entropy", AverageNegativeEntropy)
ESTIMATORS.register("doc", DoC)
ESTIMATORS.register("maxprob", MaxProbThreshold)
ESTIMATORS.register("atc_mc", _fixed(ATC, "atc_mc", score="mc"))
ESTIMATORS.register("atc_ne", _fixed(ATC, "atc_ne", score="ne"))
ESTIMATORS.register("average_energy", AverageEnergy)
ESTIMATORS.register("mde", _fixed(MDE, "mde", normalize=False))
ESTIMATORS.register("mde_normalized", _fixed(MDE, "mde_normalized", normalize=True))
ESTIMATORS.register("nuclear_norm", NuclearNorm)
ESTIMATORS.register("frechet", FrechetDistance)
ESTIMATORS.register("dispersion", Dispersion)
ESTIMATORS.register("cot", COT)
ESTIMATORS.register("cott", COTT)
ESTIMATORS.register("agreement", AgreementScore)
ESTIMATORS.register("cbpe", CBPE)
ESTIMATORS.register("mano", MaNo)
ESTIMATORS.register("softmax_corr", SoftmaxCorr)
ESTIMATORS.register("confusion_matrix_shift", ConfusionMatrixShift)
ESTIMATORS.register("aline_s", ALineS)
ESTIMATORS.register("aline_d", ALineD)
ESTIMATORS.register("gdscore", GdScore)
ESTIMATORS.register("stacked", StackedEstimator)
ESTIMATORS.register("stacked_sota", _fixed(StackedEstimator, "stacked_sota", methods=STACK_METHODS_SOTA))


def get_estimator(name: str, **params: Any) -> Any:
    """Build an unfitted estimator by name with keyword parameters (``UnknownNameError`` lists the names)."""
    return ESTIMATORS.get(name)(**params)


def list_estimators() -> list[str]:
    """Sorted names accepted by :func:`get_estimator`."""
    return ESTIMATORS.names()


def register_estimator(name: str, factory: Callable[..., Any]) -> Callable[..., Any]:
    """Add an estimator factory (a class or a callable returning an estimator) under ``name``."""
    return ESTIMATORS.register(name, factory)


def learns_from_shifted_sets(estimator: Any) -> bool:
    """Whether an estimator's ``fit`` learns its accuracy estimate from labelled shifted sets (``shifted=``), as the
    stacked estimator does.  Score-type estimators also take ``shifted=`` (to fit their score -> accuracy line), but
    are not counted here: callers that have a meta-set fit that line themselves (:mod:`helpers.benchmark`)."""
    import inspect

    if getattr(estimator, "output", "accuracy") == "score":
        return False
    return "shifted" in inspect.signature(estimator.fit).parameters
