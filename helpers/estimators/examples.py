"""The tiny fixed input of the estimators' docstring examples (one place instead of a copy in every class), and
the smallest estimator built on the public base, :class:`MeanMaxProb` (the pattern for your own).

>>> z, y, target, shifted = example_sets()
>>> z.shape, int((z.argmax(axis=1) == y).sum()), sorted(shifted)
((8, 3), 6, ['a', 'b', 'c'])
"""

from __future__ import annotations

import numpy as np

from helpers.estimators._common import resolve_probs
from helpers.estimators.estimator import LabelFreeEstimator, Prepared

__all__ = ["example_sets", "example_collection", "MeanMaxProb"]


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


def example_collection() -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    """``(reference, labels, target)`` of a collection of four 3-class models ``"a"``-``"d"`` of falling skill
    (seeded): logits on 200 labelled reference rows and on 150 unlabelled target rows of a harder shift."""
    rng = np.random.default_rng(0)
    y, y_target = rng.integers(0, 3, 200), rng.integers(0, 3, 150)
    ref, target = {}, {}
    for name, skill in zip("abcd", (2.0, 1.6, 1.2, 0.8)):
        ref[name] = rng.normal(size=(200, 3)) + skill * np.eye(3)[y]
        target[name] = rng.normal(size=(150, 3)) + 0.6 * skill * np.eye(3)[y_target]
    return ref, y, target


class MeanMaxProb(LabelFreeEstimator):
    """The mean maximum softmax probability, written as a user writes an estimator on the public base: two hooks
    and the column-means bootstrap protocol; ``fit``/``estimate``, the interval, the class-count check and (with
    ``mergeable``) out-of-core estimates come from :class:`~helpers.estimators.LabelFreeEstimator`.

    >>> z, y, target, shifted = example_sets()
    >>> round(MeanMaxProb().estimate(logits=target).accuracy, 4)  # = AverageConfidence's
    0.489
    """

    name = "mean_max_prob"
    requires_fit = False
    mergeable = True

    def __init__(self, *, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):
        self.n_boot, self.level, self.random_state = n_boot, level, random_state

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        p = resolve_probs(logits=logits, probs=probs, where=f"{type(self).__name__}.estimate")
        return Prepared(n=len(p), arrays={"conf": p.max(axis=1)})

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["conf"].mean())

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["conf"][:, None]
