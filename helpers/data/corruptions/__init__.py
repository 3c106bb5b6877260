"""Seeded, vectorised image corruptions at severities 1..5, and class-imbalance resampling.

Modelled on CIFAR-10-C (Hendrycks & Dietterich 2019, "Benchmarking neural network robustness to common corruptions
and perturbations", ICLR; parameters from their ``make_cifar_c.py``), re-implemented with numpy/scipy/Pillow so that
a whole batch is corrupted at once (no OpenCV, ImageMagick or per-image Python loops except JPEG encoding).
Images with sides >= 16 pixels (CIFAR-10, USPS) get the published recipe for all 19 types
(:mod:`~helpers.data.corruptions.cifar10c`: plasma-fractal fog, the frost photographs, snow and spatter layers,
glass blur's pixel swaps, ImageMagick's motion-blur kernel, ...); 8x8 digits get scaled variants (procedural
frost/fog/snow/spatter textures, parameters for tiny near-binary images).

Every corruption works on images of any value range and layout the toolkit uses:

* scikit-learn digits: float ``(n, 8, 8)`` in [0, 16] (grayscale);
* USPS: float ``(n, 16, 16)`` in [-1, 1];
* CIFAR-10: uint8 ``(n, 32, 32, 3)`` in [0, 255].

Internally images are float64 ``(n, H, W, C)`` in [0, 1]; the result has the input's shape, dtype and range.
Spatial parameters (blur widths, displacements, pixelation) have two tables: the CIFAR-10-C values for images
with sides >= 16 pixels, and values scaled for 8x8 digits; pixel-wise parameters are CIFAR-10-C's for colour
images and stronger for the small images (whose intensities are nearly binary).

Extending: write ``fn(x, param, rng) -> x`` on float ``(n, H, W, C)`` in [0, 1] and decorate it with
:func:`register_corruption` giving five parameters per table.

Examples
--------
>>> import numpy as np
>>> x = np.random.default_rng(0).integers(0, 256, (4, 32, 32, 3), dtype=np.uint8)
>>> y = corrupt(x, "gaussian_noise", 3, seed=1)
>>> y.dtype, y.shape
(dtype('uint8'), (4, 32, 32, 3))
"""

from __future__ import annotations

# the two modules of corruption functions register them on import
from helpers.data.corruptions import (  # noqa: F401  (register, keep first)
    cifar10c,  # noqa: F401  (the recipe for sides >= 16 px; after the two above)
    noise_blur,
    weather_digital,
)
from helpers.data.corruptions.apply import compose, corrupt, infer_value_range, random_composition  # noqa: F401
from helpers.data.corruptions.label_shift import imbalance_resample  # noqa: F401
from helpers.data.corruptions.registry import (  # noqa: F401
    CIFAR10C_NAMES,
    CORRUPTIONS,
    CorruptionSpec,
    list_corruptions,
    register_corruption,
)

__all__ = [
    "corrupt",
    "compose",
    "random_composition",
    "list_corruptions",
    "register_corruption",
    "CorruptionSpec",
    "CORRUPTIONS",
    "CIFAR10C_NAMES",
    "imbalance_resample",
    "infer_value_range",
]
