"""Optimisers and learning-rate schedules by name."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from helpers.errors import InputValidationError


def _make_optimizer(optimizer: str | Callable, params, lr: float, weight_decay: float, kwargs: dict):
    if callable(optimizer):
        return optimizer(params)
    name = str(optimizer).lower()
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, **kwargs)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, **kwargs)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay, **kwargs)
    raise InputValidationError(f"optimizer: expected 'adam', 'adamw', 'sgd' or a callable, got {optimizer!r}")


def linear_schedule(step: int, *, total_steps: int, warmup_steps: int = 0, kind: str = "linear") -> float:
    """Learning-rate multiplier: linear warm-up from 0 over ``warmup_steps``, then ``kind`` until ``total_steps``.

    Parameters
    ----------
    step : int
        Number of optimiser steps already taken (0-based).
    total_steps, warmup_steps : int
        Schedule length and warm-up length, in optimiser steps.
    kind : {"linear", "constant", "cosine"}
        Shape after warm-up: linear decay to 0 (as in BERT fine-tuning), constant 1, or half-cosine to 0.

    Returns
    -------
    float
        Multiplier in [0, 1] applied to the base learning rate.
    """
    if warmup_steps > 0 and step < warmup_steps:
        return (step + 1) / warmup_steps
    if kind == "constant":
        return 1.0
    rest = max(1, total_steps - warmup_steps)
    frac = min(1.0, max(0.0, (step - warmup_steps) / rest))
    if kind == "linear":
        return 1.0 - frac
    if kind == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * frac))
    raise InputValidationError(
        f"scheduler: expected 'linear', 'constant', 'cosine' or a callable, got {kind!r}"
    )


def _make_scheduler(scheduler, optimizer, total_steps: int | None, warmup) -> Any:
    if scheduler is None:
        return None
    if callable(scheduler):
        return scheduler(optimizer, total_steps)
    if total_steps is None:
        raise InputValidationError(
            "scheduler: needs a known number of steps (give max_steps, or data with a length)"
        )
    warmup_steps = (
        int(round(warmup * total_steps)) if isinstance(warmup, float) and warmup < 1 else int(warmup)
    )
    kind = str(scheduler)
    linear_schedule(0, total_steps=total_steps, warmup_steps=warmup_steps, kind=kind)  # validates ``kind``

    def lam(step: int) -> float:  # a plain function: LambdaLR stores no state for it
        return linear_schedule(step, total_steps=total_steps, warmup_steps=warmup_steps, kind=kind)

    return torch.optim.lr_scheduler.LambdaLR(optimizer, lam)
