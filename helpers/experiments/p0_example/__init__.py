"""Notebook 00 (the example): its settings (:mod:`.settings`) and the two steps its tour computes, as tested
functions (:mod:`.scoring`): every estimator on every shifted set beside the true accuracy, and the MAE table."""

from helpers.experiments.p0_example.scoring import estimate_sets, mae_table
from helpers.experiments.p0_example.settings import ExampleSettings

__all__ = ["ExampleSettings", "estimate_sets", "mae_table"]
