"""The tiny fixed input of the estimators' docstring examples: one place instead of a copy in every class.

>>> z, y, target, shifted = example_sets()
>>> z.shape, int((z.argmax(axis=1) == y).sum()), sorted(shifted)
((8, 3), 6, ['a', 'b', 'c'])
"""

from __future__ import annotations

import numpy as np

__all__ = ["example_sets"]


def example_sets() -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """``(z, y, target, shifted)``: reference logits ``z`` (8 rows, 3 classes) with labels ``y`` (6 of 8
    predictions right), an unlabelled ``target`` (the same rows in reverse order, logits scaled by 0.6: less
    confident), and three labelled shifted sets ``{"a": (z, y), "b": (0.5 z, y), "c": (z with rows swapped in
    pairs, y)}`` for the set-level scores' line."""
    z = np.array([[2.0, 0.5, 0.1], [0.2, 1.5, 0.3], [0.1, 0.4, 1.8], [1.2, 1.0, 0.2],
                  [0.3, 0.2, 0.9], [1.1, 0.1, 1.3], [0.2, 2.2, 0.4], [0.9, 0.3, 0.6]])  # fmt: skip
    y = np.array([0, 1, 2, 1, 2, 0, 1, 0])
    shifted = {"a": (z, y), "b": (0.5 * z, y), "c": (z[[1, 0, 3, 2, 5, 4, 7, 6]], y)}
    return z, y, 0.6 * z[::-1], shifted
