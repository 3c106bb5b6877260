"""Baselines of paper 3 (Chen et al. 2021, Section 7.1 and appendix C.1.6).

* Avg Conf (Elsahar & Gallé 2019): mean max-softmax of f on U_X -- use
  :class:`helpers.estimators.AverageConfidence`.
* Ens Avg Conf: the same on the averaged softmax of an ensemble of 10 models with f's architecture and training
  (:class:`EnsembleAverageConfidence`).
* MSP (Hendrycks & Gimpel 2017) and Trust Score (Jiang et al. 2018) error detection: a point is flagged when its
  score falls below a threshold fitted on a held-out source test set so that the fraction of held-out points
  below it equals f's held-out error; in the authors' code the threshold is the held-out score at sorted index
  int((1 − source accuracy)·n) (:class:`ThresholdErrorDetector`).
* Proxy Risk (Chuang, Torralba & Jegelka 2020): a DANN check model h, fine-tuned to maximise its disagreement
  with f on U_X while the domain-invariant-representation loss stays below ε (:class:`ProxyRisk`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError
from helpers.estimators.base import BaseEstimator, Estimate
from helpers.models.dann import IGNORE_LABEL
from helpers.selftraining.algorithm import (
    _cpu_state,
    _drop_last,
    _steps_per_epoch,
    dann_training_set,
    train_dann,
)
from helpers.training import fit, predict

__all__ = [
    "ensemble_average_confidence",
    "EnsembleAverageConfidence",
    "ThresholdErrorDetector",
    "ProxyRisk",
    "proxy_risk_objective",
]


def _check_probs(probs, name: str, *, ndim: int) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != ndim or p.size == 0:
        raise InputValidationError(
            f"{name}: expected a non-empty {ndim}-D array of probabilities, got shape {p.shape}"
        )
    if not np.all(np.isfinite(p)) or p.min() < 0 or not np.allclose(p.sum(-1), 1.0, atol=1e-4):
        raise InputValidationError(f"{name}: rows must be finite, non-negative and sum to 1")
    return p


def ensemble_average_confidence(member_probs: np.ndarray) -> float:
    """Ens Avg Conf = mean_x max_j (1/M) Σ_m p_m(j | x) for member probabilities of shape (M, n, K)."""
    p = _check_probs(member_probs, "member_probs", ndim=3)
    return float(p.mean(axis=0).max(axis=1).mean())


class EnsembleAverageConfidence(BaseEstimator):
    """Estimator form of :func:`ensemble_average_confidence` (no reference set needed; ``fit`` is a no-op)."""

    name = "ens_avg_conf"

    def fit(self, **_: object) -> EnsembleAverageConfidence:
        self.fitted_ = True
        return self

    def estimate(self, *, member_probs: np.ndarray) -> Estimate:
        """Estimate on U_X from the ensemble's probabilities (M, n, K)."""
        p = _check_probs(member_probs, "member_probs", ndim=3)
        acc = ensemble_average_confidence(p)
        return Estimate(self.name, acc, n=p.shape[1], details={"members": p.shape[0]})


class ThresholdErrorDetector(BaseEstimator):
    """Flag x as an error of f when its confidence-like score (MSP, Trust Score) is below a source threshold.

    ``fit(scores=, correct=)`` on a held-out source test set: with a = mean(correct) and the scores sorted
    ascending, threshold = sorted[int((1 − a)·n)] (clipped to n − 1; (1 − a)·n is counted exactly as the number
    of held-out errors), so that about a fraction 1 − a of held-out
    points lies below it (appendix C.1.6).  ``detect(scores=)`` returns the flags (score < threshold);
    ``estimate(scores=)`` returns the implied accuracy 1 − mean(flags).
    """

    def __init__(self, name: str = "threshold"):
        self.name = name

    def fit(self, *, scores: np.ndarray, correct: np.ndarray) -> ThresholdErrorDetector:
        s = np.asarray(scores, dtype=np.float64).reshape(-1)
        c = np.asarray(correct).reshape(-1)
        if s.size == 0 or s.shape != c.shape:
            raise InputValidationError(
                f"scores and correct: expected equal non-empty lengths, got {s.shape}, {c.shape}"
            )
        if not np.all(np.isfinite(s)):
            raise InputValidationError("scores: contains NaN")
        acc = float(np.mean(c.astype(bool)))
        # (1 − acc)·n is the number of held-out errors; count it exactly instead of int() of a rounded float
        idx = min(int(np.count_nonzero(~c.astype(bool))), s.size - 1)
        self.threshold_ = float(np.sort(s)[idx])
        self.source_accuracy_ = acc
        return self

    def detect(self, *, scores: np.ndarray) -> np.ndarray:
        """Boolean error flags, True where score < threshold."""
        self._check_fitted("threshold_")
        s = np.asarray(scores, dtype=np.float64).reshape(-1)
        if np.isnan(s).any():
            raise InputValidationError("scores: contains NaN")
        return s < self.threshold_

    def estimate(self, *, scores: np.ndarray) -> Estimate:
        flags = self.detect(scores=scores)
        return Estimate(
            self.name, 1.0 - float(flags.mean()), n=flags.size, details={"threshold": self.threshold_}
        )


def proxy_risk_objective(
    model: nn.Module, batch, *, f_index: int = 5, lam: float, alpha: float, epsilon: float
) -> torch.Tensor:
    """−mean_{x∈U} ‖softmax h(x) − softmax f(x)‖₂ + λ·max(0, L_src(h) + α·L_dom(h) − ε) on one batch.

    ``batch`` = (x, y, w, domain, domain_weight, p_f) in the DANN 5-column convention plus f's probabilities;
    L_src is the source cross-entropy and L_dom the domain-classifier cross-entropy through the GRL (so the
    discriminator keeps discriminating and the encoder keeps matching, Chuang et al. 2020).
    """
    x, y, _, domain, _ = batch[:5]
    p_f = batch[f_index]
    class_logits, domain_logits = model.forward_all(x)
    labelled = y != IGNORE_LABEL
    src = F.cross_entropy(class_logits[labelled], y[labelled]) if labelled.any() else class_logits.sum() * 0
    dom = F.cross_entropy(domain_logits, domain.long())
    tgt = domain == 1
    dis = (
        (F.softmax(class_logits[tgt], dim=1) - p_f[tgt]).norm(dim=1).mean()
        if tgt.any()
        else class_logits.sum() * 0
    )
    return -dis + lam * F.relu(src + alpha * dom - epsilon)


class ProxyRisk(BaseEstimator):
    """Proxy Risk (Chuang et al. 2020) as run in paper 3 (appendix C.1.6; U_X doubles as target training set).

    A DANN check model h' is pre-trained on D and U_X (or given), then fine-tuned for ``epochs`` epochs with Adam
    to maximise mean ‖softmax f − softmax h‖₂ on U_X under L_src + α·L_dom ≤ ε = ``eps_factor``·ε₀ (ε₀: the value
    for h' before fine-tuning), through the penalty λ·max(0, ·).  After each epoch the full-data disagreement and
    constraint are measured; the kept check model is the epoch with the largest disagreement among those meeting
    the constraint (h' itself if none does).  Estimate: accuracy = agreement rate of h and f; errors: h ≠ f.

    Parameters
    ----------
    model_factory : callable() -> DANN
    initial_model : nn.Module, optional
        A pre-trained DANN check model h' (e.g. the h_0 of T_RM); otherwise trained in ``fit``.
    pretrain_epochs, epochs, lr, lam, alpha, eps_factor, batch_size, seed, checkpoint_dir :
        Paper 3: λ = 50, T₂ = 20 epochs, α = 0.1, ε = 1.1·ε₀, Adam lr 1e-3 (Amazon, digits).
    """

    name = "proxy_risk"

    def __init__(
        self,
        *,
        model_factory: Callable[[], nn.Module],
        initial_model: nn.Module | None = None,
        pretrain_epochs: int = 10,
        epochs: int = 20,
        lr: float = 1e-3,
        lam: float = 50.0,
        alpha: float = 0.1,
        eps_factor: float = 1.1,
        batch_size: int = 64,
        seed: int = 0,
        checkpoint_dir: str | Path | None = None,
    ):
        self.model_factory = model_factory
        self.initial_model = initial_model
        self.pretrain_epochs, self.epochs, self.lr = pretrain_epochs, epochs, lr
        self.lam, self.alpha, self.eps_factor = lam, alpha, eps_factor
        self.batch_size, self.seed, self.checkpoint_dir = batch_size, seed, checkpoint_dir

    def fit(self, *, x: np.ndarray, y: np.ndarray) -> ProxyRisk:
        """Store the labelled source set D."""
        y = np.asarray(y, dtype=np.int64)
        if len(x) != len(y) or len(y) == 0:
            raise InputValidationError(
                f"x and y: expected equal non-empty lengths, got {len(x)} and {len(y)}"
            )
        self.x_source_, self.y_source_ = x, y
        return self

    def _constraint_and_agreement(self, model, data, f_pred) -> tuple[float, float]:
        x, y, _, dom, _ = data
        model.eval()
        with torch.inference_mode():
            dev = next(model.parameters()).device
            logits, dlogits = [], []
            for s in range(0, len(x), 1024):
                c, d = model.forward_all(torch.as_tensor(x[s : s + 1024]).to(dev))
                logits.append(c.cpu())
                dlogits.append(d.cpu())
            logits, dlogits = torch.cat(logits), torch.cat(dlogits)
        yt = torch.as_tensor(y)
        lab = yt != IGNORE_LABEL
        src = float(F.cross_entropy(logits[lab], yt[lab]))
        d = float(F.cross_entropy(dlogits, torch.as_tensor(dom)))
        tgt = torch.as_tensor(dom == 1) & ~lab
        agree = float((logits[tgt].argmax(1).numpy() == f_pred).mean())
        model.train()
        return src + self.alpha * d, agree

    def estimate(self, *, x: np.ndarray, probs: np.ndarray) -> Estimate:
        """Train the check model against f's probabilities ``probs`` on U_X = ``x``; sets ``errors_``."""
        self._check_fitted("x_source_")
        pf = np.asarray(probs, dtype=np.float32)
        if pf.ndim != 2 or len(pf) != len(x):
            raise InputValidationError(f"probs: expected shape ({len(x)}, K), got {pf.shape}")
        f_pred = pf.argmax(1)
        if self.initial_model is None:
            ck = Path(self.checkpoint_dir) / "h0" if self.checkpoint_dir else None
            h0 = train_dann(
                self.model_factory,
                self.x_source_,
                self.y_source_,
                x,
                epochs=self.pretrain_epochs,
                batch_size=self.batch_size,
                seed=self.seed,
                checkpoint_dir=ck,
            )
        else:
            h0 = self.initial_model
        model = self.model_factory()
        model.load_state_dict(copy.deepcopy(_cpu_state(h0)))
        model.grl.alpha = model.alpha_max
        data = dann_training_set(self.x_source_, self.y_source_, x)
        eps0, agree0 = self._constraint_and_agreement(model, data, f_pred)
        eps = self.eps_factor * eps0
        p_rows = np.concatenate([np.zeros((len(self.x_source_), pf.shape[1]), np.float32), pf])
        best = {"agreement": agree0, "epoch": 0, "state": _cpu_state(model), "constraint": eps0}
        steps_per_epoch = _steps_per_epoch(len(data[0]), self.batch_size)
        history = []

        def at_epoch_end(info) -> None:
            if info.batch_in_epoch != steps_per_epoch:
                return
            c, a = self._constraint_and_agreement(info.model, data, f_pred)
            history.append({"epoch": info.epoch + 1, "constraint": c, "agreement": a})
            if c <= eps and a < best["agreement"]:
                best.update(agreement=a, epoch=info.epoch + 1, state=_cpu_state(info.model), constraint=c)

        def loss(m, batch, progress):
            m.grl.alpha = m.alpha_max
            return proxy_risk_objective(m, batch, lam=self.lam, alpha=self.alpha, epsilon=eps)

        fit(
            model,
            (*data, p_rows),
            epochs=self.epochs,
            batch_size=self.batch_size,
            drop_last=_drop_last(len(data[0]), self.batch_size),
            lr=self.lr,
            seed=self.seed,
            compute_loss=loss,
            callback=at_epoch_end,
            progress=False,
        )
        model.load_state_dict(best["state"])
        h_pred = predict(model, x, batch_size=1024).argmax(1)
        self.errors_ = h_pred != f_pred
        self.check_predictions_ = h_pred
        self.history_ = history
        return Estimate(
            self.name,
            1.0 - float(self.errors_.mean()),
            n=len(x),
            details={"epsilon0": eps0, "epsilon": eps, "chosen_epoch": best["epoch"]},
        )
