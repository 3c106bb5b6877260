"""Domain-adversarial training: gradient reversal, the DANN wrapper, its coefficient schedule and loss.

Ganin & Lempitsky, "Unsupervised Domain Adaptation by Backpropagation", ICML 2015; Ganin et al., JMLR 2016.  The
gradient-reversal layer (GRL) is the identity in the forward pass and multiplies the gradient by −α in the backward
pass.  α follows α(p) = (2 / (1 + exp(−10·p)) − 1)·α_max with p the training progress in [0, 1]; paper 3
(Chen et al. 2021, appendix C.1.4) uses α_max = 0.1 for digits and CIFAR10-C and α_max = 1 for Amazon reviews.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import InputValidationError
from helpers.models.registry import MODELS

__all__ = [
    "GradientReversalFunction",
    "grad_reverse",
    "GradientReversal",
    "dann_alpha",
    "DANN",
    "DANNLoss",
    "mlp_head",
    "IGNORE_LABEL",
]

IGNORE_LABEL = (
    -100
)  #: class label of unlabelled (target) points in a DANN batch; matches cross_entropy's default


class GradientReversalFunction(torch.autograd.Function):
    """y = x forward; ∂L/∂x = −α · ∂L/∂y backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.alpha = float(alpha)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        return -ctx.alpha * grad_output, None


def grad_reverse(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """Apply the gradient-reversal layer with coefficient ``alpha`` (≥ 0)."""
    return GradientReversalFunction.apply(x, alpha)


class GradientReversal(nn.Module):
    """Module form of :func:`grad_reverse`; ``alpha`` can be changed between steps."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = float(alpha)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return grad_reverse(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


def dann_alpha(progress: float, *, alpha_max: float = 1.0, gamma: float = 10.0) -> float:
    """DANN coefficient α(p) = (2 / (1 + exp(−γ·p)) − 1)·α_max (Ganin et al. 2016, eq. 14; γ = 10).

    Parameters
    ----------
    progress : float
        Training progress p in [0, 1] (clipped).
    alpha_max : float, default 1.0
    gamma : float, default 10.0

    Returns
    -------
    float
        0 at p = 0, rising to (2/(1+e^−γ) − 1)·α_max ≈ 0.99991·α_max at p = 1.
    """
    p = min(1.0, max(0.0, float(progress)))
    return (2.0 / (1.0 + math.exp(-gamma * p)) - 1.0) * float(alpha_max)


class DANN(nn.Module):
    """Feature extractor φ, label classifier c and domain classifier d behind a gradient-reversal layer.

    ``forward(x)`` returns class logits c(φ(x)) so the wrapper works with :func:`helpers.training.predict`;
    ``forward_all(x)`` returns ``(class_logits, domain_logits)`` with the domain head fed through the GRL.

    Parameters
    ----------
    feature_extractor, label_classifier, domain_classifier : nn.Module
        φ: inputs → features; c: features → class logits; d: features → domain logits (2 outputs).
    alpha_max : float, default 1.0
        Final GRL coefficient; set the current one with :meth:`set_progress` or ``grl.alpha``.
    """

    def __init__(
        self,
        feature_extractor: nn.Module,
        label_classifier: nn.Module,
        domain_classifier: nn.Module,
        *,
        alpha_max: float = 1.0,
    ):
        super().__init__()
        self.feature_extractor = feature_extractor
        self.label_classifier = label_classifier
        self.domain_classifier = domain_classifier
        self.alpha_max = float(alpha_max)
        self.grl = GradientReversal(0.0)

    def set_progress(self, progress: float) -> float:
        """Set α from training progress p ∈ [0, 1] with :func:`dann_alpha`; returns α."""
        self.grl.alpha = dann_alpha(progress, alpha_max=self.alpha_max)
        return self.grl.alpha

    def features(self, x: Any) -> torch.Tensor:
        """φ(x)."""
        return self.feature_extractor(x)

    def forward(self, x: Any) -> torch.Tensor:
        """Class logits c(φ(x))."""
        return self.label_classifier(self.feature_extractor(x))

    def forward_all(self, x: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(class_logits, domain_logits)``; the domain branch passes through the GRL."""
        z = self.feature_extractor(x)
        return self.label_classifier(z), self.domain_classifier(self.grl(z))

    @classmethod
    def from_classifier(cls, model: nn.Module, domain_classifier: nn.Module, **kwargs: Any) -> DANN:
        """Wrap a model that has ``feature_extractor`` and ``classifier`` attributes (e.g. :class:`SmallCNN`)."""
        if not (hasattr(model, "feature_extractor") and hasattr(model, "classifier")):
            raise InputValidationError("model: expected attributes 'feature_extractor' and 'classifier'")
        return cls(model.feature_extractor, model.classifier, domain_classifier, **kwargs)


class DANNLoss:
    """``compute_loss`` for :func:`helpers.training.fit`: class loss + domain loss through the GRL.

    Batches are ``(x, y, w, domain, domain_weight)`` (collated tuples of tensors):

    * ``y``: class label, :data:`IGNORE_LABEL` for unlabelled target points;
    * ``w``: class-loss weight (1 for source, γ for pseudo-labelled target points, paper 3 eq. 4);
    * ``domain``: 0 source, 1 target;
    * ``domain_weight``: 1 where the point enters the domain loss, 0 otherwise (paper 3 puts no domain loss on
      pseudo-labelled points).

    The loss is Σ wᵢ·CE(c(φ(xᵢ)), yᵢ) / B + Σ vᵢ·CE(d(GRL_α(φ(xᵢ))), domainᵢ) / max(1, Σ vᵢ); α is set from the
    progress that :func:`fit` passes (``schedule=True``) or kept at ``model.alpha_max`` (``schedule=False``, for
    fine-tuning).  The adversarial weight enters only through α, as in Ganin et al.
    """

    def __init__(self, *, schedule: bool = True):
        self.schedule = schedule

    def __call__(self, model: DANN, batch: Any, progress: float) -> torch.Tensor:
        x, y, w, domain, dw = batch
        if self.schedule and not math.isnan(progress):
            model.set_progress(progress)
        else:
            model.grl.alpha = model.alpha_max
        class_logits, domain_logits = model.forward_all(x)
        labelled = y != IGNORE_LABEL
        ce = F.cross_entropy(class_logits, torch.where(labelled, y, torch.zeros_like(y)), reduction="none")
        class_loss = (ce * w.to(ce.dtype) * labelled).sum() / y.shape[0]
        dce = F.cross_entropy(domain_logits, domain.long(), reduction="none")
        dw = dw.to(dce.dtype)
        return class_loss + (dce * dw).sum() / dw.sum().clamp_min(1.0)


def mlp_head(
    in_features: int, hidden: int, out_features: int, *, num_layers: int, batch_norm: bool = False
) -> nn.Sequential:
    """``num_layers`` Linear layers: (Linear [BN1d] ReLU) × (num_layers − 1), then Linear(hidden → out)."""
    layers: list[nn.Module] = []
    d = in_features
    for _ in range(num_layers - 1):
        layers += [nn.Linear(d, hidden)] + ([nn.BatchNorm1d(hidden)] if batch_norm else []) + [nn.ReLU()]
        d = hidden
    layers.append(nn.Linear(d, out_features))
    return nn.Sequential(*layers)


@MODELS.register("dann_digits")
def dann_digits(
    num_classes: int = 10, *, image_size: int = 8, alpha_max: float = 0.1, hidden: int = 128
) -> DANN:
    """DANN for digits: CNN-BN feature extractor (:class:`SmallCNN`), 3-layer predictor, 3-layer discriminator.

    Paper 3 adapts its digits DANN from Chen et al. 2021 ([4]) without listing it; this small version keeps the
    paper's α_max = 0.1 and its 3-layer predictor, and uses a 3-layer discriminator of width ``hidden``.
    """
    from helpers.models.vision import SmallCNN

    base = SmallCNN(num_classes, image_size=image_size, batch_norm=True, hidden=hidden)
    return DANN(
        base.feature_extractor,
        mlp_head(hidden, hidden, num_classes, num_layers=3),
        mlp_head(hidden, hidden, 2, num_layers=3),
        alpha_max=alpha_max,
    )


@MODELS.register("dann_mlp")
def dann_mlp(
    in_features: int = 5000,
    num_classes: int = 2,
    *,
    hidden: int = 128,
    domain_hidden: int = 256,
    alpha_max: float = 1.0,
) -> DANN:
    """Paper 3's Amazon-review DANN (appendix C.1.4): encoder 4 × (Linear, ReLU) of width 128 over TF-IDF features,
    predictor 3 Linear layers of width 128, discriminator 7 Linear layers of width 256; α_max = 1."""
    enc: list[nn.Module] = []
    d = in_features
    for _ in range(4):
        enc += [nn.Linear(d, hidden), nn.ReLU()]
        d = hidden
    return DANN(
        nn.Sequential(*enc),
        mlp_head(hidden, hidden, num_classes, num_layers=3),
        mlp_head(hidden, domain_hidden, 2, num_layers=7),
        alpha_max=alpha_max,
    )
