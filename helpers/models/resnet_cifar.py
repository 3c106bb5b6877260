"""CIFAR-10 ResNet-20/32/44/56 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, sec. 4.2).

Three stages of ``n`` basic blocks with 16, 32 and 64 filters (depth = 6n + 2), global average pooling and one
linear layer.  Shortcuts are option A: identity, or, where the shape changes, stride-2 subsampling with zero-padded
extra channels (no parameters).  The parameter names match the released checkpoints of Y. Idelbayev's
``pytorch_resnet_cifar10`` (BSD-2), shipped under ``<data>/vision/cifar10_resnets/resnet{depth}-*.th``, so
:func:`load_cifar_resnet` loads them strictly.  Inputs are normalised with the training script's statistics,
mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225) on [0, 1] pixels (:func:`cifar_preprocess`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.errors import DataNotFoundError, InputValidationError
from helpers.models.registry import MODELS

__all__ = [
    "CifarResNet",
    "BasicBlock",
    "cifar_resnet",
    "load_cifar_resnet",
    "cifar_preprocess",
    "CIFAR_MEAN",
    "CIFAR_STD",
    "CIFAR10_CLASSES",
]

CIFAR_MEAN = (
    0.485,
    0.456,
    0.406,
)  #: normalisation mean used to train the shipped weights (RGB, [0, 1] scale)
CIFAR_STD = (0.229, 0.224, 0.225)  #: normalisation std used to train the shipped weights
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
_DEPTHS = (20, 32, 44, 56, 110, 1202)


class _PadShortcut(nn.Module):
    """Option-A shortcut: take every second pixel and zero-pad the channels on both sides."""

    def __init__(self, pad_channels: int):
        super().__init__()
        self.pad = pad_channels

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad, self.pad))


class BasicBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN plus shortcut, then ReLU."""

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        if stride != 1 or in_planes != planes:
            self.shortcut: nn.Module = _PadShortcut(planes // 4)
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class CifarResNet(nn.Module):
    """ResNet-(6n+2) for 32x32 images.

    Parameters
    ----------
    depth : int, default 20
        One of 20, 32, 44, 56, 110, 1202.
    num_classes : int, default 10
    """

    def __init__(self, depth: int = 20, *, num_classes: int = 10):
        super().__init__()
        if depth not in _DEPTHS:
            raise InputValidationError(f"depth: expected one of {_DEPTHS}, got {depth}")
        n = (depth - 2) // 6
        self.depth = depth
        self.feature_dim = 64
        self.conv1 = nn.Conv2d(3, 16, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = self._stage(16, 16, n, 1)
        self.layer2 = self._stage(16, 32, n, 2)
        self.layer3 = self._stage(32, 64, n, 2)
        self.linear = nn.Linear(64, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)

    @staticmethod
    def _stage(in_planes: int, planes: int, n: int, stride: int) -> nn.Sequential:
        blocks = [BasicBlock(in_planes, planes, stride)] + [
            BasicBlock(planes, planes, 1) for _ in range(n - 1)
        ]
        return nn.Sequential(*blocks)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate layer: globally average-pooled 64-d features, shape ``(N, 64)`` (e.g. for Fréchet distance)."""
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        return F.adaptive_avg_pool2d(out, 1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits, shape ``(N, num_classes)``; ``x`` is normalised NCHW float (see :func:`cifar_preprocess`)."""
        return self.linear(self.features(x))


def cifar_resnet(depth: int = 20, *, num_classes: int = 10) -> CifarResNet:
    """A randomly initialised :class:`CifarResNet`."""
    return CifarResNet(depth, num_classes=num_classes)


def _register(depth: int) -> None:
    def factory(*, pretrained: bool = False, num_classes: int = 10, data_dir=None) -> CifarResNet:
        if pretrained:
            return load_cifar_resnet(depth, data_dir=data_dir)
        return cifar_resnet(depth, num_classes=num_classes)

    factory.__doc__ = f"CIFAR ResNet-{depth}; ``pretrained=True`` loads the shipped CIFAR-10 weights."
    MODELS.register(f"resnet{depth}", factory)


for _d in (20, 32, 44, 56):
    _register(_d)


def cifar_preprocess(x: np.ndarray | torch.Tensor) -> torch.Tensor:
    """uint8 NHWC RGB images → normalised float32 NCHW tensor, as in the weights' training script.

    Parameters
    ----------
    x : array of uint8, shape (N, 32, 32, 3) or (32, 32, 3)
        Pixel values 0..255.

    Returns
    -------
    torch.Tensor of float32, shape (N, 3, H, W)
        ``(x / 255 − mean) / std`` per channel with :data:`CIFAR_MEAN`, :data:`CIFAR_STD`.
    """
    t = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x)
    if t.ndim == 3:
        t = t.unsqueeze(0)
    if t.ndim != 4 or t.shape[-1] != 3:
        raise InputValidationError(f"x: expected uint8 images of shape (N, H, W, 3), got {tuple(t.shape)}")
    if t.dtype != torch.uint8:
        raise InputValidationError(f"x: expected dtype uint8 (0..255), got {t.dtype}")
    t = t.permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(CIFAR_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR_STD).view(1, 3, 1, 1)
    return ((t - mean) / std).contiguous()


def load_cifar_resnet(
    depth: int = 20, *, data_dir: str | os.PathLike | None = None, map_location: str | torch.device = "cpu"
) -> CifarResNet:
    """Build a :class:`CifarResNet` and load the shipped CIFAR-10 weights (strict), in eval mode.

    Parameters
    ----------
    depth : {20, 32, 44, 56}
    data_dir : path, optional
        Data root; default :func:`helpers.paths.data_dir` (``$HELPERS_DATA``).  Weights are read from
        ``<data_dir>/vision/cifar10_resnets/resnet{depth}-*.th`` with ``torch.load(..., weights_only=True)``;
        the ``module.`` prefix left by ``DataParallel`` is stripped.
    map_location : device, default "cpu"

    Returns
    -------
    CifarResNet
        With ``reported_accuracy`` = the checkpoint's ``best_prec1`` / 100 (on the original, non-JPEG test set).

    Raises
    ------
    helpers.errors.DataNotFoundError
        If no weight file for ``depth`` is present.
    """
    if data_dir is None:
        from helpers.paths import data_dir as _data_dir

        data_dir = _data_dir()
    folder = Path(data_dir) / "vision" / "cifar10_resnets"
    files = sorted(folder.glob(f"resnet{depth}-*.th"))
    if not files:
        raise DataNotFoundError(
            f"CIFAR ResNet-{depth} weights not found: expected {folder}/resnet{depth}-<hash>.th "
            "(set HELPERS_DATA to the data folder; the weights come from akamaster/pytorch_resnet_cifar10)"
        )
    ck = torch.load(files[0], map_location=map_location, weights_only=True)
    state = ck.get("state_dict", ck)
    state = {(k[len("module.") :] if k.startswith("module.") else k): v for k, v in state.items()}
    model = CifarResNet(depth)
    model.load_state_dict(state, strict=True)
    model.reported_accuracy = round(float(ck["best_prec1"]) / 100, 6) if "best_prec1" in ck else None
    return model.eval()
