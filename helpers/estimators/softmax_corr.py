"""SoftmaxCorr (TMLR 2024): how close the class-class correlation of the predictions is to a diagonal prior.

With P the (N, K) softmax matrix of the target, ``G = PᵀP / N`` (K x K; ``G_jk`` = how often the model puts mass
on classes j and k together) and a diagonal reference ``R = diag(π)``:

    SoftmaxCorr = <G, R>_F / (‖G‖_F ‖R‖_F) = Σ_k π_k G_kk / (‖π‖₂ ‖G‖_F)        (cosine similarity of matrices)

G is entry-wise ≥ 0, so the score lies in [0, 1]; it is 1 exactly when G is proportional to diag(π): confident
(one-hot) predictions whose class proportions follow π.  Confident but concentrated predictions, or
under-confident ones (mass off the diagonal), lower it.  ``prior="uniform"`` (default) takes π = 1/K;
``prior="reference"`` takes the reference label proportions given to ``fit(labels=...)``.  A score: paper 5's
line over labelled shifted sets (``fit(shifted=...)``) or a ``regressor`` turns it into an accuracy.

G is a mean of per-row outer products, so the bootstrap resamples its K(K+1)/2 column means (one matrix
product with multinomial counts); above the size where those columns would not fit in memory, each replicate
recomputes G with integer weights.  Mergeable over chunks: G is a sum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import check_choice, n_classes_of, resolve_probs
from helpers.estimators.dispersity import _outer_columns, _unpack_sym, gram_matrix
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_labels

__all__ = ["softmax_correlation", "SoftmaxCorr"]


def softmax_correlation(probs: np.ndarray, prior: np.ndarray | None = None) -> float:
    """SoftmaxCorr of a softmax matrix (module docstring); ``prior`` defaults to uniform."""
    p = np.asarray(probs)
    k = p.shape[1]
    pi = np.full(k, 1.0 / k) if prior is None else np.asarray(prior, dtype=np.float64)
    return _cosine(gram_matrix(p) / p.shape[0], pi)


def _cosine(g: np.ndarray, pi: np.ndarray) -> float | np.ndarray:
    """Cosine of G (or a stack of them, (B, K, K)) with diag(π)."""
    diag = np.diagonal(g, axis1=-2, axis2=-1)
    norm = np.sqrt(np.sum(g * g, axis=(-2, -1)))
    return (diag @ pi) / (np.linalg.norm(pi) * norm)


class SoftmaxCorr(LabelFreeEstimator):
    """Cosine similarity between the target's ``PᵀP / N`` and ``diag(π)`` (module docstring), a score in [0, 1].

    Parameters
    ----------
    prior : {"uniform", "reference"}, default "uniform"
        π: 1/K, or the reference label proportions (then ``fit`` needs ``labels=``).
    regressor : object with ``predict`` or callable, optional
        Maps the score to an accuracy fraction; default: the line fitted on ``fit(shifted=...)``.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = SoftmaxCorr().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.6939, 0.6592)
    """

    name = "softmax_corr"
    output = "score"
    requires_fit = False

    def __init__(self, *, prior: str = "uniform", regressor: Any = None, n_boot: int = 200, level: float = 0.95,
                 random_state: int | None = 0):  # fmt: skip
        self.prior = prior
        self.regressor = regressor
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_choice(self.prior, "prior", ("uniform", "reference"))

    def fit(self, *, logits: Any = None, probs: Any = None, labels: Any = None, shifted: Any = None):
        """Records the reference class count (and, for ``prior="reference"``, its label proportions from
        ``labels=``); with ``shifted={name: (logits, labels), ...}`` fits paper 5's line score -> accuracy."""
        self._check_params()
        self.__dict__.pop("prior_", None)
        if self.prior == "reference":
            if labels is None or (logits is None and probs is None):
                raise InputValidationError("SoftmaxCorr(prior='reference').fit: needs labels= with logits= or probs=")
            k = n_classes_of(logits, probs)
            y = check_labels(labels, "labels", n_classes=k)
            self.prior_ = np.bincount(y, minlength=k) / y.shape[0]
        elif labels is not None and (logits is not None or probs is not None):  # unused, but a wrong array is refused
            check_labels(labels, "labels", n_classes=n_classes_of(logits, probs))
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_probs)
        return self

    def _pi(self, k: int) -> np.ndarray:
        if self.prior == "reference":
            self._check_fitted("prior_")
            return self.prior_
        return np.full(k, 1.0 / k)

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        self._check_target_classes(n_classes_of(logits, probs))
        p = resolve_probs(logits=logits, probs=probs, where="SoftmaxCorr.estimate")
        return Prepared(n=p.shape[0], arrays={"P": p, "pi": self._pi(p.shape[1])})

    def _point(self, prep: Prepared) -> float:
        p = prep.arrays["P"]
        return float(_cosine(gram_matrix(p) / p.shape[0], prep.arrays["pi"]))

    def _columns(self, prep: Prepared) -> np.ndarray | None:
        return _outer_columns(prep.arrays["P"])

    def _from_means(self, means: np.ndarray, prep: Prepared) -> np.ndarray:
        return _cosine(_unpack_sym(means, prep.arrays["P"].shape[1]), prep.arrays["pi"])

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:
        p = prep.arrays["P"]
        return float(_cosine(gram_matrix(p, counts) / counts.sum(), prep.arrays["pi"]))
