"""MaNo (Xie, Odonnat, Feofanov et al., NeurIPS 2024): the normalised entry-wise p-norm of the prediction matrix.

Three steps on the target logits ``Z`` (N x K):

1. **Criterion** ``Φ = (1/N) Σ_i CE(u, softmax(z_i)) = (1/N) Σ_i [logsumexp(z_i) − (1/K) Σ_k z_ik]`` (nats; the
   cross-entropy from the uniform distribution u to each softmax vector; 0 for uniform predictions, large for
   confident ones).
2. **Normalisation** σ ("softrun", Eq. 6): ``softmax(z_i)`` when ``Φ > η`` (η = 5); otherwise the second-order Taylor
   expansion of the exponential, ``v = 1 + z + z²/2``, shifted by its row minimum and L1-normalised,
   ``σ_ik = (v_ik − min_j v_ij) / Σ_j (v_ij − min_j v_ij)``.  A row whose ``v`` is constant (all logits equal, or
   symmetric about −1) has no spread to normalise: it gets the uniform 1/K, the limit of a softmax of equal logits
   (the authors' ``F.normalize`` returns a zero row there).
3. **Score** ``S = ‖σ(Z)‖_p / (N K)^{1/p} = ((1/(N K)) Σ_ik σ_ik^p)^{1/p}`` with p = 4; between 1/K (every row
   uniform) and K^(−1/p) (every row one-hot).  High = confident predictions = high accuracy: a score, turned into an accuracy by paper 5's
   line over labelled shifted sets (``fit(shifted=...)``) or a ``regressor``.

Deviations from the authors' code (github.com/Renchunzi-Xie/MaNo), none from the paper: the whole set is one
batch (their batch mode divides each batch's norm by the *total* size, then averages, which is not the paper's
score); the criterion and the Taylor order are checked (their packaged ``taylor_order`` assertion is inverted, so
the default fails); logits come from a model in evaluation mode (their experiment script calls ``model.train()``).

The bootstrap holds the normalisation chosen on the whole target fixed (a replicate near η would otherwise switch
formulas); the score is then a function of the mean of the per-row sums ``Σ_k σ_ik^p`` (column-means protocol).
Mergeable over chunks: Φ is a mean, and once Φ is known so is ``Σ σ^p``; a mean of per-chunk scores is not the
score of the whole set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import (
    logsumexp_rows,
    n_classes_of,
    resolve_logits,
    softmax,
)
from helpers.estimators.estimator import LabelFreeEstimator, Prepared

__all__ = ["mano_criterion", "mano_normalize", "mano_score", "MaNo"]

#: η of the paper: softmax above it, the Taylor normalisation at or below it
MANO_THRESHOLD = 5.0
#: rows per block of the in-memory score (a block of float32 logits at K = 10 fits in a core's cache)
BLOCK_ROWS = 16_384
#: up to this many classes a row reduction runs column by column (faster for short rows), beyond it along the rows
NARROW = 64


def mano_criterion(logits: np.ndarray) -> float:
    """``Φ``: the mean cross-entropy from the uniform distribution to each row's softmax (nats, ≥ 0); equal to
    ``mean_i logsumexp(z_i) − mean_ik z_ik``."""
    z = np.asarray(logits)
    return float(np.mean(logsumexp_rows(z)) - z.mean(dtype=np.float64))


def mano_normalize(logits: np.ndarray, *, use_softmax: bool) -> np.ndarray:
    """σ(Z): the softmax, or the shifted and L1-normalised Taylor expansion ``1 + z + z²/2`` (rows without spread:
    uniform).  Same dtype as a floating input."""
    z = np.asarray(logits)
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    if use_softmax:
        return softmax(z)
    v = z * z  # 1 + z + z²/2, in place: one (N, K) temporary
    v *= 0.5
    v += z
    v += 1.0
    v -= v.min(axis=1, keepdims=True)
    total = v.sum(axis=1, keepdims=True)
    flat = total[:, 0] <= 0
    total[flat] = 1.0
    v /= total
    if flat.any():
        v[flat] = 1.0 / z.shape[1]
    return v


def _row_extreme(z: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """Row maxima or minima of a 2-d array, one column at a time up to :data:`NARROW` columns: ``z.max(axis=1)`` over
    K ≈ 10 columns is several times slower in numpy than K element-wise passes (the same values)."""
    if z.shape[1] > NARROW:
        return ufunc.reduce(z, axis=1)
    out = z[:, 0].copy()
    for k in range(1, z.shape[1]):
        ufunc(out, z[:, k], out=out)
    return out


def _row_sum64(z: np.ndarray) -> np.ndarray:
    """Row sums accumulated in float64, one column at a time (faster than ``z.sum(axis=1, dtype=np.float64)``)."""
    if z.shape[1] > NARROW:
        return z.sum(axis=1, dtype=np.float64)
    out = z[:, 0].astype(np.float64)
    for k in range(1, z.shape[1]):
        out += z[:, k]
    return out


def _taylor_power_sums(z: np.ndarray, p: float) -> np.ndarray:
    """``Σ_k σ_ik^p`` of the Taylor normalisation without forming σ: ``(v − min v)`` row by row (the ``+ 1`` of
    ``1 + z + z²/2`` cancels in the shift), its power sum divided by the row total to the p-th; rows without spread
    get the uniform row's ``K · K^(−p)``."""
    if not np.issubdtype(z.dtype, np.floating):
        z = z.astype(np.float64)
    v = z * z
    v *= 0.5
    v += z
    v -= _row_extreme(v, np.minimum)[:, None]
    total = _row_sum64(v)
    sums = _row_power_sums(v, p)
    flat = total <= 0
    total[flat] = 1.0
    sums /= total**p
    sums[flat] = z.shape[1] * float(z.shape[1]) ** (-p)
    return sums


def _row_power_sums(sigma: np.ndarray, p: float) -> np.ndarray:
    """``Σ_k σ_ik^p`` per row, float64; the powers in the input's dtype (σ ≤ 1: no overflow), in place."""
    if p == 4.0:
        np.multiply(sigma, sigma, out=sigma)
        np.multiply(sigma, sigma, out=sigma)
    else:
        np.power(sigma, p, out=sigma)
    return _row_sum64(sigma)


def mano_score(logits: np.ndarray, *, p: float = 4.0, threshold: float = MANO_THRESHOLD) -> tuple[float, float]:
    """``(S, Φ)``: MaNo's score of the logits and the criterion that chose the normalisation."""
    phi = mano_criterion(logits)
    sigma = mano_normalize(logits, use_softmax=phi > threshold)
    n, k = sigma.shape
    return float((_row_power_sums(sigma, float(p)).sum() / (n * k)) ** (1.0 / p)), phi


class MaNo(LabelFreeEstimator):
    """MaNo's score ``‖σ(Z)‖_p / (N K)^{1/p}`` of the target logits (module docstring), in [1/K, K^(−1/p)].

    Parameters
    ----------
    p : float, default 4
        Order of the entry-wise norm (the paper's choice).
    threshold : float, default 5
        η: softmax when the criterion Φ exceeds it, else the Taylor normalisation.
    regressor : object with ``predict`` or callable, optional
        Maps the score to an accuracy fraction; default: the line fitted on ``fit(shifted=...)``.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = MaNo().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.6739, 0.6338)
    """

    name = "mano"
    output = "score"
    requires_fit = False

    def __init__(self, *, p: float = 4.0, threshold: float = MANO_THRESHOLD, regressor: Any = None,
                 n_boot: int = 200, level: float = 0.95, random_state: int | None = 0):  # fmt: skip
        self.p = p
        self.threshold = threshold
        self.regressor = regressor
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if not (np.isfinite(float(self.p)) and float(self.p) >= 1.0):
            raise InputValidationError(f"p: expected a number >= 1 (a norm's order), got {self.p!r}")
        if not np.isfinite(float(self.threshold)):
            raise InputValidationError(f"threshold: expected a finite number, got {self.threshold!r}")

    def fit(self, *, logits: Any = None, probs: Any = None, shifted: Any = None):
        """Records the reference class count and, with ``shifted={name: (logits, labels), ...}``, fits paper 5's line
        score -> accuracy (``logits`` may then be omitted).  Logits only: the criterion needs them."""
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_logits)
        return self

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        z = resolve_logits(logits=logits, probs=probs, where="MaNo.estimate")
        self._check_target_classes(n_classes_of(z))
        phi, softmax_branch, row_sums = self._blocked_row_sums(z)
        details = {"criterion": phi, "normalization": "softmax" if softmax_branch else "taylor", "p": float(self.p)}
        return Prepared(n=z.shape[0], arrays={"row_sums": row_sums, "k": np.array(z.shape[1])}, details=details)

    def _blocked_row_sums(self, z: np.ndarray) -> tuple[float, bool, np.ndarray]:
        """``(Φ, softmax branch?, Σ_k σ_ik^p per row)`` in blocks of :data:`BLOCK_ROWS` rows, two passes: Φ (a mean
        over the whole set) decides the normalisation, then each block's power sums -- the same numbers as the
        whole-array computation up to float summation order, with every pass over a block that stays in cache."""
        if not np.issubdtype(z.dtype, np.floating):
            z = z.astype(np.float64)
        n, lse_total, z_total = z.shape[0], 0.0, 0.0
        for a in range(0, n, BLOCK_ROWS):
            block = z[a : a + BLOCK_ROWS]
            top = _row_extreme(block, np.maximum)
            with np.errstate(over="ignore"):  # z - max may reach -inf (a zero term) for logits near the float max
                e = block - top[:, None]
            np.exp(e, out=e)
            lse_total += float(np.sum(top + np.log(_row_sum64(e))))
            z_total += float(block.sum(dtype=np.float64))
        phi = lse_total / n - z_total / z.size
        softmax_branch = phi > float(self.threshold)
        sums = np.empty(n)
        for a in range(0, n, BLOCK_ROWS):
            sums[a : a + BLOCK_ROWS] = self._row_sums(z[a : a + BLOCK_ROWS], softmax_branch=softmax_branch)
        return phi, softmax_branch, sums

    def _row_sums(self, z: np.ndarray, *, softmax_branch: bool, softmax_rows: np.ndarray | None = None) -> np.ndarray:
        """``Σ_k σ_ik^p`` per row under the normalisation chosen for the whole set (``softmax_rows``: the softmax of
        ``z`` when already computed)."""
        if softmax_branch:
            return _row_power_sums(softmax(z) if softmax_rows is None else softmax_rows, float(self.p))
        return _taylor_power_sums(z, float(self.p))

    def _point(self, prep: Prepared) -> float:
        return float(self._from_means(np.array([[prep.arrays["row_sums"].mean()]]), prep)[0])

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["row_sums"][:, None]

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        k = float(prep.arrays["k"])
        return (np.asarray(means)[:, 0] / k) ** (1.0 / float(self.p))
