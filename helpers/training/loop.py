"""The training loop: :func:`fit`, in readable pieces.

``fit`` = plan the run (:func:`_plan`) → build optimiser, schedule and precision policy → resume from the newest
checkpoint or seed a fresh run (:func:`~helpers.training.checkpoints.resume_latest`) → loop over the epochs'
batches (:func:`_epoch_batches`), one optimiser step each (:func:`_train_step`), with the evaluation hook and
checkpointing kept on a small run state (:class:`_Run`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError
from helpers.training.checkpoints import _rng_state, _save_checkpoint, _set_rng_state, resume_latest
from helpers.training.data import (
    _ArrayData,
    _DatasetData,
    _default_forward,
    _epoch_generator,
    _epoch_order,
    _normalise_data,
    _split_batch,
    _to_device,
)
from helpers.training.device import Precision, _deterministic, get_device, seed_everything
from helpers.training.optim import _make_optimizer, _make_scheduler
from helpers.training.predict import _predict_impl
from helpers.training.settings import TrainSettings
from helpers.training.timing import note_training

__all__ = ["fit", "FitResult", "StepInfo", "TrainingInterrupted"]


class TrainingInterrupted(RuntimeError):
    """Raised by a callback to stop :func:`fit` early (the latest checkpoint stays on disk for resuming)."""


@dataclass
class StepInfo:
    """What a callback sees after each optimiser step."""

    step: int  #: optimiser steps taken so far (1-based after the first step)
    epoch: int  #: 0-based epoch of the batch just used
    batch_in_epoch: int  #: batches of this epoch consumed so far
    loss: float  #: training loss of the batch
    progress: float  #: step / total_steps in [0, 1] (nan when the total is unknown)
    model: nn.Module
    optimizer: torch.optim.Optimizer


@dataclass
class FitResult:
    """Summary of a :func:`fit` call.

    Attributes
    ----------
    steps : int
        Optimiser steps taken in total (including those before a resume).
    epochs : float
        Epochs completed (fractional when stopped mid-epoch).
    losses : list of float
        Training loss of every step (from step 1, including steps replayed from a checkpoint's history).
    evals : list of dict
        One dict per evaluation: ``{"step", "epoch", <metric>: value, ...}``.
    wall_time_s : float
        Seconds spent in this call.
    resumed_from : int or None
        Step of the checkpoint this call resumed from.
    checkpoint : pathlib.Path or None
        The last checkpoint written.
    """

    steps: int = 0
    epochs: float = 0.0
    losses: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    wall_time_s: float = 0.0
    resumed_from: int | None = None
    checkpoint: Path | None = None

    @property
    def final_loss(self) -> float:
        """Loss of the last step (nan if no step was taken)."""
        return self.losses[-1] if self.losses else float("nan")


# --------------------------------------------------------------------------------------------------------------------
# planning
# --------------------------------------------------------------------------------------------------------------------
@dataclass
class _Plan:
    """The normalised training data and the run's length in steps."""

    data: Any
    indexable: bool
    n: int
    steps_per_epoch: int | None
    total_steps: int | None


def _plan(train, collate_fn, *, epochs, max_steps, batch_size, drop_last) -> _Plan:
    data = _normalise_data(train, collate_fn)
    indexable = isinstance(data, (_ArrayData, _DatasetData))
    n = 0
    if indexable:
        n = len(data)
        if n == 0:
            raise InputValidationError("train: the training set is empty")
        steps_per_epoch = n // batch_size if drop_last else math.ceil(n / batch_size)
    else:
        try:
            steps_per_epoch = len(data)
        except TypeError:
            steps_per_epoch = None
    if epochs is not None and steps_per_epoch is not None:
        total_steps = epochs * steps_per_epoch
        total_steps = min(total_steps, max_steps) if max_steps is not None else total_steps
    else:
        total_steps = max_steps
    return _Plan(data, indexable, n, steps_per_epoch, total_steps)


def _accuracy_eval(model, data, *, batch_size, device, forward_fn, collate_fn, amp) -> dict:
    logits, labels = _predict_impl(
        model,
        data,
        batch_size=batch_size,
        device=device,
        progress=False,
        forward_fn=forward_fn,
        collate_fn=collate_fn,
        amp=amp,
        want_labels=True,
    )
    if labels is None:
        raise InputValidationError("eval_data: the default eval_fn needs labels; pass (x, y) or an eval_fn")
    out = {"accuracy": float((logits.argmax(1) == labels).mean())}
    out["loss"] = float(F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(labels).long()))
    return out


# --------------------------------------------------------------------------------------------------------------------
# run state: position, evaluation hook, checkpoint payload
# --------------------------------------------------------------------------------------------------------------------
@dataclass
class _Run:
    """Where the run is (step, epoch, batch in epoch) and what it has recorded; knows how to evaluate and save."""

    model: nn.Module
    opt: torch.optim.Optimizer
    sched: Any
    precision: Precision
    plan: _Plan
    config: dict
    result: FitResult
    evaluate: Callable[[], Any] | None
    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0

    def payload(self) -> dict:
        scaler = self.precision.scaler
        return {
            "model": self.model.state_dict(),
            "optimizer": self.opt.state_dict(),
            "scheduler": self.sched.state_dict() if self.sched is not None else None,
            "scaler": scaler.state_dict() if scaler is not None else None,
            "rng": _rng_state(),
            "step": self.step,
            "epoch": self.epoch,
            "batch_in_epoch": self.batch_in_epoch,
            "config": self.config,
            "history": {"losses": list(self.result.losses), "evals": list(self.result.evals)},
        }

    def run_eval(self) -> None:
        """Evaluate once per step at most (the hook is skipped without evaluation data)."""
        if self.evaluate is None or (self.result.evals and self.result.evals[-1]["step"] == self.step):
            return
        was_training = self.model.training
        metrics = self.evaluate()
        self.model.train(was_training)
        metrics = {"value": float(metrics)} if not isinstance(metrics, Mapping) else dict(metrics)
        epoch = self.epoch + self.batch_in_epoch / max(1, self.plan.steps_per_epoch or 1)
        self.result.evals.append({"step": self.step, "epoch": epoch, **metrics})

    def save(self, ckdir: Path, keep: int) -> None:
        self.result.checkpoint = _save_checkpoint(ckdir, self.step, self.payload(), keep)


def _epoch_batches(run: _Run, *, seed: int, shuffle: bool, batch_size: int, lengths=None) -> Iterator:
    """The batches of the current epoch still to be used (from ``run.batch_in_epoch``), in the run's order."""
    plan, data = run.plan, run.plan.data
    if plan.indexable:
        g = _epoch_generator(seed, run.epoch)
        batches = _epoch_order(plan.n, g, shuffle=shuffle, batch_size=batch_size, lengths=lengths,
                               drop_last=plan.steps_per_epoch < math.ceil(plan.n / batch_size))  # fmt: skip
        return (data.batch(batches[b]) for b in range(run.batch_in_epoch, plan.steps_per_epoch))
    if run.batch_in_epoch:
        # resuming mid-epoch: the global RNG was restored to its state after this epoch's iterator was made, so
        # creating it again (a DataLoader draws a seed) and skipping must not disturb it
        snapshot = _rng_state()
        it = iter(data)
        for _ in range(run.batch_in_epoch):
            next(it)
        _set_rng_state(snapshot)
        return it
    return iter(data)


def _batch_loss(model, batch, *, forward, loss_fn, compute_loss, weight_reduction, progress_frac) -> torch.Tensor:
    """The scalar training loss of one batch: ``compute_loss`` when given, else forward + per-sample losses,
    weighted by ``w`` when the batch carries weights (Σ wᵢℓᵢ / B or Σ wᵢℓᵢ / Σ wᵢ)."""
    if compute_loss is not None:
        return compute_loss(model, batch, progress_frac)
    inputs, y, w = _split_batch(batch)
    if y is None:
        raise InputValidationError("train: batches must carry labels: (x, y) or (x, y, w)")
    per = loss_fn(forward(model, inputs), y).float()
    if w is None:
        return per.mean()
    if per.ndim != 1:
        raise InputValidationError(
            f"loss_fn: expected one loss per sample with weights, got shape {tuple(per.shape)}"
        )
    w = w.to(per.dtype)
    denom = w.sum().clamp_min(1e-12) if weight_reduction == "weighted_mean" else per.numel()
    return (per * w).sum() / denom


def _optimiser_step(run: _Run, loss: torch.Tensor, grad_clip: float | None) -> None:
    """Backward, optional gradient clipping, optimiser and schedule step (through the AMP scaler when present)."""
    scaler = run.precision.scaler
    run.opt.zero_grad(set_to_none=True)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(run.opt)
    else:
        loss.backward()
    if grad_clip is not None:
        nn.utils.clip_grad_norm_(run.model.parameters(), grad_clip)
    if scaler is not None:
        scaler.step(run.opt)
        scaler.update()
    else:
        run.opt.step()
    if run.sched is not None:
        run.sched.step()


# --------------------------------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------------------------------
def fit(
    model: nn.Module,
    train: Any,
    settings: TrainSettings | None = None,
    *,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    weight_reduction: str = "mean",
    compute_loss: Callable[[nn.Module, Any, float], torch.Tensor] | None = None,
    forward_fn: Callable[[nn.Module, Any], torch.Tensor] | None = None,
    collate_fn: Callable | None = None,
    lengths: Any = None,
    eval_data: Any = None,
    eval_fn: Callable[[nn.Module, Any], dict | float] | None = None,
    callback: Callable[[StepInfo], Any] | None = None,
    **overrides: Any,
) -> FitResult:
    """Train ``model`` in place with mini-batch gradient descent; resumable and deterministic on CPU.

    How to train (epochs, batch size, optimiser, seed, device, checkpoints, progress) is one
    :class:`~helpers.training.TrainSettings`; what to train on and with which loss are the other arguments.

    Parameters
    ----------
    model : torch.nn.Module
        Trained in place and left on the chosen device in train mode.
    train : arrays ``(x, y[, w])``, dict of arrays, torch Dataset, or iterable of batches
        See the package docstring.  ``w`` holds per-sample loss weights (≥ 0).
    settings : TrainSettings, optional
        How to train (default ``TrainSettings()``: one epoch, batches of 64, Adam at 1e-3, seed 0).
    loss_fn : callable(logits, y) -> per-sample losses, optional
        Default: cross-entropy with ``reduction="none"``.  It must return one loss per sample so weights apply.
    weight_reduction : {"mean", "weighted_mean"}
        With weights ``w``: ``"mean"`` gives Σ wᵢℓᵢ / B (the empirical version of paper 3 eq. 3, where
        pseudo-labelled points carry weight γ), ``"weighted_mean"`` gives Σ wᵢℓᵢ / Σ wᵢ.
    compute_loss : callable(model, batch, progress) -> scalar tensor, optional
        Replaces forward + ``loss_fn`` entirely (e.g. :class:`helpers.models.dann.DANNLoss`); ``batch`` is on the
        device, ``progress`` = step / total steps in [0, 1].
    forward_fn : callable(model, inputs) -> logits, optional
        Default: ``model(**inputs)`` for dict inputs, else ``model(inputs)``; ``.logits`` of the output is taken
        when present (transformers).
    collate_fn : callable, optional
        Collates dataset items into a batch (e.g. :meth:`helpers.models.text.Vocab.collate`).
    lengths : sequence of int, optional
        One length per training example (e.g. tokens): batches are then length-bucketed ("sortish": pools of 50
        batches sorted by length, batch order shuffled), so dynamic padding wastes little compute on long, varied
        texts.  Indexable data only.
    eval_data, eval_fn :
        Evaluate on ``eval_data`` every ``settings.eval_every`` steps (default: end of each epoch) and at the end;
        ``eval_fn(model, eval_data)`` returns a dict of metrics or a float; default: accuracy and CE loss.
    callback : callable(StepInfo), optional
        Called after each step (after any checkpoint); raise (e.g. :class:`TrainingInterrupted`) to stop early.
    **overrides :
        Settings to change for this call only (``fit(model, data, epochs=3)``), checked by
        :meth:`TrainSettings.replace`: an unknown name raises.

    Returns
    -------
    FitResult
    """
    t0 = time.perf_counter()
    s = TrainSettings.resolve(settings, **overrides)
    if weight_reduction not in ("mean", "weighted_mean"):
        raise InputValidationError(
            f"weight_reduction: expected 'mean' or 'weighted_mean', got {weight_reduction!r}"
        )
    dev = get_device(s.device)
    plan = _plan(train, collate_fn, epochs=s.total_epochs, max_steps=s.max_steps, batch_size=s.batch_size,
                 drop_last=s.drop_last)  # fmt: skip
    model.to(dev)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = _make_optimizer(s.optimizer, params, s.lr, s.weight_decay, s.optimizer_options())
    sched = _make_scheduler(s.scheduler, opt, plan.total_steps, s.warmup)
    precision = Precision.for_device(dev, s.amp)

    def evaluate():
        if eval_fn is not None:
            return eval_fn(model, eval_data)
        return _accuracy_eval(model, eval_data, batch_size=s.eval_batch_size, device=dev, forward_fn=forward_fn,
                              collate_fn=collate_fn, amp=s.amp)  # fmt: skip

    config = {"seed": s.seed, "batch_size": s.batch_size, "shuffle": bool(s.shuffle)}
    if lengths is not None:
        lengths = torch.as_tensor(np.asarray(lengths), dtype=torch.long)
        if not plan.indexable or lengths.shape != (plan.n,):
            raise InputValidationError(
                f"lengths: expected one length per training example ({plan.n}) of indexable data, "
                f"got shape {tuple(lengths.shape)}"
            )
        config["bucketed"] = True
    run = _Run(model, opt, sched, precision, plan, config, FitResult(), evaluate if eval_data is not None else None)
    if s.checkpoint_dir is not None and s.resume:
        position = resume_latest(s.checkpoint_dir, config, model=model, optimizer=opt, scheduler=sched,
                                 scaler=precision.scaler, result=run.result)  # fmt: skip
        if position is not None:
            run.step, run.epoch, run.batch_in_epoch = position
    if run.result.resumed_from is None:
        seed_everything(s.seed)
    loss_kwargs = dict(
        forward=forward_fn or _default_forward,
        loss_fn=loss_fn or (lambda logits, y: F.cross_entropy(logits, y, reduction="none")),
        compute_loss=compute_loss,
        weight_reduction=weight_reduction,
    )
    _loop(run, s, loss_kwargs=loss_kwargs, device=dev, lengths=lengths, callback=callback)
    result = run.result
    result.steps = run.step
    spe = plan.steps_per_epoch
    result.epochs = run.epoch + (run.batch_in_epoch / spe if spe else 0.0)
    result.wall_time_s = time.perf_counter() - t0
    note_training("fit", steps=run.step - (result.resumed_from or 0), seconds=result.wall_time_s, device=dev)
    return result


def _loop(run: _Run, s: TrainSettings, *, loss_kwargs: dict, device, lengths, callback) -> None:
    """Epochs of optimiser steps until ``s.epochs`` or ``s.max_steps``; evaluation and checkpoints on the way, a
    final evaluation and checkpoint at the end."""
    from helpers.progress import tqdm

    total = run.plan.total_steps
    epochs, ckdir, progress = s.total_epochs, s.checkpoint_dir, s.progress

    def done() -> bool:
        return (s.max_steps is not None and run.step >= s.max_steps) or (epochs is not None and run.epoch >= epochs)

    label = progress if isinstance(progress, str) and progress else "fit"
    bar = tqdm(total=total, initial=run.step, disable=not progress, desc=label, leave=False)
    run.model.train()
    try:
        with _deterministic(s.deterministic):
            while not done():
                for batch in _epoch_batches(run, seed=s.seed, shuffle=s.shuffle, batch_size=s.batch_size, lengths=lengths):
                    batch = _to_device(batch, device)
                    frac = run.step / total if total else float("nan")
                    with run.precision.autocast():
                        loss = _batch_loss(run.model, batch, progress_frac=frac, **loss_kwargs)
                    _optimiser_step(run, loss, s.grad_clip)
                    run.step += 1
                    run.batch_in_epoch += 1
                    loss_value = float(loss.detach())
                    run.result.losses.append(loss_value)
                    bar.update(1)
                    bar.set_postfix(loss=f"{loss_value:.4f}", refresh=False)
                    if s.eval_every and run.step % s.eval_every == 0:
                        run.run_eval()
                    if ckdir is not None and s.checkpoint_every and run.step % s.checkpoint_every == 0:
                        run.save(ckdir, s.keep_checkpoints)
                    if callback is not None:
                        callback(StepInfo(run.step, run.epoch, run.batch_in_epoch, loss_value,
                                          run.step / total if total else float("nan"), run.model, run.opt))  # fmt: skip
                    if s.max_steps is not None and run.step >= s.max_steps:
                        break
                else:
                    run.epoch += 1
                    run.batch_in_epoch = 0
                    if not s.eval_every:
                        run.run_eval()
                    continue
                break  # max_steps reached inside the epoch
            run.run_eval()
            last = run.result.checkpoint
            if ckdir is not None and (last is None or last.name != f"ckpt_step{run.step:09d}.pt"):
                run.save(ckdir, s.keep_checkpoints)
    finally:
        bar.close()
