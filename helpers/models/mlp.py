"""Fully connected networks over fixed-length feature vectors (e.g. TF-IDF).

Paper 3 (Chen et al. 2021, appendix C.1.4, Amazon reviews): texts become 5,000-dimensional TF-IDF vectors and the
"typical DNN" is a four-layer fully connected ReLU network of width 128.  Here "four layers" counts the Linear
layers: three hidden layers of width 128 and the output layer.
"""

from __future__ import annotations

import torch
from torch import nn

from helpers.models.registry import MODELS

__all__ = ["MLP"]


class MLP(nn.Module):
    """``num_layers`` Linear layers with ReLU (and optional dropout) between them.

    Parameters
    ----------
    in_features : int
        Input dimension (e.g. 5,000 TF-IDF features).
    num_classes : int, default 2
    hidden : int, default 128
    num_layers : int, default 4
        Linear layers in total (≥ 1); the last one is ``classifier``, the others form ``feature_extractor``.
    dropout : float, default 0.0
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int = 2,
        *,
        hidden: int = 128,
        num_layers: int = 4,
        dropout: float = 0.0,
    ):
        super().__init__()
        layers: list[nn.Module] = []
        d = in_features
        for _ in range(num_layers - 1):
            layers += [nn.Linear(d, hidden), nn.ReLU(), nn.Dropout(dropout)]
            d = hidden
        self.feature_dim = d
        self.feature_extractor = nn.Sequential(*layers)
        self.classifier = nn.Linear(d, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Last hidden layer, shape ``(N, hidden)``."""
        return self.feature_extractor(x.float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits, shape ``(N, num_classes)``; ``x`` is a dense float tensor ``(N, in_features)``."""
        return self.classifier(self.features(x))


@MODELS.register("mlp")
def mlp(in_features: int, num_classes: int = 2, **kwargs) -> MLP:
    """:class:`MLP` (defaults: paper 3's typical DNN for TF-IDF features: 4 layers, width 128)."""
    return MLP(in_features, num_classes, **kwargs)


@MODELS.register("tfidf_mlp")
def tfidf_mlp(in_features: int = 5000, num_classes: int = 2, **kwargs) -> MLP:
    """Paper 3's Amazon "typical DNN": 4-layer ReLU MLP of width 128 over 5,000 TF-IDF features."""
    return MLP(in_features, num_classes, **kwargs)
