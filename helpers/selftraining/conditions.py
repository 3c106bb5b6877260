"""Success conditions of paper 3's analysis (Section 5, appendix C.4, Table 3), measured from labelled U.

Per round t, with the ensemble {h_i} trained with the pseudo-labelled set R_X^{(t)} (empty in round 1):

* (A) ν  = Pr_{x, h}[h(x) ≠ y_x | f(x) = y_x]      error of the members on the points f gets right (Def. 1);
* (B) γ  = Pr_{x ∈ R_X, h}[h(x) = f(x)]             agreement of the members with f on R_X (Def. 2);
* (C) σ² = E_x[σ_x² | x ∈ B_X], σ_x² = Pr_{h1,h2}[h1(x) ≠ h2(x)] = 1 − Σ_j p_j(x)² (two independent draws from
  the ensemble), with B_X the points of W_X \\ R_X on which the majority vote is wrong (appendix C.4: no
  threshold is used, so G_X is where the vote is right).

Table 3 reports ν̃ = max_t ν, γ̃ = max_t γ (over rounds with R ≠ ∅) and σ²_L = min_t σ², plus the estimated
accuracy without self-training (round 1) and with it (round T).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.selftraining.algorithm import SelfTrainingResult

__all__ = ["pairwise_disagreement", "round_conditions", "success_conditions"]


def pairwise_disagreement(member_predictions: np.ndarray, *, num_classes: int | None = None) -> np.ndarray:
    """σ_x² = 1 − Σ_j p_j(x)², p_j(x) the fraction of members predicting j; shape (n,)."""
    preds = np.asarray(member_predictions)
    if preds.ndim != 2 or preds.size == 0 or not np.issubdtype(preds.dtype, np.integer):
        raise InputValidationError(
            f"member_predictions: expected a non-empty (N, n) integer array, got {preds.shape}"
        )
    k = int(num_classes) if num_classes is not None else int(preds.max()) + 1
    frac = np.stack([(preds == j).mean(axis=0) for j in range(k)], axis=1)
    return 1.0 - (frac**2).sum(axis=1)


def round_conditions(
    result: SelfTrainingResult, *, predictions: np.ndarray, labels: np.ndarray, num_classes: int | None = None
) -> pd.DataFrame:
    """ν, γ, σ² and the estimated accuracy of every round of ``result`` (one row per round; nan where undefined)."""
    f = np.asarray(predictions)
    y = np.asarray(labels)
    if f.shape != y.shape or f.shape != result.errors.shape:
        raise InputValidationError(
            f"predictions, labels and the result must cover the same points: {f.shape}, {y.shape}, {result.errors.shape}"
        )
    correct = f == y
    wrong = ~correct
    rows = []
    for t, r in enumerate(result.rounds, start=1):
        m = r.member_predictions
        nu = float((m[:, correct] != y[correct]).mean()) if correct.any() else float("nan")
        gam = float((m[:, r.trained_on] == f[r.trained_on]).mean()) if r.trained_on.any() else float("nan")
        b = wrong & ~r.trained_on & (r.vote != y)
        sig = pairwise_disagreement(m, num_classes=num_classes)
        rows.append(
            {
                "round": t,
                "nu": nu,
                "gamma": gam,
                "sigma2": float(sig[b].mean()) if b.any() else float("nan"),
                "n_B": int(b.sum()),
                "size_R_trained": int(r.trained_on.sum()),
                "estimated_accuracy": r.estimated_accuracy,
                "vote_accuracy": float((r.vote == y).mean()),
            }
        )
    return pd.DataFrame(rows)


def success_conditions(
    result: SelfTrainingResult, *, predictions: np.ndarray, labels: np.ndarray, num_classes: int | None = None
) -> dict[str, float]:
    """Table 3's summary: actual and estimated accuracies (w/o and w/ self-training), ν̃, γ̃, σ²_L (fractions)."""
    per = round_conditions(result, predictions=predictions, labels=labels, num_classes=num_classes)

    def _agg(col: str, how: str) -> float:
        v = per[col].dropna()
        return float(getattr(v, how)()) if len(v) else float("nan")

    return {
        "actual_accuracy": float((np.asarray(predictions) == np.asarray(labels)).mean()),
        "estimated_without_self_training": float(per.estimated_accuracy.iloc[0]),
        "estimated_with_self_training": float(per.estimated_accuracy.iloc[-1]),
        "nu_tilde": _agg("nu", "max"),
        "gamma_tilde": _agg("gamma", "max"),
        "sigma2_L": _agg("sigma2", "min"),
    }
