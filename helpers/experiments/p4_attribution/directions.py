"""The held-out-direction protocol for paper 4's factors: choose each factor's reading on an independent suite.

The paper fixes no direction for MAX-DIFF, SUM-DIFF, INDEX-DIFF, FIRST-TOK and the SWAP factors, and its window
formula (§5) does not say whether attributions enter signed or as magnitudes.  Choosing the reading that scores best
on the suite being evaluated would report the better of two (or four) numbers after looking.  So:

1. an *independent* suite (same design, another seed: other training data, other model initialisations, another
   OOD sample and population) is built and attributed like the evaluated one;
2. for every attribution method and factor, the reading with the highest ranking accuracy on the independent suite
   is chosen (ties keep the a-priori reading, which is listed first);
3. that reading is applied unchanged to the evaluated suite.

Readings (:data:`READINGS`): the a-priori direction of :data:`~helpers.attribution.factors.FACTORS` or the opposite
one; for the window factors (IRREG / VERB / ADJ / WINDOW) also on |a| (the window sums the magnitudes of the
L1-normalised attributions).  The a-priori reading is always reported beside the protocol's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from helpers.attribution.evaluation import ranking_table
from helpers.attribution.factors import FACTORS, factor_matrix, factor_values
from helpers.errors import InputValidationError, UnknownNameError
from helpers.experiments.p4_attribution.suites import SettingResult

__all__ = ["READINGS", "WINDOW_FACTORS", "factor_readings", "held_out_directions"]

READINGS = ("a priori", "opposite", "|a| a priori", "|a| opposite")
WINDOW_FACTORS = ("WINDOW", "IRREG", "VERB", "ADJ")


def factor_readings(
    result: SettingResult,
    population: pd.DataFrame,
    factor: str,
    *,
    method: str,
    meta_columns: Sequence[str] = (),
) -> dict[str, tuple[np.ndarray, bool]]:
    """Every reading of one factor on one suite: reading name -> (scores (n_models, n_examples), higher_is_better).

    Window factors get four readings (signed / |a| × a priori / opposite), the other factors two.
    """
    if factor not in FACTORS:
        raise UnknownNameError("factor", factor, sorted(FACTORS))
    attr = result.attributions[result.attributions["method"] == method]
    if attr.empty:
        raise InputValidationError(f"method {method!r}: no attributions in this result")
    names = list(result.models["model"])
    meta = population[list(meta_columns)].reset_index(drop=True) if meta_columns else None
    hib = FACTORS[factor].higher_is_better
    signed = factor_matrix(factor_values(attr, factor, meta=meta), names)
    out = {"a priori": (signed, hib), "opposite": (signed, not hib)}
    if factor in WINDOW_FACTORS:
        magnitude = factor_matrix(factor_values(attr.assign(score=attr["score"].abs()), factor, meta=meta), names)
        out["|a| a priori"] = (magnitude, hib)
        out["|a| opposite"] = (magnitude, not hib)
    return out


def _reading_accuracies(
    result: SettingResult, population: pd.DataFrame, factor: str, *, method: str, meta_columns, n_boot, size, seed
) -> dict[str, float]:
    readings = factor_readings(result, population, factor, method=method, meta_columns=meta_columns)
    summary, _ = ranking_table(
        readings, result.models["ood_accuracy"].to_numpy(), n_boot=n_boot, size=size, seed=seed,
        models=list(result.models["model"]), pair_mask=result.informative,
    )  # fmt: skip
    return dict(zip(summary["method"], summary["accuracy"].astype(float)))


def held_out_directions(
    independent: SettingResult,
    evaluated: SettingResult,
    *,
    independent_population: pd.DataFrame,
    population: pd.DataFrame,
    factors: Sequence[str],
    meta_columns: Sequence[str] = (),
    methods: Sequence[str] | None = None,
    n_boot: int = 500,
    size: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Apply the readings chosen on ``independent`` to ``evaluated`` (module docstring).

    Both results must hold attributions for ``methods`` (default: the methods of ``evaluated``).  Each suite is
    scored on its own informative pairs.  An independent suite with no informative pair cannot choose: the
    a-priori reading is kept and ``chosen_on`` is NaN.

    Returns
    -------
    DataFrame with one row per (attribution, factor): ``reading`` (the chosen one), ``chosen_on`` (its accuracy on
    the independent suite), ``a_priori`` and ``protocol`` (the a-priori and the chosen reading's accuracy on the
    evaluated suite, in [0, 1]), and ``evaluated_<reading>`` for every reading (diagnostic: not a competitor).
    """
    methods = list(methods) if methods is not None else list(evaluated.attributions["method"].unique())
    missing = sorted(set(methods) - set(independent.attributions["method"].unique()))
    if missing:
        raise InputValidationError(f"independent suite has no attributions for {missing}")
    kw = dict(meta_columns=meta_columns, n_boot=n_boot, size=size, seed=seed)
    rows = []
    for method in methods:
        for factor in factors:
            chooser = _reading_accuracies(independent, independent_population, factor, method=method, **kw)
            target = _reading_accuracies(evaluated, population, factor, method=method, **kw)
            valid = {k: v for k, v in chooser.items() if np.isfinite(v)}
            reading = max(valid, key=lambda k: (valid[k], -READINGS.index(k))) if valid else "a priori"
            rows.append({
                "attribution": method, "factor": factor, "reading": reading,
                "chosen_on": valid.get(reading, np.nan), "a_priori": target["a priori"],
                "protocol": target[reading], **{f"evaluated_{k}": v for k, v in target.items()},
            })  # fmt: skip
    return pd.DataFrame(rows)
