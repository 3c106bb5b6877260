"""Training-time notes for measuring a machine: when ``$HELPERS_TRAINING_LOG`` names a file, every training loop
(:func:`helpers.training.fit`, :func:`helpers.training.members.train_members`,
:func:`helpers.selftraining.adversarial.train_dann_paired`) appends one JSON line with its optimiser steps, seconds
and device.  ``make gpu-check`` sets it to report seconds per training step on a GPU; unset, nothing is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["TRAINING_LOG_ENV", "note_training"]

TRAINING_LOG_ENV = "HELPERS_TRAINING_LOG"


def note_training(trainer: str, *, steps: int, seconds: float, device: Any) -> None:
    """Append ``{"trainer", "steps", "seconds", "device", "notebook"}`` to ``$HELPERS_TRAINING_LOG`` (if set).

    Parameters
    ----------
    trainer : str
        Which loop trained (``"fit"``, ``"members"``, ``"dann"``).
    steps : int
        Optimiser steps taken in this call (a vectorised step of N members counts N).
    seconds : float
        Wall-clock seconds of this call, s.
    device : str or torch.device
    """
    path = os.environ.get(TRAINING_LOG_ENV)
    if not path or steps <= 0:
        return
    line = {"trainer": trainer, "steps": int(steps), "seconds": round(float(seconds), 4), "device": str(device),
            "notebook": os.environ.get("HELPERS_NOTEBOOK", "")}  # fmt: skip
    with Path(path).open("a", encoding="utf-8") as f:  # one short write per training call: lines stay whole
        f.write(json.dumps(line) + "\n")
