"""One training loop and one batched prediction function, used by every notebook.

``fit`` trains a ``torch.nn.Module`` in place with deterministic, resumable data order; ``predict`` returns logits as
a float32 numpy array in input order.  Both pick the device themselves (CUDA when present, else CPU), so notebooks
never call ``.cuda()``.

Data accepted by :func:`fit` and :func:`predict`
------------------------------------------------
* a tuple/list of arrays or tensors ``(x, y)`` or ``(x, y, w)`` (more columns are passed on to ``compute_loss``) (``w``: per-sample loss weights, e.g. the γ of
  self-training ensembles, paper 3 eq. 3); ``x`` may also be a dict of arrays (``input_ids``, ``attention_mask``);
* a dict of arrays with a ``"labels"`` key (and optionally ``"weights"``), as produced by tokenizers;
* a map-style ``torch.utils.data.Dataset`` whose items are ``(x, y)``/``(x, y, w)`` (collated with ``collate_fn``,
  default ``torch.utils.data.default_collate``);
* any other iterable of ready-made batches (e.g. a ``DataLoader``).  Exact mid-epoch resume is only guaranteed for
  the first three forms, whose order this module controls; an iterable is re-iterated and the already-seen batches
  of the epoch are skipped, which replays the same batches only if the iterable's order is deterministic (a
  ``DataLoader`` with ``shuffle=False``, or with its own seeded ``generator`` re-seeded per epoch by the caller).

For :func:`predict` the same forms work; labels and weights are ignored, and a bare array/tensor is the input.

Reproducibility
---------------
The shuffling order of epoch ``e`` is a function of ``(seed, e)`` only (a fresh ``torch.Generator`` seeded from
``numpy.random.SeedSequence([seed, e])``), so a resumed run replays exactly the batches an uninterrupted run would
see.  Checkpoints hold the model, optimizer, scheduler, AMP scaler, the global RNG states (torch CPU and CUDA,
numpy, python ``random``, stored as tensors/plain types so ``torch.load(..., weights_only=True)`` accepts them), the
step, epoch, position in the epoch and the history.  On CPU a resumed run ends with bit-identical weights.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import re
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError

__all__ = [
    "get_device",
    "seed_everything",
    "fit",
    "predict",
    "FitResult",
    "StepInfo",
    "latest_checkpoint",
    "load_checkpoint",
    "linear_schedule",
    "TrainingInterrupted",
]

_CKPT_RE = re.compile(r"^ckpt_step(\d+)\.pt$")


class TrainingInterrupted(RuntimeError):
    """Raised by a callback to stop :func:`fit` early (the latest checkpoint stays on disk for resuming)."""


# --------------------------------------------------------------------------------------------------------------------
# device and seeds
# --------------------------------------------------------------------------------------------------------------------
def get_device(device: str | torch.device | None = "auto") -> torch.device:
    """Return the device to compute on.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default "auto"
        ``"auto"`` (or ``None``) picks CUDA when ``torch.cuda.is_available()``, else CPU.

    Returns
    -------
    torch.device
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def seed_everything(seed: int) -> None:
    """Seed python ``random``, numpy's global RNG and torch (CPU and every CUDA device).

    Parameters
    ----------
    seed : int
        Any non-negative integer.
    """
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


@contextlib.contextmanager
def _deterministic(enabled: bool):
    """Turn on ``torch.use_deterministic_algorithms`` (warn-only) for the block and restore the old setting."""
    if not enabled:
        yield
        return
    old = torch.are_deterministic_algorithms_enabled()
    old_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(old, warn_only=old_warn)


def _epoch_generator(seed: int, epoch: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(
        int(np.random.SeedSequence([int(seed), int(epoch)]).generate_state(1, dtype=np.uint64)[0] >> 1)
    )
    return g


# --------------------------------------------------------------------------------------------------------------------
# data normalisation
# --------------------------------------------------------------------------------------------------------------------
def _as_tensor(a: Any) -> Any:
    """numpy → torch with float64 → float32; tensors pass; dicts/lists of arrays recurse; other objects pass."""
    if isinstance(a, torch.Tensor):
        return a
    if isinstance(a, np.ndarray):
        if a.dtype == object:
            return a
        t = torch.from_numpy(np.ascontiguousarray(a))
        return t.float() if t.dtype == torch.float64 else t
    if isinstance(a, Mapping):
        return {k: _as_tensor(v) for k, v in a.items()}
    return a


def _length(a: Any) -> int:
    if isinstance(a, Mapping):
        return _length(next(iter(a.values())))
    return len(a)


def _take(a: Any, idx: torch.Tensor) -> Any:
    if isinstance(a, Mapping):
        return {k: _take(v, idx) for k, v in a.items()}
    if isinstance(a, torch.Tensor):
        return a[idx]
    if isinstance(a, np.ndarray):
        return a[idx.numpy()]
    return [a[i] for i in idx.tolist()]


class _ArrayData:
    """Column-wise arrays (inputs, labels, weights) with fast batched indexing."""

    def __init__(self, columns: Sequence[Any]):
        self.columns = [_as_tensor(c) for c in columns]
        n = {_length(c) for c in self.columns}
        if len(n) != 1:
            raise InputValidationError(f"data: all arrays must have the same length, got lengths {sorted(n)}")
        self.n = n.pop()

    def __len__(self) -> int:
        return self.n

    def batch(self, idx: torch.Tensor) -> tuple:
        return tuple(_take(c, idx) for c in self.columns)


class _DatasetData:
    """A map-style dataset; items are collated with ``collate_fn``."""

    def __init__(self, dataset: Any, collate_fn: Callable | None):
        self.dataset = dataset
        self.collate_fn = collate_fn or torch.utils.data.default_collate
        self.n = len(dataset)

    def __len__(self) -> int:
        return self.n

    def batch(self, idx: torch.Tensor) -> Any:
        return self.collate_fn([self.dataset[i] for i in idx.tolist()])


def _normalise_data(data: Any, collate_fn: Callable | None, *, inputs_only: bool = False) -> Any:
    """Return an ``_ArrayData``/``_DatasetData`` (indexable) or the iterable itself."""
    if isinstance(data, (np.ndarray, torch.Tensor)):
        return _ArrayData([data])
    if isinstance(data, Mapping):
        d = dict(data)
        cols: list[Any] = []
        y = d.pop("labels", d.pop("label", None))
        w = d.pop("weights", d.pop("weight", None))
        cols = [d] + ([y] if y is not None else []) + ([w] if w is not None and y is not None else [])
        return _ArrayData(cols[:1] if inputs_only else cols)
    if (
        isinstance(data, (tuple, list))
        and len(data) >= 1
        and all(isinstance(c, (np.ndarray, torch.Tensor, Mapping)) for c in data)
    ):
        return _ArrayData(data[:1] if inputs_only else data)
    if (
        hasattr(data, "__getitem__")
        and hasattr(data, "__len__")
        and not isinstance(data, torch.utils.data.DataLoader)
    ):
        return _DatasetData(data, collate_fn)
    if isinstance(data, Iterable):
        return data
    raise InputValidationError(
        "data: expected arrays (x, y[, w]), a dict of arrays, a torch Dataset or an iterable of batches, "
        f"got {type(data).__name__}"
    )


def _split_batch(batch: Any) -> tuple[Any, Any, Any]:
    """Split a batch into ``(inputs, labels or None, weights or None)``."""
    if isinstance(batch, Mapping):
        b = dict(batch)
        y = b.pop("labels", b.pop("label", None))
        w = b.pop("weights", b.pop("weight", None))
        return b, y, w
    if isinstance(batch, (tuple, list)):
        if len(batch) == 1:
            return batch[0], None, None
        if len(batch) == 2:
            return batch[0], batch[1], None
        if len(batch) == 3:
            return batch[0], batch[1], batch[2]
        raise InputValidationError(
            f"batch: expected (x,), (x, y) or (x, y, w), got a sequence of {len(batch)}"
        )
    return batch, None, None


def _to_device(obj: Any, device: torch.device) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=device.type == "cuda")
    if isinstance(obj, np.ndarray):
        return _to_device(_as_tensor(obj), device)
    if isinstance(obj, Mapping):
        return {k: _to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    return obj


def _default_forward(model: nn.Module, inputs: Any) -> torch.Tensor:
    out = model(**inputs) if isinstance(inputs, Mapping) else model(inputs)
    if hasattr(out, "logits"):
        out = out.logits
    elif isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _batch_size_of(inputs: Any) -> int:
    if isinstance(inputs, Mapping):
        return _batch_size_of(next(iter(inputs.values())))
    if isinstance(inputs, (list, tuple)):
        return _batch_size_of(inputs[0]) if inputs and isinstance(inputs[0], torch.Tensor) else len(inputs)
    return int(inputs.shape[0])


# --------------------------------------------------------------------------------------------------------------------
# optimiser, schedule, checkpoints
# --------------------------------------------------------------------------------------------------------------------
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


def _rng_state() -> dict:
    py = random.getstate()
    np_state = np.random.get_state()
    state = {
        "torch": torch.get_rng_state(),
        "python": [int(py[0]), torch.tensor(py[1], dtype=torch.int64), py[2]],
        "numpy": [
            str(np_state[0]),
            torch.from_numpy(np_state[1].astype(np.int64)),
            int(np_state[2]),
            int(np_state[3]),
            float(np_state[4]),
        ],
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: Mapping) -> None:
    torch.set_rng_state(state["torch"])
    v, internal, gauss = state["python"]
    random.setstate((v, tuple(int(i) for i in internal.tolist()), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    if "cuda" in state and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(state["cuda"])


def _checkpoints(directory: Path) -> list[tuple[int, Path]]:
    if not directory.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in directory.iterdir() if (m := _CKPT_RE.match(p.name))]
    return sorted(found)


def latest_checkpoint(checkpoint_dir: str | os.PathLike) -> Path | None:
    """Path of the checkpoint with the highest step in ``checkpoint_dir`` (``None`` if there is none)."""
    found = _checkpoints(Path(checkpoint_dir))
    return found[-1][1] if found else None


def load_checkpoint(path: str | os.PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Load a checkpoint written by :func:`fit` (``torch.load(..., weights_only=True)``)."""
    return torch.load(path, map_location=map_location, weights_only=True)


def _save_checkpoint(directory: Path, step: int, payload: dict, keep: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"ckpt_step{step:09d}.pt"
    tmp = directory / f".{final.name}.tmp{os.getpid()}"
    torch.save(payload, tmp)
    os.replace(tmp, final)
    for _, old in _checkpoints(directory)[:-keep] if keep > 0 else []:
        with contextlib.suppress(FileNotFoundError):
            old.unlink()
    return final


# --------------------------------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------------------------------
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
# fit
# --------------------------------------------------------------------------------------------------------------------
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


def fit(
    model: nn.Module,
    train: Any,
    *,
    epochs: int | None = None,
    max_steps: int | None = None,
    batch_size: int = 64,
    lr: float = 1e-3,
    optimizer: str | Callable[[Any], torch.optim.Optimizer] = "adam",
    optimizer_kwargs: dict | None = None,
    weight_decay: float = 0.0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    weight_reduction: str = "mean",
    compute_loss: Callable[[nn.Module, Any, float], torch.Tensor] | None = None,
    forward_fn: Callable[[nn.Module, Any], torch.Tensor] | None = None,
    collate_fn: Callable | None = None,
    shuffle: bool = True,
    drop_last: bool = False,
    seed: int = 0,
    device: str | torch.device = "auto",
    amp: bool = True,
    grad_clip: float | None = None,
    scheduler: str | Callable | None = None,
    warmup: int | float = 0,
    eval_data: Any = None,
    eval_every: int | None = None,
    eval_fn: Callable[[nn.Module, Any], dict | float] | None = None,
    eval_batch_size: int = 256,
    checkpoint_dir: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    keep_checkpoints: int = 2,
    resume: bool = True,
    callback: Callable[[StepInfo], Any] | None = None,
    progress: bool = True,
    deterministic: bool = True,
) -> FitResult:
    """Train ``model`` in place with mini-batch gradient descent; resumable and deterministic on CPU.

    Parameters
    ----------
    model : torch.nn.Module
        Trained in place and left on the chosen device in train mode.
    train : arrays ``(x, y[, w])``, dict of arrays, torch Dataset, or iterable of batches
        See the module docstring.  ``w`` holds per-sample loss weights (≥ 0).
    epochs, max_steps : int, optional
        Stop after ``epochs`` passes or ``max_steps`` optimiser steps, whichever comes first (default 1 epoch).
    batch_size : int, default 64
        Examples per optimiser step (ignored for iterables of ready-made batches).
    lr : float, default 1e-3
        Base learning rate.
    optimizer : {"adam", "adamw", "sgd"} or callable(params) -> Optimizer
        Extra constructor arguments (``momentum``, ``nesterov``, ``betas``) go in ``optimizer_kwargs``.
    weight_decay : float, default 0
        L2 penalty (decoupled for AdamW).
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
    shuffle : bool, default True
        Reshuffle each epoch with a generator seeded from ``(seed, epoch)``.
    seed : int, default 0
        Seeds the data order and, for a fresh run, the global RNGs (dropout) via :func:`seed_everything`.
    device : str, default "auto"
        See :func:`get_device`.
    amp : bool, default True
        Mixed precision (bfloat16 when supported, else float16 with a gradient scaler); only on CUDA.
    grad_clip : float, optional
        Clip the global gradient L2 norm to this value.
    scheduler : {"linear", "constant", "cosine"} or callable(optimizer, total_steps) -> LRScheduler, optional
        Stepped after every optimiser step; ``warmup`` is in steps (int) or a fraction of all steps (float < 1).
    eval_data, eval_every, eval_fn :
        Evaluate on ``eval_data`` every ``eval_every`` steps (default: end of each epoch) and at the end.
        ``eval_fn(model, eval_data)`` returns a dict of metrics or a float; default: accuracy and CE loss.
    checkpoint_dir, checkpoint_every, keep_checkpoints, resume :
        Write a checkpoint every ``checkpoint_every`` steps and at the end (atomically: temporary file, then
        ``os.replace``), keep the newest ``keep_checkpoints``, and with ``resume=True`` continue from the newest
        one found in ``checkpoint_dir``.
    callback : callable(StepInfo), optional
        Called after each step (after any checkpoint); raise (e.g. :class:`TrainingInterrupted`) to stop early.
    progress : bool, default True
        Show a tqdm progress bar.
    deterministic : bool, default True
        Use ``torch.use_deterministic_algorithms(True, warn_only=True)`` during the call (restored afterwards).

    Returns
    -------
    FitResult
    """
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    dev = get_device(device)
    if epochs is None and max_steps is None:
        epochs = 1
    if weight_reduction not in ("mean", "weighted_mean"):
        raise InputValidationError(
            f"weight_reduction: expected 'mean' or 'weighted_mean', got {weight_reduction!r}"
        )
    if batch_size < 1:
        raise InputValidationError(f"batch_size: expected a positive integer, got {batch_size}")
    data = _normalise_data(train, collate_fn)
    indexable = isinstance(data, (_ArrayData, _DatasetData))
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
    total_steps: int | None
    if epochs is not None and steps_per_epoch is not None:
        total_steps = epochs * steps_per_epoch
        total_steps = min(total_steps, max_steps) if max_steps is not None else total_steps
    else:
        total_steps = max_steps

    model.to(dev)
    opt = _make_optimizer(
        optimizer,
        [p for p in model.parameters() if p.requires_grad],
        lr,
        weight_decay,
        dict(optimizer_kwargs or {}),
    )
    sched = _make_scheduler(scheduler, opt, total_steps, warmup)
    use_amp = bool(amp) and dev.type == "cuda"
    amp_dtype = torch.bfloat16 if use_amp and torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda") if use_amp and amp_dtype == torch.float16 else None
    fwd = forward_fn or _default_forward
    base_loss = loss_fn or (lambda logits, y: F.cross_entropy(logits, y, reduction="none"))

    result = FitResult()
    step, epoch, batch_in_epoch = 0, 0, 0
    ckdir = Path(checkpoint_dir) if checkpoint_dir is not None else None
    config = {"seed": int(seed), "batch_size": int(batch_size), "shuffle": bool(shuffle)}
    if ckdir is not None and resume:
        for ck_step, path in reversed(_checkpoints(ckdir)):
            try:
                ck = load_checkpoint(path, map_location="cpu")
            except Exception as exc:  # a torn or foreign file: fall back to the previous one
                warnings.warn(
                    f"could not read checkpoint {path.name} ({exc}); trying an older one", stacklevel=2
                )
                continue
            if ck.get("config") != config:
                raise InputValidationError(
                    f"checkpoint_dir: {path} was written with {ck.get('config')}, this call uses {config}; "
                    "pass resume=False or another checkpoint_dir"
                )
            model.load_state_dict(ck["model"])
            opt.load_state_dict(ck["optimizer"])
            if sched is not None and ck.get("scheduler") is not None:
                sched.load_state_dict(ck["scheduler"])
            if scaler is not None and ck.get("scaler") is not None:
                scaler.load_state_dict(ck["scaler"])
            _set_rng_state(ck["rng"])
            step, epoch, batch_in_epoch = int(ck["step"]), int(ck["epoch"]), int(ck["batch_in_epoch"])
            result.losses = list(ck["history"]["losses"])
            result.evals = [dict(e) for e in ck["history"]["evals"]]
            result.resumed_from = ck_step
            result.checkpoint = path
            break
    if result.resumed_from is None:
        seed_everything(seed)

    def payload() -> dict:
        return {
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict() if sched is not None else None,
            "scaler": scaler.state_dict() if scaler is not None else None,
            "rng": _rng_state(),
            "step": step,
            "epoch": epoch,
            "batch_in_epoch": batch_in_epoch,
            "config": config,
            "history": {"losses": list(result.losses), "evals": list(result.evals)},
        }

    def run_eval() -> None:
        if eval_data is None:
            return
        if result.evals and result.evals[-1]["step"] == step:
            return
        was_training = model.training
        if eval_fn is not None:
            metrics = eval_fn(model, eval_data)
        else:
            metrics = _accuracy_eval(
                model,
                eval_data,
                batch_size=eval_batch_size,
                device=dev,
                forward_fn=forward_fn,
                collate_fn=collate_fn,
                amp=amp,
            )
        model.train(was_training)
        metrics = {"value": float(metrics)} if not isinstance(metrics, Mapping) else dict(metrics)
        result.evals.append(
            {"step": step, "epoch": epoch + batch_in_epoch / max(1, steps_per_epoch or 1), **metrics}
        )

    def done() -> bool:
        if max_steps is not None and step >= max_steps:
            return True
        return epochs is not None and epoch >= epochs

    bar = tqdm(total=total_steps, initial=step, disable=not progress, desc="fit", leave=False)
    model.train()
    try:
        with _deterministic(deterministic):
            while not done():
                if indexable:
                    g = _epoch_generator(seed, epoch)
                    order = torch.randperm(n, generator=g) if shuffle else torch.arange(n)
                    n_batches = steps_per_epoch
                    batches = (
                        data.batch(order[b * batch_size : (b + 1) * batch_size])
                        for b in range(batch_in_epoch, n_batches)
                    )
                elif batch_in_epoch:
                    # resuming mid-epoch: the global RNG was restored to its state after this epoch's iterator was
                    # made, so creating it again (a DataLoader draws a seed) and skipping must not disturb it
                    snapshot = _rng_state()
                    it = iter(data)
                    for _ in range(batch_in_epoch):
                        next(it)
                    _set_rng_state(snapshot)
                    batches = it
                else:
                    batches = iter(data)
                for batch in batches:
                    batch = _to_device(batch, dev)
                    progress_frac = step / total_steps if total_steps else float("nan")
                    with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
                        if compute_loss is not None:
                            loss = compute_loss(model, batch, progress_frac)
                        else:
                            inputs, y, w = _split_batch(batch)
                            if y is None:
                                raise InputValidationError(
                                    "train: batches must carry labels: (x, y) or (x, y, w)"
                                )
                            per = base_loss(fwd(model, inputs), y).float()
                            if w is None:
                                loss = per.mean()
                            else:
                                if per.ndim != 1:
                                    raise InputValidationError(
                                        f"loss_fn: expected one loss per sample with weights, got shape {tuple(per.shape)}"
                                    )
                                w = w.to(per.dtype)
                                denom = (
                                    w.sum().clamp_min(1e-12)
                                    if weight_reduction == "weighted_mean"
                                    else per.numel()
                                )
                                loss = (per * w).sum() / denom
                    opt.zero_grad(set_to_none=True)
                    if scaler is not None:
                        scaler.scale(loss).backward()
                        scaler.unscale_(opt)
                    else:
                        loss.backward()
                    if grad_clip is not None:
                        nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
                    if scaler is not None:
                        scaler.step(opt)
                        scaler.update()
                    else:
                        opt.step()
                    if sched is not None:
                        sched.step()
                    step += 1
                    batch_in_epoch += 1
                    loss_value = float(loss.detach())
                    result.losses.append(loss_value)
                    bar.update(1)
                    bar.set_postfix(loss=f"{loss_value:.4f}", refresh=False)
                    if eval_every and step % eval_every == 0:
                        run_eval()
                    if ckdir is not None and checkpoint_every and step % checkpoint_every == 0:
                        result.checkpoint = _save_checkpoint(ckdir, step, payload(), keep_checkpoints)
                    if callback is not None:
                        callback(
                            StepInfo(
                                step,
                                epoch,
                                batch_in_epoch,
                                loss_value,
                                step / total_steps if total_steps else float("nan"),
                                model,
                                opt,
                            )
                        )
                    if max_steps is not None and step >= max_steps:
                        break
                else:
                    epoch += 1
                    batch_in_epoch = 0
                    if not eval_every:
                        run_eval()
                    continue
                break  # max_steps reached inside the epoch
            run_eval()
            if ckdir is not None and (
                result.checkpoint is None or result.checkpoint.name != f"ckpt_step{step:09d}.pt"
            ):
                result.checkpoint = _save_checkpoint(ckdir, step, payload(), keep_checkpoints)
    finally:
        bar.close()
    result.steps = step
    result.epochs = epoch + (batch_in_epoch / steps_per_epoch if steps_per_epoch else 0.0)
    result.wall_time_s = time.perf_counter() - t0
    return result


# --------------------------------------------------------------------------------------------------------------------
# predict
# --------------------------------------------------------------------------------------------------------------------
def _predict_impl(model, data, *, batch_size, device, progress, forward_fn, collate_fn, amp, want_labels):
    from tqdm.auto import tqdm

    dev = get_device(device)
    norm = _normalise_data(data, collate_fn, inputs_only=not want_labels)
    if isinstance(norm, (_ArrayData, _DatasetData)):
        n = len(norm)
        batches = (norm.batch(torch.arange(s, min(s + batch_size, n))) for s in range(0, n, batch_size))
        total = math.ceil(n / batch_size)
    else:
        batches = iter(norm)
        total = len(norm) if hasattr(norm, "__len__") else None
    fwd = forward_fn or _default_forward
    was_training = model.training
    model.to(dev)
    model.eval()
    outs: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    use_amp = bool(amp) and dev.type == "cuda"
    try:
        with torch.inference_mode(), torch.autocast(device_type="cuda", enabled=use_amp):
            for batch in tqdm(batches, total=total, disable=not progress, desc="predict", leave=False):
                inputs, y, _ = _split_batch(batch)
                logits = fwd(model, _to_device(inputs, dev))
                outs.append(logits.float().cpu().numpy())
                if y is not None:
                    labels.append(np.asarray(y.cpu() if isinstance(y, torch.Tensor) else y))
    finally:
        model.train(was_training)
    logits = (
        np.concatenate(outs, axis=0).astype(np.float32, copy=False) if outs else np.zeros((0, 0), np.float32)
    )
    if not want_labels:
        return logits, None
    y_all = np.concatenate(labels) if labels and len(labels) == len(outs) else None
    return logits, y_all


def predict(
    model: nn.Module,
    data: Any,
    *,
    batch_size: int = 256,
    device: str | torch.device = "auto",
    progress: bool = False,
    forward_fn: Callable[[nn.Module, Any], torch.Tensor] | None = None,
    collate_fn: Callable | None = None,
    amp: bool = False,
) -> np.ndarray:
    """Logits of ``model`` on ``data``, in input order (never shuffled).

    Parameters
    ----------
    model : torch.nn.Module
        Run in eval mode under ``torch.inference_mode``; its previous train/eval mode is restored afterwards.
    data : array, tensor, ``(x, ...)`` tuple, dict of arrays, torch Dataset or iterable of batches
        Labels/weights, if present, are ignored.
    batch_size : int, default 256
        Examples per forward pass; the result does not depend on it (up to float rounding).
    device : str, default "auto"
        See :func:`get_device`.  The model is moved there.
    progress : bool, default False
        Show a tqdm progress bar.
    forward_fn : callable(model, inputs) -> logits, optional
        As in :func:`fit`.
    collate_fn : callable, optional
        Collates dataset items (the same one used for training).
    amp : bool, default False
        Autocast on CUDA.

    Returns
    -------
    numpy.ndarray of float32, shape (n_samples, n_outputs)

    Examples
    --------
    Penultimate-layer features instead of logits (e.g. for the Fréchet distance):

    >>> feats = predict(model, x, forward_fn=lambda m, inputs: m.features(inputs))  # doctest: +SKIP
    """
    logits, _ = _predict_impl(
        model,
        data,
        batch_size=batch_size,
        device=device,
        progress=progress,
        forward_fn=forward_fn,
        collate_fn=collate_fn,
        amp=amp,
        want_labels=False,
    )
    return logits
