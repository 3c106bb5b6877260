"""One training loop and one batched prediction function, used by every notebook.

``fit`` trains a ``torch.nn.Module`` in place with deterministic, resumable data order; ``predict`` returns logits as
a float32 numpy array in input order, ``features_and_logits`` penultimate features and logits in one pass.  They pick
the device themselves (CUDA when present, else CPU), so notebooks never call ``.cuda()``.

=====================  ==============================================================================
module                 what it holds
=====================  ==============================================================================
:mod:`.settings`       :class:`TrainSettings`: how to train (epochs, batches, optimiser, seed, device, checkpoints)
:mod:`.loop`           :func:`fit`: plan, resume-or-seed, epochs of steps, evaluation hook, checkpoints
:mod:`.predict`        :func:`predict`, :func:`features_and_logits`
:mod:`.data`           the accepted data forms and the deterministic per-epoch order
:mod:`.device`         device choice, mixed-precision policy, seeds, deterministic algorithms
:mod:`.optim`          optimisers and learning-rate schedules by name
:mod:`.checkpoints`    atomic checkpoints, RNG states, resume from the newest one
:mod:`.members`        fast loop for small models on in-memory tensors; N members at once (vectorised)
=====================  ==============================================================================

Data accepted by :func:`fit` and :func:`predict`
------------------------------------------------
* a tuple/list of arrays or tensors ``(x, y)`` or ``(x, y, w)`` (more columns are passed on to ``compute_loss``)
  (``w``: per-sample loss weights, e.g. the γ of self-training ensembles, paper 3 eq. 3); ``x`` may also be a dict
  of arrays (``input_ids``, ``attention_mask``);
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

from helpers.training.checkpoints import latest_checkpoint, load_checkpoint
from helpers.training.device import get_device, seed_everything
from helpers.training.loop import FitResult, StepInfo, TrainingInterrupted, fit
from helpers.training.optim import linear_schedule
from helpers.training.predict import features_and_logits, in_length_order, predict
from helpers.training.settings import TrainSettings

__all__ = [
    "get_device",
    "seed_everything",
    "fit",
    "TrainSettings",
    "predict",
    "in_length_order",
    "features_and_logits",
    "FitResult",
    "StepInfo",
    "latest_checkpoint",
    "load_checkpoint",
    "linear_schedule",
    "TrainingInterrupted",
]
