"""Fast training of small models on in-memory tensors: a plain loop, and N independent members trained at once.

:func:`fit` is the project's general loop (any data form, mixed precision, schedules, mid-epoch resume).  For the
tiny models of paper 3 (TF-IDF MLPs, 8x8-digit CNNs) at batch 8 its per-step machinery costs as much as the
arithmetic (4.1 ms per step against 2.2 ms for the loop below on the 5,000-input TF-IDF MLP, one thread of this
project's 2-core CPU; ``scripts/ensemble_training.py``, ``figures/study_ensemble_training.md``).  This module is the loop such models need: tensors loaded once, mini-batches
by index slicing, Adam with its fused kernel, nothing else per step.  It runs on the CPU, where the models and
the data are: at batch 8 a GPU would spend its time on kernel launches.

:func:`train_members` trains N models that share an architecture and data but not their initialisation nor their
shuffles (Ens Avg Conf, the T_RI members of paper 3 Algorithm 2) either one after the other (``vectorise=False``) or
as one vectorised model (``vectorise=True``: parameters stacked with :func:`torch.func.stack_module_state`, the
forward pass :func:`torch.func.vmap`-ed over members with :func:`torch.func.functional_call`).  Both paths draw
member i's batches from its own generator seeded with ``seeds[i]`` and use Adam element-wise, so they give the same
weights to float tolerance (``tests/test_training_members.py``).

Loss (both paths, and the authors' ``ensemble_self_training``): for a batch B of member i,
``L_i = (1/|B|) Σ_{j∈B} w_j · CE(h_i(x_j), y_j)`` -- the per-sample weights w carry the γ of paper 3 eq. 3.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError
from helpers.training.device import get_device
from helpers.training.settings import TrainSettings
from helpers.training.timing import note_training

#: "auto" vectorises members of at most this many parameters: the break-even measured by
#: ``scripts/ensemble_training.py`` lies between 100k and 200k parameters
VECTORISE_MAX_PARAMETERS = 100_000

__all__ = [
    "VECTORISE_MAX_PARAMETERS",
    "vectorises",
    "ConfigCheckpoint",
    "epoch_batches",
    "BatchStream",
    "seeded_generator",
    "make_adam",
    "as_tensor",
    "train_members",
    "train_classifier",
]


def vectorises(model: nn.Module, n_members: int) -> bool:
    """Whether :func:`train_members` with ``vectorise="auto"`` trains ``n_members`` copies of ``model`` as one
    vectorised model: more than one member, no buffers (batch-norm running statistics, which vmap cannot update in
    place) and at most :data:`VECTORISE_MAX_PARAMETERS` parameters.  Otherwise they are trained one after another."""
    size = sum(p.numel() for p in model.parameters())
    return n_members > 1 and not any(True for _ in model.buffers()) and size <= VECTORISE_MAX_PARAMETERS


def as_tensor(a: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A CPU tensor view of an array (no copy when possible)."""
    t = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
    return t.to(dtype) if dtype is not None and t.dtype != dtype else t


def epoch_batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """One epoch of shuffled index batches; a final batch of a single example is dropped (batch normalisation
    cannot train on it, and the authors' loops skip such batches)."""
    if n < 1 or batch_size < 1:
        raise InputValidationError(f"expected n ≥ 1 and batch_size ≥ 1, got n={n}, batch_size={batch_size}")
    batches = list(torch.randperm(n, generator=generator).split(int(batch_size)))
    if len(batches) > 1 and len(batches[-1]) == 1:
        batches.pop()
    return batches


class BatchStream:
    """Endless shuffled batches over n rows: a new shuffle whenever an epoch is used up (the authors' "re-create
    the iterator when it is exhausted" for the shorter of two paired streams)."""

    def __init__(self, n: int, batch_size: int, generator: torch.Generator):
        self.n, self.batch_size, self.generator = int(n), int(batch_size), generator
        self._queue: list[torch.Tensor] = []

    @property
    def batches_per_epoch(self) -> int:
        full, rest = divmod(self.n, self.batch_size)
        return full + (1 if rest > 1 or (rest == 1 and full == 0) else 0)

    def next(self) -> torch.Tensor:
        if not self._queue:
            self._queue = epoch_batches(self.n, self.batch_size, self.generator)
        return self._queue.pop(0)


#: device types with PyTorch's fused Adam kernel (a fused Adam on another device fails at its first step)
FUSED_ADAM_DEVICES = ("cpu", "cuda")


def make_adam(params: Sequence[torch.Tensor] | Any, lr: float) -> torch.optim.Adam:
    """Adam (β = 0.9, 0.999, ε = 1e-8, no weight decay) with the fused kernel where torch has one for the device
    (:data:`FUSED_ADAM_DEVICES`, floating-point parameters), else the default implementation."""
    params = list(params)
    if all(p.device.type in FUSED_ADAM_DEVICES and p.is_floating_point() for p in params):
        try:
            return torch.optim.Adam(params, lr=lr, fused=True)
        except (RuntimeError, ValueError):  # a torch build without the kernel
            pass
    return torch.optim.Adam(params, lr=lr)


def seeded_generator(seed: int) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded with ``seed`` (the batch order of one member, independent of the global RNG)."""
    g = torch.Generator()
    g.manual_seed(int(seed))
    return g


def _check_members(models: Sequence[nn.Module], seeds: Sequence[int]) -> None:
    if len(models) == 0:
        raise InputValidationError("models: expected at least one model")
    if len(seeds) != len(models):
        raise InputValidationError(f"seeds: expected one seed per model ({len(models)}), got {len(seeds)}")
    shapes = [tuple((k, tuple(v.shape)) for k, v in m.state_dict().items()) for m in models]
    if any(s != shapes[0] for s in shapes[1:]):
        raise InputValidationError("models: every member must have the same architecture")


def _weighted_ce(logits: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """mean_j w_j·CE(logits_j, y_j) over the last batch dimension (members stay separate)."""
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
    return (ce.reshape(y.shape) * w).mean(dim=-1)


class ConfigCheckpoint:
    """A training state saved atomically with the settings that produced it; ``load`` returns it only when the
    settings match (``None`` otherwise, or without a path).  Used for stacked member states here and for DANNs."""

    def __init__(self, path: str | Path | None, config: dict):
        self.path = Path(path) if path is not None else None
        self.config = config

    def load(self) -> dict | None:
        if self.path is None or not self.path.exists():
            return None
        payload = torch.load(self.path, map_location="cpu", weights_only=True)
        return payload if payload.get("config") == self.config else None

    def save(self, payload: dict) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        torch.save({**payload, "config": self.config}, tmp)
        tmp.replace(self.path)


def train_members(
    models: Sequence[nn.Module],
    x: Any,
    y: Any,
    weight: Any | None = None,
    settings: TrainSettings | None = None,
    *,
    seeds: Sequence[int] | None = None,
    vectorise: bool | str = "auto",
    checkpoint: str | Path | None = None,
    checkpoint_every: float = 60.0,
    **overrides: Any,
) -> list[nn.Module]:
    """Train N independent members on (x, y[, w]) with Adam and weighted cross-entropy, in place.

    Parameters
    ----------
    models : sequence of nn.Module
        Initialised members of one architecture (``model(x)`` returns class logits).
    x, y, weight : arrays or tensors, shapes (n, ...), (n,), (n,)
        Inputs, integer labels and per-sample loss weights (default 1).
    settings : TrainSettings
        ``epochs``, ``batch_size``, ``lr`` (Adam, constant learning rate), ``device`` (the members and the arrays
        are moved there; CUDA when present) and ``progress`` (a bar over epochs) are used; ``**overrides`` change
        them for this call.
    seeds : sequence of int, optional
        Member i shuffles with a ``torch.Generator`` seeded ``seeds[i]``: a fresh permutation every epoch
        (default ``settings.seed + i``).
    vectorise : bool or "auto"
        ``True``: one vmapped model over stacked parameters; ``False``: members one by one, epoch by epoch;
        ``"auto"``: vectorise when N > 1, the model has no buffers (batch-norm running statistics, which vmap
        cannot update in place) and at most :data:`VECTORISE_MAX_PARAMETERS` parameters.  Measured at batch 8,
        N = 20, one thread (``figures/study_ensemble_training.md``): a 4-layer MLP of width 128 takes 0.26 ms
        per member-step vectorised vs 0.65 one by one on 64 inputs (42k parameters), 0.71 vs 0.84 on 1,000 inputs
        (161k) and 5.3 vs 2.2 on 5,000 (TF-IDF, 673k parameters): a large first layer makes the step memory-bound (its weight gradient and Adam's update
        touch every weight whatever the batch), and the stacked gradients cost extra copies.
    checkpoint : path, optional
        A file saved every ``checkpoint_every`` seconds and at the end; a run with the same settings resumes from
        it (default ``settings.checkpoint_dir / "members.pt"`` when a checkpoint folder is set).

    Returns
    -------
    list of nn.Module
        ``models``, trained, in eval mode, on ``settings.device``.
    """
    from helpers.progress import tqdm

    s = TrainSettings.resolve(settings, **overrides)
    epochs, batch_size, lr = s.total_epochs, s.batch_size, s.lr
    seeds = [s.seed + i for i in range(len(models))] if seeds is None else seeds
    if checkpoint is None and s.checkpoint_dir is not None:
        checkpoint = s.checkpoint_dir / "members.pt"
    _check_members(models, seeds)
    xt, yt = as_tensor(x), as_tensor(y, torch.int64)
    wt = as_tensor(weight, torch.float32) if weight is not None else torch.ones(len(yt))
    if not (len(xt) == len(yt) == len(wt)) or len(yt) == 0:
        raise InputValidationError(
            f"x, y, weight: expected equal non-empty lengths, got {len(xt)}, {len(yt)}, {len(wt)}"
        )
    dev = get_device(s.device)  # the members and the arrays live there; batch indices stay on the CPU
    for m in models:
        m.to(dev)
    xt, yt, wt = xt.to(dev), yt.to(dev), wt.to(dev)
    if vectorise == "auto":
        vectorise = vectorises(models[0], len(models))
    elif vectorise and any(True for _ in models[0].buffers()):
        raise InputValidationError("vectorise=True: the model has buffers (batch norm); use vectorise=False")
    gens = [seeded_generator(seed) for seed in seeds]
    ck = ConfigCheckpoint(
        checkpoint,
        {
            "n": len(yt),
            "epochs": int(epochs),
            "batch_size": int(batch_size),
            "lr": float(lr),
            "seeds": [int(seed) for seed in seeds],
            "vectorise": bool(vectorise),
        },
    )
    engine = _Stacked(models, lr) if vectorise else _OneByOne(models, lr)
    start = 0
    saved = ck.load()
    if saved is not None:
        engine.load(saved["engine"])
        for g, state in zip(gens, saved["generators"], strict=True):
            g.set_state(state)
        start = int(saved["epoch"])
    last_save = t0 = time.monotonic()
    steps = 0
    for epoch in tqdm(range(start, int(epochs)), disable=not s.progress, desc="members", leave=False):
        order = [epoch_batches(len(yt), batch_size, g) for g in gens]
        engine.epoch(order, xt, yt, wt)
        steps += sum(len(batches) for batches in order)
        if checkpoint is not None and (
            time.monotonic() - last_save > checkpoint_every or epoch + 1 == epochs
        ):
            ck.save(
                {"engine": engine.state(), "generators": [g.get_state() for g in gens], "epoch": epoch + 1}
            )
            last_save = time.monotonic()
    engine.write_back()
    note_training("members", steps=steps, seconds=time.monotonic() - t0, device=dev)
    return [m.eval() for m in models]


def train_classifier(
    model: nn.Module,
    x: Any,
    y: Any,
    weight: Any | None = None,
    settings: TrainSettings | None = None,
    *,
    checkpoint: str | Path | None = None,
    **overrides: Any,
) -> nn.Module:
    """One model with :func:`train_members`' loop (weighted cross-entropy, Adam, per-epoch shuffles of
    ``settings.seed``)."""
    s = TrainSettings.resolve(settings, **overrides)
    return train_members([model], x, y, weight, s, seeds=[s.seed], vectorise=False, checkpoint=checkpoint)[0]


class _OneByOne:
    """Members trained one after the other within each epoch, each with its own Adam."""

    def __init__(self, models: Sequence[nn.Module], lr: float):
        self.models = list(models)
        self.opts = [make_adam(m.parameters(), lr) for m in self.models]

    def epoch(self, order: list[list[torch.Tensor]], x, y, w) -> None:
        for model, opt, batches in zip(self.models, self.opts, order, strict=True):
            model.train()
            for idx in batches:
                loss = _weighted_ce(model(x[idx]), y[idx], w[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

    def state(self) -> dict:
        return {"models": [m.state_dict() for m in self.models], "opts": [o.state_dict() for o in self.opts]}

    def load(self, state: dict) -> None:
        for m, o, ms, os_ in zip(self.models, self.opts, state["models"], state["opts"], strict=True):
            m.load_state_dict(ms)
            o.load_state_dict(os_)

    def write_back(self) -> None:
        pass


class _Stacked:
    """Members as one model: stacked parameters, vmapped forward pass, one Adam over the stacks."""

    def __init__(self, models: Sequence[nn.Module], lr: float):
        from torch.func import functional_call, stack_module_state, vmap

        self.models = list(models)
        params, _ = stack_module_state(self.models)
        self.params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        base = copy.deepcopy(self.models[0]).to("meta").train()

        def one(p: dict, xb: torch.Tensor) -> torch.Tensor:
            return functional_call(base, p, (xb,))

        self.forward: Callable = vmap(one)
        self.opt = make_adam(self.params.values(), lr)

    def epoch(self, order: list[list[torch.Tensor]], x, y, w) -> None:
        for step in range(len(order[0])):
            idx = torch.stack([batches[step] for batches in order])  # (N, B): equal sizes for equal n
            loss = _weighted_ce(self.forward(self.params, x[idx]), y[idx], w[idx]).sum()
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()

    def state(self) -> dict:
        return {"params": {k: v.detach() for k, v in self.params.items()}, "opt": self.opt.state_dict()}

    def load(self, state: dict) -> None:
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v)
        self.opt.load_state_dict(state["opt"])

    def write_back(self) -> None:
        with torch.no_grad():
            for i, m in enumerate(self.models):
                m.load_state_dict({k: v[i].detach().clone() for k, v in self.params.items()}, strict=False)
