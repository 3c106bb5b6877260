"""Head-to-head benchmark of every label-free estimator on common shift tasks.

``run_benchmark(tasks)`` runs every applicable estimator of :mod:`helpers.estimators` on a sequence of
:class:`ShiftTask` and returns a :class:`BenchmarkResult` (tidy rows via ``to_df()``; ``mae()``, ``coverage()``,
``width()``, ``seconds()``, ``ranks()``, ``summary()`` tables).
"""

from helpers.benchmark.by_task import run_benchmark_by_task
from helpers.benchmark.engine import (
    ACCURACY_METHODS,
    COLUMNS,
    DEFAULT_METHODS,
    SCORE_METHODS,
    BenchmarkResult,
    applicable,
    external_rows,
    run_benchmark,
)
from helpers.benchmark.task import LabelledLogits, ShiftTask

__all__ = [
    "ACCURACY_METHODS",
    "COLUMNS",
    "DEFAULT_METHODS",
    "SCORE_METHODS",
    "BenchmarkResult",
    "LabelledLogits",
    "ShiftTask",
    "applicable",
    "external_rows",
    "run_benchmark",
    "run_benchmark_by_task",
]
