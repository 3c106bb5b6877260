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
  with f on U_X under a λ-weighted DANN loss, keeping the epoch of largest disagreement whose domain-invariant-
  representation loss stays below ε (:class:`ProxyRisk`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
from torch import nn

from helpers.errors import InputValidationError
from helpers.estimators.base import BaseEstimator, Estimate
from helpers.selftraining.adversarial import proxy_risk_finetune
from helpers.selftraining.algorithm import _cpu_state, train_dann
from helpers.training.settings import TrainSettings

__all__ = [
    "ensemble_average_confidence",
    "EnsembleAverageConfidence",
    "ThresholdErrorDetector",
    "ProxyRisk",
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


class ProxyRisk(BaseEstimator):
    """Proxy Risk (Chuang et al. 2020) as run in paper 3 (appendix C.1.6; U_X doubles as target training set).

    A DANN check model h' is pre-trained on D and U_X (or given), then fine-tuned for ``epochs`` epochs with Adam
    on ``−mean_U ‖softmax h − softmax f‖₂ + λ·(CE_class(D) + CE_dom(D) + CE_dom(U_X))`` with the GRL at α (the
    authors' ``proxy_risk_train``: the DANN loss is always on, a Lagrangian relaxation of the constraint).  After
    each epoch the constraint ``err_src(h) + α·(CE_dom(D^test) + CE_dom(U_X)) ≤ ε = eps_factor·ε₀`` is measured with
    the 0-1 source error on the held-out source set D^test (ε₀: its value for h'); the kept check model is the epoch
    with the largest disagreement rate with f among those meeting it (h' if none does).  Estimate: accuracy =
    agreement rate of h and f; errors: h ≠ f.  See :func:`helpers.selftraining.adversarial.proxy_risk_finetune`.

    Parameters
    ----------
    model_factory : callable() -> DANN
    initial_model : nn.Module, optional
        A pre-trained DANN check model h' (e.g. the h_0 of T_RM); otherwise trained in ``estimate``.
    pretrain_epochs, epochs, lam, alpha, eps_factor :
        Paper 3: λ = 50, T₂ = 20 epochs, α = 0.1, ε = 1.1·ε₀ (digits, CIFAR10-C; the paper gives no Amazon
        values, so these).
    settings : TrainSettings, optional
        Batch size, learning rate (paper 3: Adam lr 1e-3 on Amazon and digits), seed; h' is checkpointed in
        ``settings.checkpoint_dir / "h0"``.
    """

    name = "proxy_risk"

    def __init__(
        self,
        *,
        model_factory: Callable[[], nn.Module],
        initial_model: nn.Module | None = None,
        pretrain_epochs: int = 10,
        epochs: int = 20,
        lam: float = 50.0,
        alpha: float = 0.1,
        eps_factor: float = 1.1,
        settings: TrainSettings | None = None,
    ):
        self.model_factory = model_factory
        self.initial_model = initial_model
        self.pretrain_epochs, self.epochs = pretrain_epochs, epochs
        self.lam, self.alpha, self.eps_factor = lam, alpha, eps_factor
        self.settings = TrainSettings.resolve(settings)

    def fit(
        self,
        *,
        x: np.ndarray,
        y: np.ndarray,
        x_heldout: np.ndarray | None = None,
        y_heldout: np.ndarray | None = None,
    ) -> ProxyRisk:
        """Store the labelled source set D and the held-out source set D^test of the constraint (default: D)."""
        y = np.asarray(y, dtype=np.int64)
        if len(x) != len(y) or len(y) == 0:
            raise InputValidationError(
                f"x and y: expected equal non-empty lengths, got {len(x)} and {len(y)}"
            )
        if (x_heldout is None) != (y_heldout is None):
            raise InputValidationError("x_heldout and y_heldout: give both or neither")
        if x_heldout is None:
            x_heldout, y_heldout = x, y
        if len(x_heldout) != len(y_heldout) or len(y_heldout) == 0:
            raise InputValidationError(
                f"x_heldout and y_heldout: expected equal non-empty lengths, got {len(x_heldout)} and "
                f"{len(y_heldout)}"
            )
        self.x_source_, self.y_source_ = x, y
        self.x_heldout_, self.y_heldout_ = x_heldout, np.asarray(y_heldout, dtype=np.int64)
        return self

    def estimate(self, *, x: np.ndarray, probs: np.ndarray) -> Estimate:
        """Train the check model against f's probabilities ``probs`` on U_X = ``x``; sets ``errors_``."""
        self._check_fitted("x_source_")
        pf = np.asarray(probs, dtype=np.float32)
        if pf.ndim != 2 or len(pf) != len(x):
            raise InputValidationError(f"probs: expected shape ({len(x)}, K), got {pf.shape}")
        if self.initial_model is None:
            folder = self.settings.checkpoint_dir
            h0 = train_dann(
                self.model_factory,
                self.x_source_,
                self.y_source_,
                x,
                self.settings.replace(epochs=self.pretrain_epochs, lr=1e-3,
                                      checkpoint_dir=folder / "h0" if folder is not None else None),
            )
        else:
            h0 = self.initial_model
        model = self.model_factory()
        model.load_state_dict(copy.deepcopy(_cpu_state(h0)))
        out = proxy_risk_finetune(
            model,
            pf,
            self.x_source_,
            self.y_source_,
            x,
            self.x_heldout_,
            self.y_heldout_,
            self.settings.replace(epochs=self.epochs),
            lam=self.lam,
            alpha=self.alpha,
            eps_factor=self.eps_factor,
        )
        h_pred = out["check_predictions"]
        self.errors_ = h_pred != pf.argmax(1)
        self.check_predictions_ = h_pred
        self.history_ = out["history"]
        return Estimate(
            self.name,
            1.0 - float(self.errors_.mean()),
            n=len(x),
            details={"epsilon0": out["epsilon0"], "epsilon": out["epsilon"], "chosen_epoch": out["epoch"]},
        )
