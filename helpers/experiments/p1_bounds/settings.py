"""Notebook 01's settings as data: its parameters for a profile and the per-task pipeline settings they imply.

Notebook 06 reads notebook 01's cached SCAN pipeline; both build their :class:`PipelineConfig` and task data here,
from notebook 01's ``parameters`` cell and ``notebooks/profiles/01_discriminator_bounds.yaml``, so the two can
never drift apart (a change of 01's defaults is a change of 06's seq2seq block).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from helpers.errors import InputValidationError
from helpers.experiments.p1_bounds.pipeline import PipelineConfig, check_snapshots
from helpers.experiments.p1_bounds.tasks import Seq2SeqTask, load_task
from helpers.run.settings import NotebookSettings

__all__ = ["NOTEBOOK", "BoundsSettings", "notebook_parameters", "this_run", "pipeline_config", "task_data"]

NOTEBOOK = "01_discriminator_bounds"

#: notebook parameters that are PipelineConfig fields under the same name
_CONFIG_FIELDS = tuple(PipelineConfig.__dataclass_fields__)


@dataclass(frozen=True)
class BoundsSettings(NotebookSettings):
    """Notebook 01's parameters as one typed, frozen object: the fields are its ``parameters`` cell, in order
    (``tests/test_notebook_settings.py`` keeps them equal); the notebook makes them once,
    ``S = BoundsSettings.this_run(globals())``, reads ``S.<name>`` after that and hands ``S.as_dict()`` to
    :func:`pipeline_config` and :func:`task_data`, which notebook 06 calls with 01's parameters too."""

    NOTEBOOK: ClassVar[str] = NOTEBOOK

    profile: str
    tasks: list[str]
    n_train: int | dict[str, int] | None  #: parser training pairs per task, or a dict task -> size
    n_dev: int
    n_test: int
    pos_max_words: int | None
    parser_config: str
    vocab_min_freq: int
    parser_steps: int
    parser_lr: float
    parser_batch_size: int
    snapshot_every: int
    n_snapshots: int
    n_mine: int | None
    max_negative_ratio: float | None
    disc_kind: str
    n_members: int
    disc_epochs: int
    disc_lr: float
    disc_batch_size: int
    disc_max_length: int
    disc_freeze_layers: int
    disc_select_on_dev: bool
    disc_evals_per_epoch: int
    task_overrides: dict[str, dict[str, Any]]  #: per-task PipelineConfig fields
    subset_sizes: list[int]
    n_draws: int
    extra_test_sets: list[str]
    extra_test_sets_whole: bool
    min_gold: float
    num_threads: int
    seed: int


def notebook_parameters(profile: str = "default", **overrides: Any) -> dict[str, Any]:
    """Notebook 01's parameters for ``profile``: its ``parameters`` cell, updated by the profile file and then by
    ``overrides`` (an unknown name is an error)."""
    from helpers.run.runner import notebook_parameters as read

    return read(NOTEBOOK, profile, **overrides)


def this_run(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The running notebook 01's parameters, read from its namespace by the names of its ``parameters`` cell."""
    from helpers.run.runner import namespace_parameters

    return namespace_parameters(NOTEBOOK, namespace)


def pipeline_config(params: Mapping[str, Any], task: str) -> PipelineConfig:
    """The :class:`PipelineConfig` of ``task``: every parameter named like a config field, then the task's entry of
    ``task_overrides``.  Frozen MiniLM layers apply to MiniLM discriminators only (also where a task's override
    picks another kind).  A config whose parser snapshots do not fit in its steps is refused here."""
    fields = {k: params[k] for k in _CONFIG_FIELDS if k in params}
    over = dict(params.get("task_overrides", {}).get(task, {}))
    unknown = sorted(set(over) - set(_CONFIG_FIELDS))
    if unknown:
        raise InputValidationError(f"task_overrides[{task!r}]: {unknown} are not PipelineConfig fields")
    fields.update(over)
    if fields.get("disc_kind", "minilm") != "minilm":
        fields["disc_freeze_layers"] = 0
    return check_snapshots(PipelineConfig(**fields))


def task_data(params: Mapping[str, Any], task: str) -> Seq2SeqTask:
    """``task``'s training / dev / test sets as notebook 01 loads them (``n_train`` may be a dict per task)."""
    n_train = params["n_train"]
    return load_task(
        task,
        n_train=n_train.get(task) if isinstance(n_train, dict) else n_train,
        n_dev=params["n_dev"],
        n_test=params["n_test"],
        max_words=params["pos_max_words"],
        seed=params["seed"],
    )
