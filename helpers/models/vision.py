"""Small convolutional networks for digit images (scikit-learn 8x8 digits, USPS 16x16).

``SmallCNN(batch_norm=True)`` is the "CNN-BN" typical DNN of paper 3 (Chen et al. 2021, appendix C.1.4: two
convolutional layers, two fully connected layers and batch normalisation); the exact widths are not given in the
paper, so the ones here are chosen to train to ≥ 95 % on 8x8 digits in seconds on a CPU.  The network is split into
``feature_extractor`` (image → ``feature_dim`` vector) and ``classifier`` (vector → logits) so that
:class:`helpers.models.dann.DANN` can wrap it.
"""

from __future__ import annotations

import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.models.registry import MODELS

__all__ = ["SmallCNN", "ToImage"]


class ToImage(nn.Module):
    """Reshape ``(N, s*s)``, ``(N, s, s)`` or ``(N, C, s, s)`` input to ``(N, C, s, s)`` float."""

    def __init__(self, channels: int, size: int):
        super().__init__()
        self.channels, self.size = channels, size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        expected = self.channels * self.size * self.size
        if x[0].numel() != expected:
            raise InputValidationError(
                f"x: expected {self.channels}x{self.size}x{self.size} = {expected} values per image, "
                f"got shape {tuple(x.shape)}"
            )
        return x.reshape(x.shape[0], self.channels, self.size, self.size).float()


class SmallCNN(nn.Module):
    """Two conv layers + two fully connected layers, optionally with batch normalisation.

    Layout: conv3x3(C→c1) [BN] ReLU → conv3x3(c1→c2) [BN] ReLU → max-pool 2 → flatten → Linear(·→hidden) [BN1d]
    ReLU → dropout → Linear(hidden→num_classes).

    Parameters
    ----------
    num_classes : int, default 10
    image_size : int, default 8
        Side of the square input in pixels (8 for scikit-learn digits, 16 for USPS); must be even.
    in_channels : int, default 1
    channels : tuple of int, default (32, 64)
        Filters of the two conv layers.
    hidden : int, default 128
        Width of the penultimate layer (``feature_dim``).
    batch_norm : bool, default False
        ``True`` gives CNN-BN.
    dropout : float, default 0.0

    Notes
    -----
    Inputs are floats scaled by the caller (e.g. 8x8 digits divided by 16); ``(N, 64)``, ``(N, 8, 8)`` and
    ``(N, 1, 8, 8)`` are all accepted.
    """

    def __init__(
        self,
        num_classes: int = 10,
        *,
        image_size: int = 8,
        in_channels: int = 1,
        channels: tuple[int, int] = (32, 64),
        hidden: int = 128,
        batch_norm: bool = False,
        dropout: float = 0.0,
    ):
        super().__init__()
        if image_size % 2:
            raise InputValidationError(f"image_size: expected an even number of pixels, got {image_size}")
        c1, c2 = channels

        def bn2(c: int) -> nn.Module:
            return nn.BatchNorm2d(c) if batch_norm else nn.Identity()

        self.feature_dim = hidden
        self.feature_extractor = nn.Sequential(
            ToImage(in_channels, image_size),
            nn.Conv2d(in_channels, c1, 3, padding=1),
            bn2(c1),
            nn.ReLU(),
            nn.Conv2d(c1, c2, 3, padding=1),
            bn2(c2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(c2 * (image_size // 2) ** 2, hidden),
            nn.BatchNorm1d(hidden) if batch_norm else nn.Identity(),
            nn.ReLU(),
            nn.Dropout(dropout),
        )
        self.classifier = nn.Linear(hidden, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate-layer representation, shape ``(N, hidden)``."""
        return self.feature_extractor(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits, shape ``(N, num_classes)``."""
        return self.classifier(self.feature_extractor(x))


@MODELS.register("cnn")
def small_cnn(num_classes: int = 10, **kwargs) -> SmallCNN:
    """:class:`SmallCNN` without batch normalisation."""
    return SmallCNN(num_classes, batch_norm=False, **kwargs)


@MODELS.register("cnn_bn")
def small_cnn_bn(num_classes: int = 10, **kwargs) -> SmallCNN:
    """:class:`SmallCNN` with batch normalisation (paper 3's CNN-BN for digits)."""
    return SmallCNN(num_classes, batch_norm=True, **kwargs)
