"""Device and precision policy, and seeds: where :func:`~helpers.training.fit` computes and how reproducibly."""

from __future__ import annotations

import contextlib
import os
import random
from dataclasses import dataclass

import numpy as np
import torch

#: environment variable that decides what ``"auto"`` means (e.g. ``cpu`` on a GPU machine); unset: CUDA when present
DEVICE_ENV = "HELPERS_DEVICE"


def get_device(device: str | torch.device | None = "auto") -> torch.device:
    """Return the device to compute on.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda", "cuda:N", "mps"} or torch.device, default "auto"
        ``"auto"`` (or ``None``) is ``$HELPERS_DEVICE`` when that is set (the test suite sets ``cpu``, so its
        pinned numbers hold on a GPU machine too), else CUDA when ``torch.cuda.is_available()``, else CPU.

    Returns
    -------
    torch.device

    Examples
    --------
    >>> get_device("cpu")
    device(type='cpu')
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        chosen = os.environ.get(DEVICE_ENV, "").strip()
        if chosen and chosen != "auto":
            return torch.device(chosen)
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


@dataclass(frozen=True)
class Precision:
    """Mixed-precision policy of one training run: autocast only on CUDA, bfloat16 when the card supports it,
    else float16 with a gradient scaler (``scaler`` is ``None`` whenever no scaling is needed)."""

    enabled: bool
    dtype: torch.dtype
    scaler: torch.amp.GradScaler | None

    @classmethod
    def for_device(cls, device: torch.device, amp: bool) -> Precision:
        enabled = bool(amp) and device.type == "cuda"
        dtype = torch.bfloat16 if enabled and torch.cuda.is_bf16_supported() else torch.float16
        scaler = torch.amp.GradScaler("cuda") if enabled and dtype == torch.float16 else None
        return cls(enabled, dtype, scaler)

    def autocast(self):
        return torch.autocast(device_type="cuda", dtype=self.dtype, enabled=self.enabled)
