"""Head-to-head benchmark of every label-free estimator on common shift tasks."""

from helpers.benchmark.task import LabelledLogits, ShiftTask

__all__ = ["LabelledLogits", "ShiftTask"]
