"""Notebook 01's settings as data: its parameters for a profile and the per-task pipeline settings they imply.

Notebook 06 reads notebook 01's cached SCAN pipeline; both build their :class:`PipelineConfig` and task data here,
from notebook 01's ``parameters`` cell and ``notebooks/profiles/01_discriminator_bounds.yaml``, so the two can
never drift apart (a change of 01's defaults is a change of 06's seq2seq block).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helpers.errors import InputValidationError
from helpers.experiments.p1_bounds.pipeline import PipelineConfig, check_snapshots
from helpers.experiments.p1_bounds.tasks import Seq2SeqTask, load_task

__all__ = ["NOTEBOOK", "notebook_parameters", "this_run", "pipeline_config", "task_data"]

NOTEBOOK = "01_discriminator_bounds"

#: notebook parameters that are PipelineConfig fields under the same name
_CONFIG_FIELDS = tuple(PipelineConfig.__dataclass_fields__)


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
