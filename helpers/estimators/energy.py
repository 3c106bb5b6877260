"""Energy-based scores (paper 5, Peng et al., ICLR 2024): free energy, Average Energy and Meta-Distribution Energy.

Definitions (paper 5 Sec. 3.2, Eq. 2-5, with the minus signs that the extracted text lost restored as in the
authors' released code; T is the temperature, default 1):

* free energy of one example:  ``E(x) = -T * logsumexp_k(f_k(x) / T)``  (nats x T; low = confident);
* Average Energy:  ``AvgEnergy = -(1/N) sum_n E(x_n)``  (higher = more confident; paper 5 plots E itself,
  e.g. "Avg Energy: -11.99" in Fig. 1, i.e. the negative of this score);
* MDE:  ``MDE = -(1/N) sum_n log softmax_n(E)`` where the softmax runs over the **N samples of the set**
  (not over classes):  ``MDE = logsumexp_n(E_n) - mean_n(E_n)  >=  log N``  (equality iff all E_n are equal).
  On 50,000-image sets this lands around 11-16 (log 50000 = 10.8), the scale of paper 5's Fig. 2.

Because raw MDE carries the ``log N`` term, it is only comparable between sets of the **same size** -- that is
the setting of paper 5 (and its reported numbers are raw MDE).  To compare or regress across sets of different
sizes, use the normalised variant ``MDE - log N`` (``normalize=True``), which is >= 0 and is 0 when all
energies are equal.  Use one temperature for the meta-set and the test sets.

Small-temperature limit (paper 5 Theorem 3.1, App. C).  Since ``max_k f_k <= T logsumexp(f/T) <= max_k f_k +
T log K``, the energy tends to the negative max-logit, ``E -> -max_k f_k``, as ``T -> 0`` (error at most
``T log K``), so MDE tends to ``logsumexp_n(-max f) - mean_n(-max f)`` (error at most ``2 T log K``).  Per example,
the theorem's difference between the log-likelihood term and the label's logit is
``Delta_i = f_{y_i}/T - logsumexp_k(f_k/T) = (f_{y_i} + E_i)/T``, and ``T * Delta_i -> f_{y_i} - max_k f_k``,
which is 0 exactly when the prediction is correct and negative otherwise: at small T the energy recovers the
max logit, i.e. the classification decision, which is the link between MDE and accuracy the theorem draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers.estimators._common import (
    check_positive,
    logsumexp_rows,
    n_classes_of,
    resolve_logits,
)
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_logits

__all__ = ["free_energy", "average_energy", "mde", "mde_parts", "AverageEnergy", "MDE"]


def free_energy(logits: Any, *, T: float = 1.0) -> np.ndarray:
    """Per-example free energy ``E(x) = -T * logsumexp(f(x) / T)`` (paper 5 Eq. 4), float64 of shape (n,)."""
    T = check_positive(T, "T")
    return -logsumexp_rows(check_logits(logits, "logits"), T=T)


def _mde_from_energy(E: np.ndarray) -> float:
    m = float(E.max())
    lse = m + float(np.log(np.exp(E - m).sum()))
    return lse - float(E.mean())


def average_energy(logits: Any, *, T: float = 1.0) -> float:
    """Average Energy ``-(1/N) sum_n E(x_n) = (1/N) sum_n T logsumexp(f(x_n)/T)`` (paper 5 App. B, Eq. 16)."""
    return float(-free_energy(logits, T=T).mean())


def mde(logits: Any, *, T: float = 1.0, normalize: bool = False) -> float:
    """Meta-Distribution Energy ``logsumexp_n(E_n) - mean_n(E_n)`` of one set (paper 5 Eq. 5, sign restored).

    Parameters
    ----------
    logits : array (N, K)
        The set's logits (one row per example).
    T : float, default 1.0
        Temperature of the free energy.
    normalize : bool, default False
        Subtract ``log N`` (>= 0, comparable across set sizes).  False gives the paper's raw MDE (>= log N).
    """
    E = free_energy(logits, T=T)
    v = _mde_from_energy(E)
    return v - float(np.log(E.shape[0])) if normalize else v


def mde_parts(logits: Any, *, T: float = 1.0) -> dict[str, float]:
    """Normalised MDE split into the set's Average Energy and a soft maximum of its energies.

    From Eq. 5, ``MDE = logsumexp_n(E_n) - mean_n(E_n)``, so with ``AvgEnergy = -mean_n(E_n)``::

        MDE - log N  =  AvgEnergy  +  log mean_n exp(E_n)

    The first part grows with the set's mean confidence; the second, a soft maximum of the energies (between
    ``mean E`` and ``max E``), grows with its *least* confident samples.  A shift that moves every energy by the
    same amount moves the two parts by equal and opposite amounts, so MDE (invariant to that move) only sees the
    spread of the energies: where the parts move together with accuracy they cancel.

    Parameters
    ----------
    logits : array (N, K)
    T : float, default 1.0

    Returns
    -------
    dict
        ``avg_energy`` (:func:`average_energy`), ``soft_max_energy`` (``log mean_n exp(E_n)``) and
        ``mde_normalized`` (their sum, ``mde(..., normalize=True)``), in units of T x nats.
    """
    E = free_energy(logits, T=T)
    avg = float(-E.mean())
    soft = _mde_from_energy(E) + float(E.mean()) - float(np.log(E.shape[0]))  # logsumexp(E) - log N
    return {"avg_energy": avg, "soft_max_energy": soft, "mde_normalized": avg + soft}


class _EnergyEstimator(LabelFreeEstimator):
    output = "score"
    requires_fit = False

    def __init__(
        self,
        *,
        T: float = 1.0,
        regressor: Any = None,
        n_boot: int = 200,
        level: float = 0.95,
        random_state: int | None = 0,
    ):
        self.T = T
        self.regressor = regressor
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_positive(self.T, "T")

    def fit(self, *, logits: Any = None, probs: Any = None, shifted: Any = None):
        """Records the reference class count (so ``estimate`` can check the target against it) and, with
        ``shifted={name: (logits, labels), ...}`` (labelled shifted sets), fits the line score -> accuracy that
        ``estimate`` reads the accuracy from (paper 5, Algorithm 1).  ``logits`` may be omitted with ``shifted``."""
        self._fit_score(logits=logits, probs=probs, shifted=shifted, resolve=resolve_logits)
        return self

    def _energy(self, logits: Any, probs: Any) -> np.ndarray:
        self._check_target_classes(n_classes_of(logits, probs))
        z = resolve_logits(logits=logits, probs=probs, where=f"{type(self).__name__}.estimate")
        return -logsumexp_rows(z, T=float(self.T))


class AverageEnergy(_EnergyEstimator):
    """Average Energy score ``-(1/N) sum_n E(x_n)`` (paper 5 App. B); higher = more confident.

    Parameters
    ----------
    T : float, default 1.0
        Temperature.  Scaling: ``AvgEnergy(c f; c T) = c AvgEnergy(f; T)``; it increases with T
        (d/dT of ``T logsumexp(f/T)`` is the softmax entropy >= 0).
    regressor : object with ``predict`` or callable, optional
        Maps the score to an accuracy fraction; default: the line fitted on ``fit(shifted=...)``.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = AverageEnergy().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.692, 1.6138)
    """

    name = "average_energy"

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        E = self._energy(logits, probs)
        return Prepared(n=E.shape[0], arrays={"neg_energy": -E}, details={"T": float(self.T)})

    def _columns(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["neg_energy"]

    def _point(self, prep: Prepared) -> float:
        return float(prep.arrays["neg_energy"].mean())


class MDE(_EnergyEstimator):
    """Meta-Distribution Energy (paper 5, Eq. 5): ``logsumexp_n(E_n) - mean_n(E_n)`` over the target set.

    Parameters
    ----------
    T : float, default 1.0
        Temperature of the free energy (paper 5 finds T = 1 best; use one T for meta-set and test sets).
    normalize : bool, default False
        ``False``: raw MDE, >= log N, what paper 5 reports -- compare only sets of equal size.
        ``True``: ``MDE - log N`` (>= 0), comparable across set sizes.
    regressor : object with ``predict`` or callable, optional
        Maps the score to an accuracy fraction (e.g. a linear regression fitted on a meta-set of synthetic
        shifted sets, paper 5 Algorithm 1); default: the line that ``fit(shifted=...)`` fits.
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> est = MDE().fit(logits=z, shifted=shifted)
    >>> round(est.estimate(logits=target).accuracy, 4), round(est.measure(logits=target).score, 4)
    (0.7162, 2.0877)
    """

    def __init__(
        self,
        *,
        T: float = 1.0,
        normalize: bool = False,
        regressor: Any = None,
        n_boot: int = 200,
        level: float = 0.95,
        random_state: int | None = 0,
    ):
        self.normalize = normalize
        super().__init__(T=T, regressor=regressor, n_boot=n_boot, level=level, random_state=random_state)

    @property
    def name(self) -> str:  # type: ignore[override]
        return "mde_normalized" if self.normalize else "mde"

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        E = self._energy(logits, probs)
        return Prepared(
            n=E.shape[0],
            arrays={"E": E},
            details={
                "T": float(self.T),
                "normalized": bool(self.normalize),
                "log_n": float(np.log(E.shape[0])),
            },
        )

    def _offset(self, n: int) -> float:
        return float(np.log(n)) if self.normalize else 0.0

    def _point(self, prep: Prepared) -> float:
        return _mde_from_energy(prep.arrays["E"]) - self._offset(prep.n)

    def _resample_values(self, prep: Prepared) -> np.ndarray:
        return prep.arrays["E"]

    def _resampled(self, rows: np.ndarray, prep: Prepared) -> np.ndarray:
        # each resample's log-sum-exp is shifted by that resample's own max energy: a shift by the full set's
        # max underflows every resample that misses an energy ~745 above the rest (exp(-745) = 0 in float64)
        m = rows.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(rows - m).sum(axis=1))
        return lse - rows.mean(axis=1) - self._offset(prep.n)
