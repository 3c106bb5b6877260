"""Paper 4 (notebook ``04_attribution_ranking``): model suites, the ranking experiment and the direction protocol.

* :mod:`~helpers.experiments.p4_attribution.suites` -- word-level / MiniLM models on texts or pairs, trained and
  predicted with caches, and :func:`run_setting` (one OOD set: true accuracies, attributions, factors, baselines,
  bootstrap ranking accuracy on the informative model pairs);
* :mod:`~helpers.experiments.p4_attribution.directions` -- the held-out-direction protocol: each factor's direction
  (and, for the window factor, signed vs |a|) is chosen on an independent suite and applied unchanged.
"""

from helpers.experiments.p4_attribution.directions import READINGS, factor_readings, held_out_directions
from helpers.experiments.p4_attribution.suites import (
    ARCHITECTURES,
    SettingResult,
    accuracy_table,
    build_model,
    factor_variants,
    model_tokenizer,
    pair_vocab,
    predict_probs,
    run_setting,
    suite_spread,
    train_classifier,
    train_suite,
    window_ablation,
)

__all__ = [
    "ARCHITECTURES",
    "pair_vocab",
    "build_model",
    "train_classifier",
    "predict_probs",
    "SettingResult",
    "run_setting",
    "suite_spread",
    "train_suite",
    "model_tokenizer",
    "accuracy_table",
    "window_ablation",
    "factor_variants",
    "READINGS",
    "factor_readings",
    "held_out_directions",
]
