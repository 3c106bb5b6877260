"""Domain-adversarial loops of paper 3 on in-memory tensors: DANN pre-training of h_0, the T_RM fine-tuning
(Algorithm 3, eq. 4) and Proxy Risk's disagreement maximisation, each drawing **one source batch and one target batch
per step** as the authors' code does (``train_dann.py``; ``utils/lib.py``: ``dann_ensemble_self_training``,
``proxy_risk_train``).

Per step, with a source-side batch S (rows of D, or of D ∪ R during T_RM) and a target batch T of U_X:

* DANN / T_RM (eq. 4): ``L = mean_T CE(d(φ(x)), 1) + mean_S s·CE(d(φ(x)), 0) + mean_S p·CE(c(φ(x)), y)`` with
  s = 1 on D and 0 on R (no domain loss on the pseudo-labelled copies) and p = s + γ·(1 − s); without R this is the
  plain DANN loss ``CE_dom(T) + CE_dom(S) + CE_class(S)``.  The domain head sees φ through the gradient-reversal
  layer with coefficient α: ramped α(q) = (2/(1+e^{−10q}) − 1)·α_max over training progress q for pre-training,
  α = α_max when fine-tuning (appendix C.1.4).
* Proxy Risk: ``L = −mean_T ‖softmax h(x) − softmax f(x)‖₂ + λ·(CE_class(S) + CE_dom(S) + CE_dom(T))`` -- the DANN
  loss is always on, weighted by λ (Lagrangian relaxation), with α fixed.

Steps per epoch: the shorter stream's length for pre-training and Proxy Risk, the longer one's for T_RM; the
other stream restarts with a new shuffle when used up.

Both loops take a :class:`~helpers.training.TrainSettings` (epochs, batch size, learning rate, seed, device; the
loose keywords ``epochs=`` ... still work as overrides) and compute on ``settings.device`` (CUDA when present): the
model, the arrays, the loss weights and targets are moved there once, the batch indices stay on the CPU (their
generators are CPU generators, so the batch order is the same on every device).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError
from helpers.models.dann import DANN, dann_alpha
from helpers.training.device import get_device
from helpers.training.members import BatchStream, as_tensor, make_adam, seeded_generator
from helpers.training.settings import TrainSettings
from helpers.training.timing import note_training

__all__ = ["train_dann_paired", "proxy_risk_finetune", "domain_source_weights"]


def domain_source_weights(n_source: int, n_pseudo: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-row weights of D ∪ R for eq. 4: (s, p) with s = 1 on D, 0 on R and p = s + γ·(1 − s)."""
    if gamma < 0:
        raise InputValidationError(f"gamma: expected γ ≥ 0, got {gamma}")
    s = np.concatenate([np.ones(n_source, np.float32), np.zeros(n_pseudo, np.float32)])
    return s, s + np.float32(gamma) * (1 - s)


def _ce(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits, target, reduction="none")


def train_dann_paired(
    model: DANN,
    x_source: Any,
    y_source: Any,
    x_target: Any,
    settings: TrainSettings | None = None,
    *,
    pseudo_x: Any | None = None,
    pseudo_y: Any | None = None,
    gamma: float = 0.1,
    schedule: bool = True,
    steps: str = "min",
    on_epoch_end: Callable[[int, DANN], None] | None = None,
    **overrides: Any,
) -> DANN:
    """DANN pre-training (``schedule=True, steps="min"``) or T_RM fine-tuning (``schedule=False, steps="max"``,
    with the pseudo-labelled set R = (``pseudo_x``, ``pseudo_y``)), in place, with Adam.

    Parameters
    ----------
    model : helpers.models.dann.DANN
    x_source, y_source : D.
    x_target : U_X (domain loss only).
    settings : TrainSettings
        ``epochs`` (:attr:`~helpers.training.TrainSettings.total_epochs`), ``batch_size``, ``lr`` (Adam),
        ``seed`` (the source-side stream shuffles with ``seed``, the target stream with ``seed + 1_000_003``) and
        ``device`` (the model is moved there and trained there); ``**overrides`` change them for this call.
    pseudo_x, pseudo_y : R, appended to the source-side rows with class weight γ and no domain loss.
    gamma : float, default 0.1
    schedule : bool
        Ramp α from 0 to ``model.alpha_max`` over training (pre-training) or keep α = α_max (fine-tuning).
    steps : {"min", "max"}
        Steps per epoch: the shorter or the longer of the two streams.
    on_epoch_end : callable(epoch, model), optional
        Called after every epoch (T_RM takes its snapshots there); the model is on ``settings.device``.
    """
    if steps not in ("min", "max"):
        raise InputValidationError(f"steps: expected 'min' or 'max', got {steps!r}")
    s = TrainSettings.resolve(settings, **overrides)
    epochs, batch_size, seed, dev = s.total_epochs, s.batch_size, s.seed, get_device(s.device)
    xs, ys, xt = as_tensor(x_source), as_tensor(y_source, torch.int64), as_tensor(x_target)
    if pseudo_x is not None and len(pseudo_x):
        xs = torch.cat([xs, as_tensor(pseudo_x).to(xs.dtype)])
        ys = torch.cat([ys, as_tensor(pseudo_y, torch.int64)])
    s_w, p_w = (
        torch.from_numpy(a).to(dev)
        for a in domain_source_weights(len(y_source), len(ys) - len(y_source), gamma)
    )
    src = BatchStream(len(ys), batch_size, seeded_generator(seed))
    tgt = BatchStream(len(xt), batch_size, seeded_generator(seed + 1_000_003))
    per_epoch = (min if steps == "min" else max)(src.batches_per_epoch, tgt.batches_per_epoch)
    total = max(1, per_epoch * int(epochs))
    model.to(dev)
    xs, ys, xt = xs.to(dev), ys.to(dev), xt.to(dev)
    opt = make_adam(model.parameters(), s.lr)
    joint = not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
    zero_s = torch.zeros(batch_size, dtype=torch.int64, device=dev)
    one_t = torch.ones(batch_size, dtype=torch.int64, device=dev)
    model.train()
    model.grl.alpha = model.alpha_max
    t0 = time.perf_counter()
    for epoch in range(int(epochs)):
        for i in range(per_epoch):
            if schedule:
                model.grl.alpha = dann_alpha((epoch * per_epoch + i) / total, alpha_max=model.alpha_max)
            bs, bt = src.next(), tgt.next()
            c_s, d_s, d_t = _source_and_target(model, xs[bs], xt[bt], joint)
            loss = (
                _ce(d_t, one_t[: len(bt)]).mean()
                + (s_w[bs] * _ce(d_s, zero_s[: len(bs)])).mean()
                + (p_w[bs] * _ce(c_s, ys[bs])).mean()
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if on_epoch_end is not None:
            on_epoch_end(epoch, model)
            model.train()
    note_training("dann", steps=per_epoch * int(epochs), seconds=time.perf_counter() - t0, device=dev)
    return model.eval()


def _source_and_target(model: DANN, xs: torch.Tensor, xt: torch.Tensor, joint: bool):
    """Class and domain logits of the source batch, domain logits of the target batch: one forward pass over
    both when the model has no batch norm (its rows are then independent, so the result is the same as two)."""
    if not joint:
        c_s, d_s = model.forward_all(xs)
        return c_s, d_s, model.forward_all(xt)[1]
    c, d = model.forward_all(torch.cat([xs, xt.to(xs.dtype)]))
    d_s, d_t = d.split([len(xs), len(xt)])
    return c[: len(xs)], d_s, d_t


@torch.inference_mode()
def _outputs(model: DANN, x: torch.Tensor, chunk: int = 2048) -> tuple[torch.Tensor, torch.Tensor]:
    """Class and domain logits of ``x`` (on the model's device) in chunks of ``chunk`` rows."""
    parts = [model.forward_all(x[s : s + chunk]) for s in range(0, len(x), chunk)]
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def _dir_loss(model: DANN, xh, yh, xt, alpha: float) -> float:
    """Proxy Risk's constraint value: source 0-1 error on the held-out source set + α·(domain CE on it + on U_X),
    as the authors' ``eval_proxy_risk_method`` measures it."""
    c_h, d_h = _outputs(model, xh)
    _, d_t = _outputs(model, xt)
    err = float((c_h.argmax(1) != yh).float().mean())
    dom = float(F.cross_entropy(d_h, torch.zeros(len(xh), dtype=torch.int64, device=d_h.device))) + float(
        F.cross_entropy(d_t, torch.ones(len(xt), dtype=torch.int64, device=d_t.device))
    )
    return err + alpha * dom


def proxy_risk_finetune(
    model: DANN,
    f_probs_target: Any,
    x_source: Any,
    y_source: Any,
    x_target: Any,
    x_heldout: Any,
    y_heldout: Any,
    settings: TrainSettings | None = None,
    *,
    lam: float = 50.0,
    alpha: float = 0.1,
    eps_factor: float = 1.1,
    **overrides: Any,
) -> dict:
    """Proxy Risk's disagreement maximisation (Chuang et al. 2020 as run in paper 3, appendix C.1.6).

    Starting from the pre-trained check model h' (``model``, changed in place), each epoch takes min(|D|, |U|)/B
    steps of ``−disagreement + λ·DANN loss`` with the GRL at α; after each epoch the constraint
    ``err_src(h) + α·(CE_dom(D^test) + CE_dom(U_X)) ≤ ε = eps_factor·ε₀`` is measured (ε₀: its value for h') and the
    kept check model is the epoch of largest disagreement rate with f among those meeting it (h' itself if none
    does).  As in the authors' code the model stays in eval mode while it trains (batch-norm statistics frozen).

    ``settings`` gives the epochs, Adam's learning rate, the batch size, the seed of the two batch streams and the
    device (defaults as the paper's runs: 20 epochs, lr 1e-3, batch 8, seed 0, CUDA when present);
    ``**overrides`` change them for this call.

    Returns
    -------
    dict
        ``state`` (the kept weights, on the CPU), ``epoch`` (0 = h'), ``epsilon0``, ``epsilon``, ``history`` (per
        epoch: constraint and disagreement rate), ``check_predictions`` on U_X.
    """
    s = TrainSettings.resolve(settings or TrainSettings(epochs=20, batch_size=8, lr=1e-3, seed=0), **overrides)
    epochs, batch_size, seed, dev = s.total_epochs, s.batch_size, s.seed, get_device(s.device)
    pf = as_tensor(f_probs_target, torch.float32)
    xs, ys, xt = as_tensor(x_source), as_tensor(y_source, torch.int64), as_tensor(x_target)
    xh, yh = as_tensor(x_heldout), as_tensor(y_heldout, torch.int64)
    if pf.ndim != 2 or len(pf) != len(xt):
        raise InputValidationError(f"f_probs_target: expected shape ({len(xt)}, K), got {tuple(pf.shape)}")
    model.to(dev)
    pf, xs, ys, xt, xh, yh = (t.to(dev) for t in (pf, xs, ys, xt, xh, yh))
    f_pred = pf.argmax(1)
    model.eval()
    model.grl.alpha = float(alpha)

    def disagreement() -> tuple[float, torch.Tensor]:
        pred = _outputs(model, xt)[0].argmax(1)
        return float((pred != f_pred).float().mean()), pred

    eps0 = _dir_loss(model, xh, yh, xt, alpha)
    eps = eps_factor * eps0
    best_dis, best_pred = disagreement()
    best = {"state": _cpu_copy(model), "epoch": 0}
    history = []
    src = BatchStream(len(ys), batch_size, seeded_generator(seed))
    tgt = BatchStream(len(xt), batch_size, seeded_generator(seed + 1_000_003))
    per_epoch = min(src.batches_per_epoch, tgt.batches_per_epoch)
    opt = make_adam(model.parameters(), s.lr)
    for epoch in range(int(epochs)):
        for _ in range(per_epoch):
            bs, bt = src.next(), tgt.next()
            c, d = model.forward_all(torch.cat([xs[bs], xt[bt]]))  # eval mode: rows are independent
            (c_s, c_t), (d_s, d_t) = c.split([len(bs), len(bt)]), d.split([len(bs), len(bt)])
            dann = (
                F.cross_entropy(c_s, ys[bs])
                + F.cross_entropy(d_s, torch.zeros(len(bs), dtype=torch.int64, device=dev))
                + F.cross_entropy(d_t, torch.ones(len(bt), dtype=torch.int64, device=dev))
            )
            dis = (F.softmax(c_t, dim=1) - pf[bt]).norm(dim=1).mean()
            loss = -dis + lam * dann
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        constraint = _dir_loss(model, xh, yh, xt, alpha)
        rate, pred = disagreement()
        history.append({"epoch": epoch + 1, "constraint": constraint, "disagreement": rate})
        if constraint <= eps and rate > best_dis:
            best_dis, best_pred = rate, pred
            best = {"state": _cpu_copy(model), "epoch": epoch + 1}
    return {
        **best,
        "epsilon0": eps0,
        "epsilon": eps,
        "history": history,
        "check_predictions": best_pred.cpu().numpy().astype(np.int64),
    }


def _cpu_copy(model: nn.Module) -> dict[str, torch.Tensor]:
    """The model's weights, copied to the CPU."""
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
