"""Self-training ensembles for label-free accuracy estimation and error detection (paper 3, Chen et al. 2021).

* :mod:`~helpers.selftraining.algorithm`: Algorithm 1 (:func:`self_training`), majority vote, training
  sets, supervised and DANN training.
* :mod:`~helpers.selftraining.ensembles`: T_RI (:class:`RandomInitEnsemble`) and T_RM
  (:class:`RepresentationMatchingEnsemble`).
* :mod:`~helpers.selftraining.baselines`: Ens Avg Conf, MSP / Trust Score threshold detectors, Proxy Risk.
* :mod:`~helpers.selftraining.adversarial`: the DANN, T_RM and Proxy Risk loops (one source and one target
  batch per step).
* :mod:`~helpers.selftraining.trust_score`: Trust Score (Jiang et al. 2018).
* :mod:`~helpers.selftraining.conditions`: the success conditions ν̃, γ̃, σ²_L (Table 3).
"""

from helpers.selftraining.algorithm import (
    RoundRecord,
    SelfTrainingResult,
    dann_training_set,
    disagreement_mask,
    majority_vote,
    self_training,
    train_dann,
    train_pool,
    train_supervised,
    weighted_training_set,
)
from helpers.selftraining.baselines import (
    EnsembleAverageConfidence,
    ProxyRisk,
    ThresholdErrorDetector,
    ensemble_average_confidence,
)
from helpers.selftraining.conditions import pairwise_disagreement, round_conditions, success_conditions
from helpers.selftraining.ensembles import RandomInitEnsemble, RepresentationMatchingEnsemble
from helpers.selftraining.trust_score import TrustScore, density_filter

__all__ = [
    "RandomInitEnsemble",
    "RepresentationMatchingEnsemble",
    "RoundRecord",
    "SelfTrainingResult",
    "dann_training_set",
    "disagreement_mask",
    "majority_vote",
    "self_training",
    "train_dann",
    "train_pool",
    "train_supervised",
    "weighted_training_set",
    "EnsembleAverageConfidence",
    "ProxyRisk",
    "ThresholdErrorDetector",
    "ensemble_average_confidence",
    "pairwise_disagreement",
    "round_conditions",
    "success_conditions",
    "TrustScore",
    "density_filter",
]
