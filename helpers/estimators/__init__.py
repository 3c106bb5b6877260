"""Label-free accuracy estimators behind one contract.

Every estimator is a class with keyword-only ``fit(*, ...reference...)`` (labelled reference / source set;
optional for the estimators that need no reference) and ``estimate(*, ...target..., interval=False)``
returning an :class:`Estimate` whose ``accuracy`` is a fraction in [0, 1].  The set-level scores (MDE, Average
Energy, entropy, nuclear norm, Fréchet distance) become accuracies as paper 5 defines it: ``fit(...,
shifted={name: (logits, labels), ...})`` fits a line from the score to accuracy on labelled shifted sets, and
``estimate`` reads the target's accuracy off it, the score beside it in ``Estimate.score``; without ``shifted=``
(or a ``regressor``) their ``estimate`` raises, and ``measure`` returns the raw score.  ``interval=True`` fills
``lower``/``upper`` with a percentile bootstrap interval over target examples (the score's own interval is in
``details["score_lower"/"score_upper"]``).

Input scheme: model outputs by keyword, exactly one of ``logits=`` (n, K) or ``probs=`` (n, K, rows sum to 1);
the confidence family also takes ``confidence=`` (n,); references take ``labels=`` (or ``correct=`` with
``confidence=``).  Each method also has an array-first function form.  Two lines from cached logits::

    from helpers.estimators import get_estimator
    get_estimator("atc_mc").fit(logits=val_logits, labels=val_labels).estimate(logits=test_logits).accuracy

=========================  ==================================  =================================
registry name              class                               function form
=========================  ==================================  =================================
average_confidence         AverageConfidence                   average_confidence(probs)
average_negative_entropy   AverageNegativeEntropy (score)      average_negative_entropy(probs)
doc                        DoC                                 doc_accuracy(reference_probs=, ...)
maxprob                    MaxProbThreshold                    maxprob_accuracy(probs, gamma=0.5)
atc_mc / atc_ne            ATC(score="mc"/"ne")                atc_threshold, atc_accuracy
average_energy             AverageEnergy (score)               average_energy(logits, T=1.0)
mde / mde_normalized       MDE (score)                         mde(logits, T=1.0, normalize=False)
nuclear_norm               NuclearNorm (score)                 nuclear_norm_score(probs)
frechet                    FrechetDistance (score)             frechet_distance(features_a, features_b)
cot                        COT                                 cot_error(probs, reference_distribution)
cott                       COTT                                cott_scores(probs, reference_distribution)
mano                       MaNo (score)                        mano_score(logits)
softmax_corr               SoftmaxCorr (score)                 softmax_correlation(probs)
confusion_matrix_shift     ConfusionMatrixShift                pacc_prevalences(mean_probs, class_means)
dispersion                 Dispersion (score; needs features)  dispersion_score(features, logits)
agreement                  AgreementScore                      agreement_score(predictions_a, predictions_b)
cbpe                       CBPE (NannyML)                      cbpe_accuracy(reference_probs=, ...)
aline_s / aline_d          ALineS / ALineD (a collection)      aline_accuracies(id_preds, y, ood_preds)
gdscore                    GdScore (score; features or model)  gdscore(features, logits)
stacked                    StackedEstimator (needs shifted=)   StackedRegression().fit(X, y)
stacked_sota               StackedEstimator on STACK_METHODS_SOTA (the base set with the 2023-2025 methods)
=========================  ==================================  =================================

Which of several models to deploy: :func:`rank_models` ranks them on one unlabelled target with any of these
(:mod:`helpers.estimators.ranking`).

Your own estimator: subclass :class:`LabelFreeEstimator` (``fit`` / ``estimate`` are defined there, ``estimate``
once for every estimator; write ``_prepare_target`` and ``_point`` and one bootstrap protocol) and it gets intervals, class checks and, with
``mergeable = True``, out-of-core estimates; :func:`check_estimator` runs the whole contract on it
(:mod:`helpers.estimators.checks`).

:class:`ShiftConformal` wraps any of them with a split-conformal interval calibrated on labelled shifted sets
(:mod:`helpers.estimators.conformal`), the interval that covers a shift's error rather than sampling noise.

Not in the logits registry (different inputs): :class:`MetaSetRegression` maps any scalar score to accuracy
over a collection of shifted sets (``metaset_report`` / ``compare_measures`` evaluate it in-sample, held-out and
on unseen sets), and :class:`DiscriminatorBounds` / ``bounds_table`` turn an (n_examples x n_discriminators)
matrix of Correct/Incorrect votes into paper 1's upper and lower bounds.
"""

from helpers.estimators._common import (
    logsumexp_rows,
    resolve_logits,
    resolve_probs,
    softmax,
)
from helpers.estimators.agreement import AgreementScore, agreement_score
from helpers.estimators.aline import ALineD, ALineS, aline_accuracies
from helpers.estimators.atc import ATC, ATC_RULES, atc_accuracy, atc_scores, atc_threshold
from helpers.estimators.base import (
    BaseEstimator,
    Estimate,
    SmallSampleWarning,
    UnusedArgumentWarning,
    declared_arguments,
)
from helpers.estimators.bootstrap import (
    BootstrapResult,
    bootstrap_interval,
    percentile_interval,
    resampled_means,
)
from helpers.estimators.bounds import (
    DiscriminatorBounds,
    bounds_table,
    discriminator_bounds,
    ensemble_correct,
    ensemble_incorrect,
    lower_bound,
    maxprob_oracle_bounds,
    mean_bounds,
    mean_discrim,
    upper_bound,
)
from helpers.estimators.cbpe import CBPE, cbpe_accuracy, cbpe_expected_correct, fit_cbpe_calibrators
from helpers.estimators.checks import check_estimator, synthetic_task  # noqa: E402  (after the estimators it checks)
from helpers.estimators.confidence import (
    AverageConfidence,
    AverageNegativeEntropy,
    DoC,
    MaxProbThreshold,
    average_confidence,
    average_negative_entropy,
    doc_accuracy,
    maxprob_accuracy,
)
from helpers.estimators.conformal import (
    ShiftConformal,
    conformal_intervals,
    conformal_quantile,
    conformal_radius,
    difficulty_scale,
    disagreement_scale,
    min_calibration_sets,
    pooled_conformal_quantile,
)
from helpers.estimators.cot import COT, cot_error, label_distribution, transport_row_costs
from helpers.estimators.cott import COTT, cott_scores
from helpers.estimators.dispersion import Dispersion, dispersion_score
from helpers.estimators.dispersity import (
    FrechetDistance,
    NuclearNorm,
    frechet_distance,
    frechet_distance_from_stats,
    mean_and_covariance,
    nuclear_norm_score,
)
from helpers.estimators.energy import MDE, AverageEnergy, average_energy, free_energy, mde, mde_parts
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.estimators.gdscore import GdScore, gdscore, gdscore_inputs
from helpers.estimators.mano import MaNo, mano_criterion, mano_normalize, mano_score
from helpers.estimators.metaset import MetaSetRegression, compare_measures, metaset_predict, metaset_report
from helpers.estimators.prior_shift import ConfusionMatrixShift, pacc_prevalences
from helpers.estimators.ranking import (
    COLLECTION_METHODS,
    ModelRanking,
    agreement_with_interval,
    rank_models,
    ranking_agreement,
)
from helpers.estimators.registry import (
    ESTIMATORS,
    get_estimator,
    learns_from_shifted_sets,
    list_estimators,
    register_estimator,
)
from helpers.estimators.softmax_corr import SoftmaxCorr, softmax_correlation
from helpers.estimators.stacking import STACK_METHODS, STACK_METHODS_SOTA, StackedEstimator, StackedRegression

__all__ = [
    "Estimate",
    "BaseEstimator",
    "LabelFreeEstimator",
    "Prepared",
    "resolve_probs",
    "resolve_logits",
    "check_estimator",
    "synthetic_task",
    "UnusedArgumentWarning",
    "SmallSampleWarning",
    "declared_arguments",
    # classes
    "AverageConfidence",
    "AverageNegativeEntropy",
    "DoC",
    "MaxProbThreshold",
    "ATC",
    "AverageEnergy",
    "MDE",
    "MaNo",
    "mano_score",
    "mano_criterion",
    "mano_normalize",
    "SoftmaxCorr",
    "ConfusionMatrixShift",
    "pacc_prevalences",
    "softmax_correlation",
    "NuclearNorm",
    "FrechetDistance",
    "Dispersion",
    "dispersion_score",
    "COT",
    "COTT",
    "cott_scores",
    "transport_row_costs",
    "AgreementScore",
    "CBPE",
    "ALineS",
    "ALineD",
    "aline_accuracies",
    "GdScore",
    "gdscore",
    "gdscore_inputs",
    # ranking models on one unlabelled set
    "rank_models",
    "ranking_agreement",
    "agreement_with_interval",
    "ModelRanking",
    "COLLECTION_METHODS",
    # functions
    "softmax",
    "logsumexp_rows",
    "average_confidence",
    "average_negative_entropy",
    "doc_accuracy",
    "maxprob_accuracy",
    "atc_scores",
    "atc_threshold",
    "atc_accuracy",
    "ATC_RULES",
    "free_energy",
    "average_energy",
    "mde",
    "mde_parts",
    "nuclear_norm_score",
    "mean_and_covariance",
    "frechet_distance",
    "frechet_distance_from_stats",
    "label_distribution",
    "cot_error",
    "agreement_score",
    "cbpe_accuracy",
    "cbpe_expected_correct",
    "fit_cbpe_calibrators",
    # intervals
    "BootstrapResult",
    "bootstrap_interval",
    "percentile_interval",
    "resampled_means",
    # meta-set regression (paper 5)
    "MetaSetRegression",
    "metaset_predict",
    "metaset_report",
    "compare_measures",
    # discriminator-ensemble bounds (paper 1)
    "DiscriminatorBounds",
    "discriminator_bounds",
    "bounds_table",
    "ensemble_correct",
    "ensemble_incorrect",
    "upper_bound",
    "lower_bound",
    "mean_discrim",
    "mean_bounds",
    "maxprob_oracle_bounds",
    # beyond the papers: shift-aware intervals and stacking (notebook 06)
    "ShiftConformal",
    "conformal_quantile",
    "conformal_radius",
    "min_calibration_sets",
    "pooled_conformal_quantile",
    "conformal_intervals",
    "difficulty_scale",
    "disagreement_scale",
    "StackedEstimator",
    "StackedRegression",
    "STACK_METHODS",
    "STACK_METHODS_SOTA",
    # registry
    "ESTIMATORS",
    "learns_from_shifted_sets",
    "get_estimator",
    "list_estimators",
    "register_estimator",
]
