"""Batched prediction in input order: logits (:func:`predict`) or penultimate features and logits in one pass
(:func:`features_and_logits`), on the device of the model, in eval mode and without gradients."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.training.data import (
    _ArrayData,
    _DatasetData,
    _default_forward,
    _normalise_data,
    _split_batch,
    _to_device,
)
from helpers.training.device import get_device

__all__ = ["predict", "features_and_logits", "in_length_order"]


def _predict_impl(model, data, *, batch_size, device, progress, forward_fn, collate_fn, amp, want_labels):
    from helpers.progress import tqdm

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


def features_and_logits(
    model, x, *, head: Callable | None = None, batch_size: int = 500, preprocess: Callable | None = None
) -> dict[str, np.ndarray]:
    """Penultimate features and logits of ``model`` on ``x`` in one pass, in order (eval mode, no gradients).

    ``model.features(x)`` gives the features and ``head`` (default ``model.linear`` or ``model.classifier``) the
    logits from them; ``preprocess`` maps a numpy batch to the model's input tensor (default ``torch.as_tensor``)
    or to a mapping of keyword inputs (e.g. a MiniLM tokenizer's output), passed as ``model.features(**batch)``.
    Batches go to the device of the model's parameters; the arrays come back on the CPU.
    """
    head = head or getattr(model, "linear", None) or getattr(model, "classifier", None)
    if head is None or not hasattr(model, "features"):
        raise InputValidationError(
            "model: expected .features() and a .linear/.classifier head, or pass head="
        )
    if batch_size < 1:
        raise InputValidationError(f"batch_size: expected a positive integer, got {batch_size!r}")
    prep = preprocess or (lambda b: torch.as_tensor(np.asarray(b, dtype=np.float32)))
    model.eval()
    param = next(model.parameters(), None)
    dev = param.device if param is not None else torch.device("cpu")  # e.g. left on the GPU by training.fit
    feats, logits = [], []
    with torch.inference_mode():
        for i in range(0, len(x), batch_size):
            batch = prep(x[i : i + batch_size])
            if isinstance(batch, Mapping):
                f = model.features(**{k: v.to(dev) for k, v in batch.items()})
            else:
                f = model.features(batch.to(dev))
            feats.append(f.float().cpu().numpy())
            logits.append(head(f).float().cpu().numpy())
    return {"features": np.concatenate(feats), "logits": np.concatenate(logits)}


def in_length_order(fn: Callable[[list], Any], texts: Sequence) -> Any:
    """``fn(texts)`` computed on ``texts`` sorted by length (stable) and returned in input order.

    For batched inference on texts: similar lengths share a batch, so dynamic padding pads little (padding is
    masked, so outputs equal those of the input order up to float rounding).  ``fn`` returns an array with one row
    per text, or a dict of such arrays.
    """
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = fn([texts[i] for i in order])
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    return {k: np.asarray(v)[inv] for k, v in out.items()} if isinstance(out, dict) else np.asarray(out)[inv]
