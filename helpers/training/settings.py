"""How to train: one frozen, validated object instead of a dozen keywords passed from hand to hand.

:class:`TrainSettings` holds everything that says *how* a model is trained (how long, in batches of what size, with
which optimiser and learning rate, from which seed, on which device, where checkpoints go, whether a progress bar
shows) and nothing about *what* is trained (the model, the data, the loss).  :func:`helpers.training.fit` and every
trainer built on it (members, self-training pools, DANN, the model zoo, the seq2seq parser and discriminators) take
one.  It is validated once, when it is made, so a wrong value fails where it was written and not halfway through a
run::

    >>> s = TrainSettings(epochs=3, batch_size=128, lr=1e-3, seed=0)
    >>> s.replace(seed=1).seed
    1
    >>> TrainSettings(batch_size=0)
    Traceback (most recent call last):
    ...
    helpers.errors.InputValidationError: batch_size: expected a positive integer, got 0
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.errors import InputValidationError

__all__ = ["TrainSettings"]

_OPTIMIZERS = ("adam", "adamw", "sgd")
_SCHEDULES = ("linear", "constant", "cosine")
_INTEGER_SETTINGS = ("epochs", "max_steps", "batch_size", "seed", "eval_every", "eval_batch_size", "checkpoint_every",
                     "keep_checkpoints")  # fmt: skip


@dataclass(frozen=True)
class TrainSettings:
    """How a model is trained; frozen (use :meth:`replace`) and validated when made.

    Parameters
    ----------
    epochs, max_steps : int, optional
        Stop after ``epochs`` passes or ``max_steps`` optimiser steps, whichever comes first (neither: 1 epoch).
    batch_size : int, default 64
        Examples per optimiser step (ignored for iterables of ready-made batches).
    lr : float, default 1e-3
        Base learning rate.
    optimizer : {"adam", "adamw", "sgd"} or callable(params) -> Optimizer
        Extra constructor arguments (``momentum``, ``nesterov``, ``betas``) go in ``optimizer_kwargs``.
    weight_decay : float, default 0
        L2 penalty (decoupled for AdamW).
    scheduler : {"linear", "constant", "cosine"} or callable(optimizer, total_steps) -> LRScheduler, optional
        Stepped after every optimiser step; ``warmup`` is in steps (int) or a fraction of all steps (float < 1).
    grad_clip : float, optional
        Clip the global gradient L2 norm to this value.
    seed : int, default 0
        Seeds the data order and, for a fresh run, the global RNGs (dropout).
    device : str, default "auto"
        See :func:`helpers.training.get_device` (CUDA when present, else CPU).
    amp : bool, default True
        Mixed precision (bfloat16 when supported, else float16 with a gradient scaler); only on CUDA.
    deterministic : bool, default True
        ``torch.use_deterministic_algorithms(True, warn_only=True)`` during training (restored afterwards).
    shuffle, drop_last : bool
        Reshuffle each epoch with a generator seeded from ``(seed, epoch)``; drop a last incomplete batch.
    eval_every, eval_batch_size : int
        Evaluate every ``eval_every`` steps (default: the end of each epoch) in batches of ``eval_batch_size``.
    checkpoint_dir, checkpoint_every, keep_checkpoints, resume :
        Write a checkpoint every ``checkpoint_every`` steps and at the end into ``checkpoint_dir`` (none: no
        checkpoints), keep the newest ``keep_checkpoints``, and with ``resume=True`` continue from the newest one.
    progress : bool or str, default True
        Show a progress bar; a string shows it with that label (what is being trained).
    """

    epochs: int | None = None
    max_steps: int | None = None
    batch_size: int = 64
    lr: float = 1e-3
    optimizer: str | Callable[[Any], Any] = "adam"
    optimizer_kwargs: tuple[tuple[str, Any], ...] | dict | None = None
    weight_decay: float = 0.0
    scheduler: str | Callable | None = None
    warmup: int | float = 0
    grad_clip: float | None = None
    seed: int = 0
    device: str | Any = "auto"
    amp: bool = True
    deterministic: bool = True
    shuffle: bool = True
    drop_last: bool = False
    eval_every: int | None = None
    eval_batch_size: int = 256
    checkpoint_dir: Path | None = None
    checkpoint_every: int | None = None
    keep_checkpoints: int = 2
    resume: bool = True
    progress: bool | str = True

    def __post_init__(self) -> None:
        for name in _INTEGER_SETTINGS:  # numpy integers (a seed from an array) become plain ints
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))
        for name in ("epochs", "max_steps", "eval_every", "checkpoint_every"):
            _positive_or_none(name, getattr(self, name), allow_zero=name == "epochs")
        for name in ("batch_size", "eval_batch_size", "keep_checkpoints"):
            _positive_int(name, getattr(self, name))
        _non_negative("lr", self.lr)
        _non_negative("weight_decay", self.weight_decay)
        _non_negative("warmup", self.warmup)
        if self.grad_clip is not None:
            _non_negative("grad_clip", self.grad_clip)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputValidationError(f"seed: expected a non-negative integer, got {self.seed!r}")
        if isinstance(self.optimizer, str) and self.optimizer not in _OPTIMIZERS:
            raise InputValidationError(f"optimizer: expected one of {_OPTIMIZERS} or a callable, got {self.optimizer!r}")
        if isinstance(self.scheduler, str) and self.scheduler not in _SCHEDULES:
            raise InputValidationError(f"scheduler: expected one of {_SCHEDULES} or a callable, got {self.scheduler!r}")
        if isinstance(self.optimizer_kwargs, dict):  # frozen and hashable: store the items
            object.__setattr__(self, "optimizer_kwargs", tuple(sorted(self.optimizer_kwargs.items())))
        if self.checkpoint_dir is not None:
            if not isinstance(self.checkpoint_dir, (str, os.PathLike)):
                raise InputValidationError(f"checkpoint_dir: expected a path, got {self.checkpoint_dir!r}")
            object.__setattr__(self, "checkpoint_dir", Path(self.checkpoint_dir))

    def replace(self, **changes: Any) -> TrainSettings:
        """A copy with ``changes`` applied (validated again); an unknown name raises naming it."""
        unknown = sorted(set(changes) - set(self.field_names()))
        if unknown:
            raise InputValidationError(
                f"TrainSettings: unknown setting(s) {unknown}; expected some of {sorted(self.field_names())}"
            )
        return dataclasses.replace(self, **changes)

    @classmethod
    def resolve(cls, settings: TrainSettings | None = None, **overrides: Any) -> TrainSettings:
        """``settings`` (default ``TrainSettings()``) with ``overrides`` applied: what a trainer that accepts
        ``settings`` and per-call changes (``train(..., settings, epochs=3)``) trains with."""
        s = settings if settings is not None else cls()
        if not isinstance(s, cls):
            raise InputValidationError(f"settings: expected a TrainSettings, got {type(s).__name__}")
        return s.replace(**overrides) if overrides else s

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The names of all settings."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @property
    def total_epochs(self) -> int | None:
        """``epochs``, or 1 when neither ``epochs`` nor ``max_steps`` is set."""
        return 1 if self.epochs is None and self.max_steps is None else self.epochs

    def optimizer_options(self) -> dict:
        """``optimizer_kwargs`` as a fresh dict."""
        return dict(self.optimizer_kwargs or ())


def _positive_or_none(name: str, value: Any, *, allow_zero: bool = False) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        kind = "a non-negative" if allow_zero else "a positive"
        raise InputValidationError(f"{name}: expected {kind} integer or None, got {value!r}")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputValidationError(f"{name}: expected a positive integer, got {value!r}")


def _non_negative(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise InputValidationError(f"{name}: expected a non-negative number, got {value!r}")
