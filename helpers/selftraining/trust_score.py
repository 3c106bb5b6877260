"""Trust Score (Jiang, Kim, Guan & Gupta, "To Trust Or Not To Trust A Classifier", NeurIPS 2018).

For a test point x with predicted class ŷ, the trust score is

    TS(x) = d(x, H_{≠ŷ}) / d(x, H_ŷ),

where H_c is the α-high-density set of the training points of class c (Jiang et al. 2018, Algorithm 1: drop the
fraction α of class-c points with the largest distance to their k-th nearest class-c neighbour), d(x, H) is the
distance from x to the nearest point of H, and H_{≠ŷ} is the closest of the other classes' sets.  A low score
means x lies closer to another class than to the predicted one.  Paper 3 (Chen et al. 2021, appendix C.1.6) feeds
the logit layer of f into Trust Score and flags x as an error when its score falls below a threshold fitted on a
held-out source set (:class:`helpers.selftraining.baselines.ThresholdErrorDetector`).
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

from helpers.errors import InputValidationError, NotFittedError

__all__ = ["TrustScore", "density_filter"]


def _as_2d(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise InputValidationError(f"{name}: expected a non-empty 2-D array (n, d), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputValidationError(f"{name}: contains NaN or infinite values")
    return arr


def density_filter(x: np.ndarray, *, alpha: float, k: int) -> np.ndarray:
    """Boolean mask of the α-high-density subset of ``x`` (Jiang et al. 2018, Algorithm 1).

    The radius r_k(x) is the distance from x to its k-th nearest neighbour in ``x`` (itself excluded); the points
    whose radius exceeds the (1 − α) quantile of the radii are removed.

    Parameters
    ----------
    x : numpy.ndarray, shape (n, d)
    alpha : float in [0, 1)
        Fraction of lowest-density points to drop (0 keeps everything).
    k : int ≥ 1
        Neighbour used for the radius (capped at n − 1).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
    """
    x = _as_2d(x, "x")
    if not 0.0 <= alpha < 1.0:
        raise InputValidationError(f"alpha: expected a value in [0, 1), got {alpha}")
    if k < 1:
        raise InputValidationError(f"k: expected a positive integer, got {k}")
    n = len(x)
    if alpha == 0.0 or n < 2:
        return np.ones(n, dtype=bool)
    kk = min(k, n - 1)
    dist, _ = NearestNeighbors(n_neighbors=kk + 1).fit(x).kneighbors(x)
    radius = dist[:, kk]
    return radius <= np.quantile(radius, 1.0 - alpha)


class TrustScore:
    """Trust Score of a classifier's predictions (Jiang et al. 2018).

    Parameters
    ----------
    alpha : float, default 0.0
        Density-filtering fraction per class (Jiang et al. use α as a tuning parameter; 0 = no filtering).
    k : int, default 10
        Neighbour that defines the density radius of the filter.
    min_dist : float, default 1e-12
        Added to the denominator so that a point lying on its predicted-class set gets a large finite score.

    Attributes
    ----------
    sets_ : list of numpy.ndarray
        The filtered training points of each class (an empty array for a class absent from training).
    """

    def __init__(self, *, alpha: float = 0.0, k: int = 10, min_dist: float = 1e-12):
        self.alpha = alpha
        self.k = k
        self.min_dist = min_dist

    def fit(self, *, features: np.ndarray, labels: np.ndarray, num_classes: int | None = None) -> TrustScore:
        """Build the filtered per-class sets H_c from training ``features`` (e.g. f's logits) and their labels."""
        x = _as_2d(features, "features")
        y = np.asarray(labels)
        if y.shape != (len(x),) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
            raise InputValidationError(
                f"labels: expected {len(x)} non-negative integers, got shape {y.shape}, dtype {y.dtype}"
            )
        k_classes = int(num_classes) if num_classes is not None else int(y.max()) + 1
        if y.max() >= k_classes:
            raise InputValidationError(f"labels: found class {y.max()} with num_classes={k_classes}")
        present = [c for c in range(k_classes) if np.any(y == c)]
        if len(present) < 2:
            raise InputValidationError("labels: Trust Score needs training points of at least two classes")
        self.sets_ = []
        self._nn = []
        for c in range(k_classes):
            xc = x[y == c]
            if len(xc):
                xc = xc[density_filter(xc, alpha=self.alpha, k=self.k)]
            self.sets_.append(xc)
            self._nn.append(NearestNeighbors(n_neighbors=1).fit(xc) if len(xc) else None)
        self.num_classes_ = k_classes
        return self

    def class_distances(self, features: np.ndarray) -> np.ndarray:
        """Distance from each point to the nearest point of every class set, shape (n, K) (inf for empty sets)."""
        if not hasattr(self, "sets_"):
            raise NotFittedError("TrustScore is not fitted yet: call .fit(features=..., labels=...) first")
        x = _as_2d(features, "features")
        if x.shape[1] != (self.sets_[0].shape[1] if len(self.sets_[0]) else x.shape[1]):
            raise InputValidationError(
                f"features: expected dimension {self.sets_[0].shape[1]}, got {x.shape[1]}"
            )
        out = np.full((len(x), self.num_classes_), np.inf)
        for c, nn in enumerate(self._nn):
            if nn is not None:
                out[:, c] = nn.kneighbors(x)[0][:, 0]
        return out

    def score(self, *, features: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        """TS(x) = d(x, nearest other-class set) / (d(x, predicted-class set) + min_dist), shape (n,)."""
        dist = self.class_distances(features)
        pred = np.asarray(predictions)
        if pred.shape != (len(dist),) or not np.issubdtype(pred.dtype, np.integer):
            raise InputValidationError(
                f"predictions: expected {len(dist)} integer labels, got shape {pred.shape}"
            )
        if pred.min() < 0 or pred.max() >= self.num_classes_:
            raise InputValidationError(f"predictions: labels must lie in [0, {self.num_classes_})")
        rows = np.arange(len(dist))
        d_pred = dist[rows, pred]
        other = dist.copy()
        other[rows, pred] = np.inf
        return other.min(axis=1) / (d_pred + self.min_dist)
