"""Which gold accuracies paper 1's bounds can bracket, given the recalls of their votes (a pure identity).

Re-exported by :mod:`helpers.estimators.bounds`.
"""

from __future__ import annotations

import numpy as np

from helpers.errors import InputValidationError

__all__ = ["accuracy_from_recalls", "bracketed_gold_range"]


def bracketed_gold_range(
    *, upper_cr: float, upper_ir: float, lower_cr: float, lower_ir: float
) -> tuple[float, float]:
    """The gold accuracies ``g`` that bounds with these Correct-/Incorrect-Recalls (Eq. 3) bracket.

    On a set with gold accuracy ``g``, a vote vector with Correct-Recall CR and Incorrect-Recall IR labels a fraction

        Acc_pred = g · CR + (1 − g) · (1 − IR)                         (Eq. 1 split by gold correctness)

    of the outputs Correct (an identity, not a model).  So the lower bound (Ensemble_incorrect's recalls) is at most
    ``g`` iff ``(1 − g)(1 − IR_lower) ≤ g (1 − CR_lower)``, and the upper bound (Ensemble_correct's) at least ``g``
    iff ``(1 − g)(1 − IR_upper) ≥ g (1 − CR_upper)``:

        g_min = (1 − IR_lower) / ((1 − IR_lower) + (1 − CR_lower)),
        g_max = (1 − IR_upper) / ((1 − IR_upper) + (1 − CR_upper)),

    and lower ≤ g ≤ upper iff ``g_min ≤ g ≤ g_max``.  Read as a what-if (how the bounds would fare on a parser
    with another accuracy), it assumes the recalls stay the same when the parser's accuracy changes, i.e. the
    discriminators' error rates on correct and on wrong outputs do not depend on how many there are.  It shows why
    a small false-Correct rate pushes the lower bound above the gold accuracy of a parser that is mostly wrong.

    Parameters
    ----------
    upper_cr, upper_ir, lower_cr, lower_ir : float
        Recalls (fractions in [0, 1]) of the upper-bound (Ensemble_correct) and lower-bound (Ensemble_incorrect)
        votes; NaN where the set has no correct (CR) or no wrong (IR) output.

    Returns
    -------
    (g_min, g_max) : tuple of float
        Fractions; a perfect side (both recalls 1) puts no limit on that side (``g_min = 0`` or ``g_max = 1``).
        NaN when a needed recall is NaN.

    Examples
    --------
    Paper 1's T5 discriminators on MCD2 (Table 1: Upper CR .834, IR .779; Lower CR .717, IR .922) bracket gold
    accuracies in [.216, .571]; the parser's .229 (Table 2) is just inside, as the paper's bounds [.224, .361] are.

    >>> [round(g, 3) for g in bracketed_gold_range(upper_cr=.834, upper_ir=.779, lower_cr=.717, lower_ir=.922)]
    [0.216, 0.571]
    """
    vals = {"upper_cr": upper_cr, "upper_ir": upper_ir, "lower_cr": lower_cr, "lower_ir": lower_ir}
    for name, v in vals.items():
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
            raise InputValidationError(f"{name}: expected a recall as a float in [0, 1], got {v!r}")
        if not (np.isnan(v) or 0.0 <= v <= 1.0):
            raise InputValidationError(f"{name}: expected a recall in [0, 1] (a fraction, not percent), got {v!r}")

    def _side(false_correct: float, false_incorrect: float, perfect: float) -> float:
        if np.isnan(false_correct) or np.isnan(false_incorrect):
            return float("nan")
        total = false_correct + false_incorrect
        return perfect if total == 0 else float(false_correct / total)

    g_min = _side(1.0 - lower_ir, 1.0 - lower_cr, 0.0)
    g_max = _side(1.0 - upper_ir, 1.0 - upper_cr, 1.0)
    return g_min, g_max


def accuracy_from_recalls(gold: float, correct_recall: float, incorrect_recall: float) -> float:
    """Eq. 1 split by gold correctness: the fraction labelled Correct, ``g · CR + (1 − g) · (1 − IR)``, for votes
    with Correct-/Incorrect-Recall (Eq. 3) ``CR``/``IR`` on a set with gold accuracy ``g`` (all fractions)."""
    return gold * correct_recall + (1.0 - gold) * (1.0 - incorrect_recall)
