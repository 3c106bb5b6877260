"""Selective answering: accuracy–coverage curves, AUC / AURC / E-AURC, the failure modes of AUC, DiSCA, DiDMA, NiDMA.

Paper 2: Mishra, Arunkumar & Baral, "Investigating the Failure Modes of the AUC metric and Exploring Alternatives
for Evaluating Systems in Safety Critical Applications" (Sections 2–3, Eq. 1–3, Appendix B).  AURC / E-AURC:
Geifman, Uziel & El-Yaniv, "Bias-Reduced Uncertainty Estimation for Deep Neural Classifiers", ICLR 2019.

Confidence contract
-------------------
Every function takes ``confidence`` (shape ``(n,)``, finite, **higher = more confident**, e.g. the max-softmax
probability "MaxProb") and ``correct`` (shape ``(n,)``, booleans or 0/1: was the prediction right?).  A model
*answers* the examples whose confidence is at least a threshold ``t`` and abstains on the rest.  Validation
(:func:`check_selective_inputs`) is kept apart from the computations.

Tie rule (documented choice)
----------------------------
Examples with *equal* confidence cannot be separated by any threshold, so they enter the curve **together as one
coverage step**.  The curve therefore has one point per distinct confidence value (in decreasing order) and does
not depend on the order of the input arrays.  With all-distinct confidences it is the usual per-example curve.

The accuracy–coverage curve is read as a right-continuous step function: for coverage ``c`` in
``(c_{k-1}, c_k]`` the accuracy is ``acc_k`` (the accuracy after the k-th block has entered).  Hence

* ``AUC = Σ_k (c_k − c_{k−1}) · acc_k`` (``c_0 = 0``), which for distinct confidences equals the mean over
  ``i = 1..n`` of the accuracy of the ``i`` most confident answers;
* ``AURC = Σ_k (c_k − c_{k−1}) · (1 − acc_k) = 1 − AUC`` (Geifman et al.'s AURC with the same tie rule);
* ``E-AURC = AURC − AURC*`` where ``AURC*`` is the AURC of an oracle that ranks every correct answer above every
  wrong one, one example per step: ``AURC* = (1/n) Σ_{i=m+1..n} (i − m)/i`` (``m`` correct answers).  Geifman et
  al.'s continuous approximation ``r + (1 − r) ln(1 − r)`` (``r`` = overall error) is *not* used: the discrete
  value is exact and E-AURC ≥ 0 always (blocks of ties can only raise AURC).

Paper-2 quantities (readings chosen where the paper is ambiguous)
-----------------------------------------------------------------
* ``a`` (Eq. 1): "the maxprob value when accuracy first drops below 100 %": the threshold of the first curve point
  whose accuracy is < 1.  ``b(τ)``: the threshold of the first curve point whose accuracy is < τ ("the first point
  models fail to cross a range of accuracy thresholds", captions of Figures 5 and 7), τ = 0.95 … 0.55 (Table 2).
  If accuracy never drops below τ (a perfect model for ``a``, the white cells of Table 2 for ``b``) the lowest
  confidence at 100 % coverage is used ("Lowest Maxprob", Figure 1).
* Fluctuations (third term of Eq. 1, Figure 3): "the number of times accuracy increases with increasing coverage".
  On the raw per-example curve *every* correct answer after the first error raises the running accuracy, so the
  count would be in the thousands for every model, which contradicts the paper's "near-zero fluctuations" for most
  models.  We follow the paper's figures 4–8 ("at each point the accuracy changes, from 1 to 0.5"): the curve is
  *condensed* to the points where the accuracy, floored to ``decimals`` decimal places (default 2, i.e. levels of
  1 %), changes value.  A fluctuation is a condensed point whose level is higher than the previous condensed point's;
  ``d1 < d2`` are the two levels and ``c1 ≥ c2`` the two points' confidence thresholds.  ``decimals=None`` uses the
  raw tie-block curve instead.
* Eq. 1: ``DiSCA = x/a + y/b − z · Σ_{i=1..n} (n − i + 1)(d2_i − d1_i)/c_i / Σ_{i=1..n} (n − i + 1)`` with
  ``c_i = max(c1_i − c2_i, 0.001)`` (floor: the paper's case definition of ``c``) and fluctuations numbered
  ``i = 1..n`` by increasing coverage, so the earliest (most confident) fluctuation has the largest weight ``n``.
  With no fluctuation (``n = 0``) the third term is 0.  ``x + y + z = 1`` (checked to within 0.011 so that the
  paper's ``x = y = z = 0.33`` is accepted).  DiSCA needs positive confidences (it divides by ``a`` and ``b``).
* Eq. 2: ``DiDMA = p · DiSCA + q · Computation_Score`` (``p + q = 1``).  Appendix B gives
  ``Computation_Score = optimal_params / n_params`` (:func:`computation_score_params`); as the energy proxy of
  ``1/Energy`` we offer ``reference_cost / measured_cost`` (:func:`computation_score_cost`, e.g. seconds of inference
  per example relative to a budget), the same ratio form, so a model at the budget scores 1.
* Eq. 3: ``NiDMA = u · DiDMA + v · DiSCA(OOD)`` (``u + v = 1``).

AUC failure modes (Section 2.1, Table 1) are detected for ordered model pairs (A, B) with ``AUC_A > AUC_B`` by
:func:`auc_failure_cases`: *tail* (B is more accurate on average over coverage ``(0, max_coverage]``),
*fluctuation* (A's fluctuation penalty, the bracket of Eq. 1's third term, is larger than B's) and *plateau* (A's
wrong answers carry higher MaxProb on average than B's: A's curve is flat at high confidence, the paper's plateau).
"""

from __future__ import annotations

from helpers.selective.curve import (  # noqa: F401
    TOLERANCES,
    SelectiveCurve,
    accuracy_at_coverage,
    accuracy_coverage_curve,
    auc,
    aurc,
    check_selective_inputs,
    curve_area,
    e_aurc,
    maxprob,
    optimal_aurc,
    selective_risk,
)
from helpers.selective.diagnostics import (  # noqa: F401
    Fluctuations,
    auc_failure_cases,
    condense_curve,
    first_drop_threshold,
    fluctuations,
    plateau,
    tail_accuracy,
    tail_inversion,
)
from helpers.selective.disca import (  # noqa: F401
    DiSCAResult,
    computation_score_cost,
    computation_score_params,
    didma,
    disca,
    disca_table,
    nidma,
)

__all__ = [
    "SelectiveCurve",
    "Fluctuations",
    "DiSCAResult",
    "TOLERANCES",
    "check_selective_inputs",
    "maxprob",
    "accuracy_coverage_curve",
    "curve_area",
    "auc",
    "aurc",
    "optimal_aurc",
    "e_aurc",
    "accuracy_at_coverage",
    "selective_risk",
    "first_drop_threshold",
    "condense_curve",
    "fluctuations",
    "plateau",
    "tail_accuracy",
    "tail_inversion",
    "auc_failure_cases",
    "disca",
    "disca_table",
    "computation_score_params",
    "computation_score_cost",
    "didma",
    "nidma",
]
