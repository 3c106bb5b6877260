"""Checkpoints of a training run: atomic writes, the newest-first resume, and the global RNG states stored as
tensors and plain types so that ``torch.load(..., weights_only=True)`` accepts them."""

from __future__ import annotations

import contextlib
import os
import random
import re
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

_CKPT_RE = re.compile(r"^ckpt_step(\d+)\.pt$")


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


def resume_latest(directory: Path, config: Mapping, *, model, optimizer, scheduler, scaler, result):
    """Restore model, optimiser, schedule, AMP scaler, RNG states and history from the newest readable checkpoint.

    A torn or foreign file is skipped with a warning (the previous one is tried); a checkpoint written with
    another ``config`` (seed, batch size, shuffling) is an error rather than a silent mix of two runs.  Fills
    ``result.losses``, ``.evals``, ``.resumed_from`` and ``.checkpoint``.

    Returns
    -------
    (step, epoch, batch_in_epoch) of the restored checkpoint, or ``None`` when there is none.
    """
    from helpers.errors import InputValidationError

    for ck_step, path in reversed(_checkpoints(directory)):
        try:
            ck = load_checkpoint(path, map_location="cpu")
        except Exception as exc:  # a torn or foreign file: fall back to the previous one
            warnings.warn(f"could not read checkpoint {path.name} ({exc}); trying an older one", stacklevel=3)
            continue
        if ck.get("config") != config:
            raise InputValidationError(
                f"checkpoint_dir: {path} was written with {ck.get('config')}, this call uses {config}; "
                "pass resume=False or another checkpoint_dir"
            )
        model.load_state_dict(ck["model"])
        optimizer.load_state_dict(ck["optimizer"])
        if scheduler is not None and ck.get("scheduler") is not None:
            scheduler.load_state_dict(ck["scheduler"])
        if scaler is not None and ck.get("scaler") is not None:
            scaler.load_state_dict(ck["scaler"])
        _set_rng_state(ck["rng"])
        result.losses = list(ck["history"]["losses"])
        result.evals = [dict(e) for e in ck["history"]["evals"]]
        result.resumed_from = ck_step
        result.checkpoint = path
        return int(ck["step"]), int(ck["epoch"]), int(ck["batch_in_epoch"])
    return None
