"""Notebook 01 (paper 1, correctness discriminators): seq2seq tasks (SCAN, COGS/SLOG, POS), the cached
parser → negatives → discriminators pipeline, and the result tables and subset curves.

The parser, negative mining and discriminators themselves are library code in :mod:`helpers.seq2seq`; the bounds
are in :mod:`helpers.estimators.bounds`.
"""

from helpers.experiments.p1_bounds.pipeline import (
    PipelineConfig,
    SetResult,
    TaskResult,
    parser_is_trained,
    run_task,
    run_task_unit,
)
from helpers.experiments.p1_bounds.tasks import TASKS, Seq2SeqTask, load_task, render_scan_output

__all__ = [
    "TASKS",
    "Seq2SeqTask",
    "load_task",
    "render_scan_output",
    "PipelineConfig",
    "SetResult",
    "TaskResult",
    "parser_is_trained",
    "run_task",
    "run_task_unit",
]
