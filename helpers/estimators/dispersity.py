"""Distribution-level scores: nuclear norm of the prediction matrix and Fréchet distance of feature sets.

* Nuclear norm (Deng et al., ICML 2023 "Confidence and dispersity speak"; paper 5 App. B, Eq. 19):
  ``||P||_* / sqrt(min(N, K) * N)`` for the (N, K) softmax matrix P; the sum of singular values is computed as
  ``sum_k sqrt(lambda_k(P^T P))`` from the K x K Gram matrix (``numpy.linalg.eigvalsh``, float64; the N x N
  one when N < K), accumulated chunk by chunk so an (N, K) input never gets a float64 copy; eigenvalues below
  the Gram's round-off level (``lambda_max * K * eps``) count as zero singular values.  Range: (0, 1]; it is 1 exactly when
  every row is one-hot and the predicted classes are perfectly balanced (N/K rows each, N >= K; for N < K:
  N distinct classes); uniform rows (every entry 1/K) give 1/K when N >= K.
  High = confident and dispersed predictions = high accuracy (a score; pass ``regressor`` for an accuracy).
* Fréchet distance (Deng & Zheng, CVPR 2021; paper 5 App. B, Eq. 12) between Gaussian fits of two feature sets:
  ``||mu_r - mu_t||^2 + tr(S_r) + tr(S_t) - 2 tr((S_r^{1/2} S_t S_r^{1/2})^{1/2})`` (squared feature units;
  unbiased covariances).  The matrix square roots use symmetric eigendecompositions (negative eigenvalues from
  round-off are clipped to 0), which stays stable for singular covariances and dimensions up to ~1000+, where
  ``scipy.linalg.sqrtm`` of the non-symmetric product can return complex noise.  0 for identical sets,
  symmetric in its two arguments.  Low = target close to reference = high accuracy (a score).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import (
    _exactly_one,
    n_classes_of,
    resolve_probs,
)
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_logits, check_matrix, check_probs

__all__ = [
    "gram_matrix",
    "nuclear_norm_score",
    "mean_and_covariance",
    "frechet_distance",
    "frechet_distance_from_stats",
    "NuclearNorm",
    "FrechetDistance",
]

_CHUNK_ELEMS = 1 << 21  # rows per chunk = this / n_columns (16 MB of float64)


def _chunks(n: int, d: int):
    step = max(1, _CHUNK_ELEMS // max(d, 1))
    for s in range(0, n, step):
        yield s, min(n, s + step)


def gram_matrix(x: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``X^T diag(w) X`` accumulated in float64 over row chunks (no float64 copy of the whole X).

    For float32 input with more than 64 columns, each chunk's product runs in float32 BLAS (relative error
    ~1e-7 on the sums after float64 accumulation, about twice as fast); otherwise each chunk is cast to float64.
    """
    n, d = x.shape
    g = np.zeros((d, d), dtype=np.float64)
    low = x.dtype == np.float32 and d > 64
    for s, e in _chunks(n, d):
        c = x[s:e] if low else x[s:e].astype(np.float64)
        cw = c if weights is None else c * weights[s:e, None].astype(c.dtype)
        g += cw.T @ c
    return g


def _nuclear_from_gram(g: np.ndarray, n: int, k: int) -> float:
    lam = np.linalg.eigvalsh((g + g.T) / 2.0)
    # eigenvalues of the Gram matrix below its round-off level are zero singular values, not sqrt(noise)
    lam[lam < lam.max() * g.shape[0] * np.finfo(np.float64).eps] = 0.0
    return float(np.sqrt(lam).sum() / np.sqrt(min(n, k) * n))


def _nuclear(p: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Normalised nuclear norm from the smaller Gram matrix (K x K, or N x N when N < K)."""
    n, k = p.shape
    if n < k:
        q = p.astype(np.float64) if weights is None else p.astype(np.float64) * np.sqrt(weights)[:, None]
        return _nuclear_from_gram(q @ q.T, n, k)
    return _nuclear_from_gram(gram_matrix(p, weights), n, k)


def nuclear_norm_score(probs: Any) -> float:
    """Normalised nuclear norm ``||P||_* / sqrt(min(N, K) * N)`` of an (N, K) probability matrix (Deng et al. 2023).

    In (0, 1]; equals 1 for one-hot rows with perfectly balanced classes.  Use
    :func:`helpers.estimators.softmax` first if you hold logits.
    """
    return _nuclear(check_probs(probs, "probs"))


def mean_and_covariance(x: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean (float64) and unbiased covariance of the rows of x, optionally with integer frequency weights."""
    n = x.shape[0]
    if weights is None:
        mu = x.mean(axis=0, dtype=np.float64)
        tot = float(n)
    else:
        tot = float(weights.sum())
        mu = _wmean(x, weights, tot)
    d = x.shape[1]
    cov = np.zeros((d, d), dtype=np.float64)
    low = x.dtype == np.float32 and d > 64
    mu_c = mu.astype(np.float32) if low else mu
    for s, e in _chunks(n, d):
        c = (x[s:e] - mu_c) if low else (x[s:e].astype(np.float64) - mu)
        cw = c if weights is None else c * weights[s:e, None].astype(c.dtype)
        cov += cw.T @ c
    cov /= max(tot - 1.0, 1.0)
    return mu, cov


def _wmean(x: np.ndarray, w: np.ndarray, tot: float) -> np.ndarray:
    acc = np.zeros(x.shape[1], dtype=np.float64)
    for s, e in _chunks(*x.shape):
        acc += w[s:e] @ x[s:e].astype(np.float64)
    return acc / tot


#: the column-means bootstrap route stores n x d(d+1)/2 float64 products; above this many bytes use weights
_COLUMNS_MAX_BYTES = 512 * 2**20


def _outer_columns(x: np.ndarray) -> np.ndarray | None:
    """Per-row upper-triangle products ``x_i x_i^T`` as (n, d(d+1)/2) float64 columns, or None if too large."""
    n, d = x.shape
    iu, ju = np.triu_indices(d)
    if n * iu.shape[0] * 8 > _COLUMNS_MAX_BYTES:
        return None
    x64 = x.astype(np.float64, copy=False)
    return x64[:, iu] * x64[:, ju]


def _unpack_sym(flat: np.ndarray, d: int) -> np.ndarray:
    """(B, d(d+1)/2) upper triangles -> (B, d, d) symmetric matrices."""
    iu, ju = np.triu_indices(d)
    out = np.zeros((flat.shape[0], d, d))
    out[:, iu, ju] = flat
    out[:, ju, iu] = flat
    return out


def _sym_sqrt(cov: np.ndarray) -> np.ndarray:
    lam, v = np.linalg.eigh((cov + cov.T) / 2.0)
    return (v * np.sqrt(np.clip(lam, 0.0, None))) @ v.T


def _frechet(mu1, cov1, sqrt1, mu2, cov2) -> float:
    m = sqrt1 @ cov2 @ sqrt1
    lam = np.linalg.eigvalsh((m + m.T) / 2.0)
    tr_sqrt = float(np.sqrt(np.clip(lam, 0.0, None)).sum())
    diff = mu1 - mu2
    return float(diff @ diff + np.trace(cov1) + np.trace(cov2) - 2.0 * tr_sqrt)


def frechet_distance_from_stats(mu1: Any, cov1: Any, mu2: Any, cov2: Any) -> float:
    """Fréchet distance between N(mu1, cov1) and N(mu2, cov2), clipped at 0 (round-off)."""
    mu1, mu2 = np.asarray(mu1, np.float64), np.asarray(mu2, np.float64)
    cov1, cov2 = np.asarray(cov1, np.float64), np.asarray(cov2, np.float64)
    if mu1.shape != mu2.shape or cov1.shape != cov2.shape or cov1.shape != (mu1.shape[0],) * 2:
        raise InputValidationError(
            f"mu/cov shapes disagree: mu1 {mu1.shape}, cov1 {cov1.shape}, mu2 {mu2.shape}, cov2 {cov2.shape}"
        )
    return max(0.0, _frechet(mu1, cov1, _sym_sqrt(cov1), mu2, cov2))


def frechet_distance(features_a: Any, features_b: Any) -> float:
    """Fréchet distance between Gaussian fits of two (n, d) feature sets (same d); symmetric, >= 0."""
    a = check_matrix(features_a, "features_a", min_rows=2)
    b = check_matrix(features_b, "features_b", min_rows=2)
    if a.shape[1] != b.shape[1]:
        raise InputValidationError(
            f"feature-dimension mismatch: features_a has {a.shape[1]} columns, features_b has {b.shape[1]}"
        )
    mu1, c1 = mean_and_covariance(a)
    mu2, c2 = mean_and_covariance(b)
    return frechet_distance_from_stats(mu1, c1, mu2, c2)


# ----------------------------------------------------------------------------------------------- classes
class NuclearNorm(LabelFreeEstimator):
    """Normalised nuclear norm of the target softmax matrix (Deng et al. 2023), a score in (0, 1].

    Parameters
    ----------
    regressor : object with ``predict`` or callable, optional
        Maps the score to an accuracy fraction; default: the line fitted on ``fit(shifted=...)``.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).  For small K (n K(K+1)/2 float64 products <= 512 MB)
        the Gram matrix is a mean of per-row outer products, so all replicates come from one matrix product with
        multinomial counts and a batched ``eigvalsh``; otherwise each replicate recomputes the Gram matrix with
        integer weights (O(n K^2) per replicate).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = NuclearNorm().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.6826, 0.5145)
    """

    name = "nuclear_norm"
    output = "score"
    requires_fit = False

    def __init__(
        self, *, regressor: Any = None, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0
    ):
        self.regressor = regressor
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(self, *, logits: Any = None, probs: Any = None, shifted: Any = None):
        """Records the reference class count and, with ``shifted={name: (logits, labels), ...}``, fits the line
        score -> accuracy of paper 5's Algorithm 1 (``logits`` may then be omitted)."""
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_probs)
        return self

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        self._check_target_classes(n_classes_of(logits, probs))
        p = resolve_probs(logits=logits, probs=probs, where="NuclearNorm.estimate")
        return Prepared(n=p.shape[0], arrays={"P": p})

    def _point(self, prep: Prepared) -> float:
        return _nuclear(prep.arrays["P"])

    def _columns(self, prep: Prepared) -> np.ndarray | None:
        # small K: the Gram matrix is the mean of per-row outer products -> vectorised bootstrap
        p = prep.arrays["P"]
        return _outer_columns(p) if p.shape[0] >= p.shape[1] else None

    def _stream_columns(self, prep: Prepared) -> np.ndarray:
        """The per-row upper-triangle products of any block, however few its rows (out-of-core merging)."""
        p = prep.arrays["P"].astype(np.float64, copy=False)
        iu, ju = np.triu_indices(p.shape[1])
        return p[:, iu] * p[:, ju]

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        n, k = prep.arrays["P"].shape
        g = _unpack_sym(means * n, k)
        lam = np.linalg.eigvalsh(g)
        lam[lam < lam.max(axis=1, keepdims=True) * k * np.finfo(np.float64).eps] = 0.0
        return np.sqrt(lam).sum(axis=1) / np.sqrt(min(n, k) * n)

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:
        return _nuclear(prep.arrays["P"], counts)


def _features(where: str, features: Any, logits: Any, probs: Any) -> tuple[np.ndarray, str]:
    """The representation to measure: ``features`` when given (the model outputs passed beside them, as the
    common keywords of every estimator pass them, are not used), else exactly one of ``logits`` / ``probs``."""
    if features is not None:
        logits = probs = None
    kind = _exactly_one(where, features=features, logits=logits, probs=probs)
    if kind == "probs":
        return check_probs(probs, "probs"), kind
    if kind == "logits":
        check_logits(logits, "logits")  # probabilities passed as logits are refused there
    x = check_matrix(features if kind == "features" else logits, kind, min_rows=2)
    return x, kind


class FrechetDistance(LabelFreeEstimator):
    """Fréchet distance between the reference and target feature distributions (Deng & Zheng 2021), a score.

    ``fit`` stores the reference mean, covariance and covariance square root; ``estimate`` computes the
    distance to the target set's Gaussian fit.  The representation is whatever you pass, consistently in fit
    and estimate: ``features=`` (e.g. penultimate-layer activations, as in Deng & Zheng), or ``logits=`` /
    ``probs=`` used as features.

    Parameters
    ----------
    regressor : object with ``predict`` or callable, optional
        Maps the distance to an accuracy fraction; default: the line fitted on ``fit(shifted=...)``.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).  Small d: vectorised through the means of x and x x^T
        (like :class:`NuclearNorm`); large d: each replicate recomputes the target covariance with multinomial
        weights (O(n d^2) per replicate).  The bootstrap distribution of a distance is biased upward
        (resampling adds covariance noise), so the interval need not contain the point estimate for near-identical
        sets.

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = FrechetDistance().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.6375, 0.4806)
    """

    name = "frechet"
    direction = -1  # a larger distance from the reference, a lower accuracy
    target_inputs = ("features", "logits", "probs")
    output = "score"

    def __init__(
        self, *, regressor: Any = None, n_boot: int = 200, level: float = 0.95, random_state: int | None = 0
    ):
        self.regressor = regressor
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def fit(
        self, *, features: Any = None, logits: Any = None, probs: Any = None, shifted: Any = None
    ) -> FrechetDistance:
        """Fit the reference Gaussian (mean ``mu_``, covariance ``cov_``) on one of features/logits/probs; with
        ``shifted``, the line distance -> accuracy (paper 5, Algorithm 1) on labelled shifted sets given in the
        same representation: ``{name: (logits, labels)}``, or ``{name: {"features": ..., "logits": ...,
        "labels": ...}}`` when the distance is between features."""
        self._check_params()
        x, kind = _features("FrechetDistance.fit", features, logits, probs)
        self.mu_, self.cov_ = mean_and_covariance(x)
        self.cov_sqrt_ = _sym_sqrt(self.cov_)
        self.__dict__.pop("n_classes_", None)
        if kind != "features":  # a class count only when the distance is between outputs
            self.n_classes_ = x.shape[1]
        self.n_columns_ = x.shape[1]  # checked against the target
        self.input_kind_ = kind
        self._fit_shifted(shifted)
        return self

    def _require_fit(self) -> None:
        self._check_fitted("mu_")

    def _prepare_target(self, *, features=None, logits=None, probs=None) -> Prepared:
        x, kind = _features("FrechetDistance.estimate", features, logits, probs)
        if kind != self.input_kind_:
            raise InputValidationError(
                f"FrechetDistance.estimate: fit used {self.input_kind_}=, the target came as {kind}=; "
                f"pass the target as {self.input_kind_}= (distances between different spaces are meaningless)"
            )
        if x.shape[1] != self.n_columns_:
            raise InputValidationError(
                f"feature-dimension mismatch: the reference passed to fit had {self.n_columns_} columns, "
                f"the target {kind} has {x.shape[1]}"
            )
        return Prepared(n=x.shape[0], arrays={"X": x}, details={"input": kind})

    def _dist(self, mu, cov) -> float:
        return max(0.0, _frechet(self.mu_, self.cov_, self.cov_sqrt_, mu, cov))

    def _point(self, prep: Prepared) -> float:
        return self._dist(*mean_and_covariance(prep.arrays["X"]))

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:
        return self._dist(*mean_and_covariance(prep.arrays["X"], counts))

    def _columns(self, prep: Prepared) -> np.ndarray | None:
        # small d: mean and covariance are functions of the means of x and of x x^T (centred for precision)
        x = prep.arrays["X"]
        centre = x.mean(axis=0, dtype=np.float64)
        prep.arrays["centre"] = centre
        xc = x.astype(np.float64) - centre
        outer = _outer_columns(xc)
        return None if outer is None else np.hstack([xc, outer])

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        n, d = prep.arrays["X"].shape
        centre = prep.arrays["centre"]
        mu_c = means[:, :d]
        second = _unpack_sym(means[:, d:], d)
        cov = (second - mu_c[:, :, None] * mu_c[:, None, :]) * (n / (n - 1.0))
        m = self.cov_sqrt_ @ cov @ self.cov_sqrt_
        lam = np.linalg.eigvalsh((m + np.swapaxes(m, 1, 2)) / 2.0)
        tr_sqrt = np.sqrt(np.clip(lam, 0.0, None)).sum(axis=1)
        diff = mu_c + centre - self.mu_
        fd = (diff**2).sum(axis=1) + np.trace(self.cov_) + np.trace(cov, axis1=1, axis2=2) - 2.0 * tr_sqrt
        return np.maximum(fd, 0.0)
