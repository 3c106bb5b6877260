"""Confidence Optimal Transport (COT; Lu et al., NeurIPS 2023, "Characterizing out-of-distribution error via
optimal transport"; paper 5 App. B, Eq. 20).

COT predicts the target *error* as the Wasserstein-1 distance between the target's predicted probability
vectors (the push-forward of the target inputs through the model, N points on the simplex, mass 1/N each) and
the reference label distribution (K one-hot points e_k with the reference class proportions pi_k):

    COT_error = min_{gamma in Pi(1/N, pi)} sum_{i,k} gamma_ik c(p_i, e_k),    accuracy = 1 - COT_error.

Cost.  We use ``c(p, e_k) = 1 - p_k``.  This equals both ``0.5 ||p - e_k||_1`` and ``||p - e_k||_inf`` on the
simplex (``max_{j != k} p_j <= 1 - p_k``), so the sup-norm cost of Lu et al. and the half-L1 reading coincide;
the cost lies in [0, 1], the error in [0, 1].  Sanity anchors: when pi matches the predicted-class proportions
and every p_i is one-hot, COT = 0; with a single class it is ``1 - mean_i p_ik`` (Average Confidence's
complement when every example is predicted as that class).

Computation.  The target side has only K atoms, so the problem is an N x K transport problem on the cost matrix
``1 - P`` -- never N x N.  Up to ``_SMALL`` rows it goes to ``ot.emd2`` (POT's network simplex) as is.  Above,
POT's time grows like N^1.9 (16 s at 1,000,000 x 10), so :func:`_certified_transport` solves it exactly with K dual
prices: (1) prices ``v`` from the entropic semi-dual ``max_v sum_i a_i (-eps log sum_k exp((v_k - c_ik)/eps)) +
sum_k b_k v_k`` (L-BFGS on random subsamples, eps = 0.1, 0.01, 0.001); (2) every row whose best reduced cost
``c_ik - v_k`` beats its second best by more than ``delta`` (2e-2) is assigned to its best atom; (3) the remaining
rows and the atoms' remaining capacities form a smaller problem of the same kind: above ``_SUB_SMALL`` rows it is
solved by steps (1)-(3) again with prices from *all* its rows at eps = 1e-4 and a band ten times narrower (the
subsample's mass noise, ~1e-3, is what limits the first prices), else by ``ot.emd2``; (4) a **certificate**: with
the final prices ``v'``, ``u_i = min_k (c_ik - v'_k)`` is dual feasible, so ``sum_i a_i u_i + sum_k b_k v'_k`` is
a lower bound on the optimum and the plan's cost an upper bound; they must agree to 1e-9, else ``delta`` grows 4x
(up to one exact solve of everything).  At 1,000,000 x 10 on the benchmark's inputs: ~37,000 rows in the first
band, ~3,800 left to the simplex (``make timings`` times it: figures/study_estimators.md).  The value
is therefore POT's optimum (to 1e-9), not an approximation.
``batch_size`` (default None) keeps the older batched mode: random batches of that size, each transported to pi,
averaged -- a feasible plan, so an upper bound on the error.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.estimators._common import n_classes_of, resolve_probs
from helpers.estimators.base import SmallSampleWarning
from helpers.estimators.estimator import LabelFreeEstimator, Prepared
from helpers.validation import check_labels, check_probs, check_vector

__all__ = ["label_distribution", "cot_error", "transport_row_costs", "COT"]

_NUM_ITER_MAX = 10**9
_SMALL = 20_000  # rows up to which one network-simplex solve is faster than the certified route
_DELTA0 = 2e-2  # first width of the band of ambiguous rows (cost scale [0, 1]); 10x narrower per level
_GROW = 4  # factor by which the band widens when the fixed rows overload an atom or the certificate fails
_TOP_STAGES = ((1e-1, 20_000), (1e-2, 20_000), (1e-3, 100_000))  # (eps, rows sampled) for the first prices
_SUB_STAGES = ((1e-4, None),)  # the ambiguous rows' own prices: every row, a 10x smaller eps
_SUB_SMALL = 5_000  # ambiguous rows up to which the network simplex solves the sub-problem directly
_MAX_DEPTH = 2


def label_distribution(labels: Any, n_classes: int) -> np.ndarray:
    """Class proportions ``pi_k`` of integer labels in [0, n_classes) (float64, sums to 1)."""
    y = check_labels(labels, "labels", n_classes=n_classes)
    return np.bincount(y, minlength=n_classes) / y.shape[0]


def _emd_cost(cost: np.ndarray, a: np.ndarray, b: np.ndarray, *, with_log: bool = False):
    import ot

    val, log = ot.emd2(a, b, cost, numItermax=_NUM_ITER_MAX, log=True)
    return (float(val), log) if with_log else (float(val), log.get("warning"))


def _emd_plan(cost: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Optimal cost, plan (n, K) and atom prices of one network-simplex solve."""
    import ot

    plan, log = ot.emd(a, b, cost, numItermax=_NUM_ITER_MAX, log=True)
    return float(log["cost"]), np.asarray(plan), np.asarray(log["v"], dtype=np.float64)


def _semi_dual_prices(cost: np.ndarray, a: np.ndarray, b: np.ndarray, eps: float, v0: np.ndarray) -> np.ndarray:
    """Maximise the entropic semi-dual g_eps(v) (see module docstring) by L-BFGS from ``v0``."""
    from scipy.optimize import minimize

    def neg(v: np.ndarray) -> tuple[float, np.ndarray]:
        r = (v[None, :] - cost) / eps
        top = r.max(axis=1)
        r -= top[:, None]
        np.exp(r, out=r)
        total = r.sum(axis=1)
        lse = top + np.log(total)
        return float(eps * (a @ lse) - b @ v), (a / total) @ r - b

    return minimize(neg, v0, jac=True, method="L-BFGS-B", options={"maxiter": 200, "gtol": 1e-10}).x


def _best_and_margin(cost: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's best atom under prices ``v`` (argmin of the reduced cost ``c_ik - v_k``) and its margin over
    the second best."""
    r = cost - v[None, :]
    best = r.argmin(axis=1)
    idx = np.arange(r.shape[0])
    first = r[idx, best]
    r[idx, best] = np.inf
    return best, r.min(axis=1) - first


def _certified_transport(
    cost: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    tol: float = 1e-9,
    v0: np.ndarray | None = None,
    depth: int = 0,
    row_costs: bool = False,
) -> tuple[float, dict]:
    """Exact optimal cost of the N x K transport problem (a, b, cost) with a duality-gap certificate.

    ``info["prices"]`` holds the certifying atom prices; with ``row_costs`` ``info["row_costs"]`` holds each row's
    mean cost under the plan, ``Σ_k γ_ik c_ik / a_i`` (a fixed row: its best atom's cost).  The ambiguous rows form a smaller problem of the same
    kind; above ``_SUB_SMALL`` rows it is solved by this function again (full-data prices at eps = 1e-4, a band
    ten times narrower), else by the network simplex.
    """
    n, k = cost.shape
    rng = np.random.default_rng(0)
    v = np.zeros(k) if v0 is None else v0
    for eps, m in _TOP_STAGES if depth == 0 else _SUB_STAGES:
        rows = rng.choice(n, size=m, replace=False) if m is not None and m < n else slice(None)
        v = _semi_dual_prices(cost[rows], a[rows] / a[rows].sum(), b, eps, v)
    best, margin = _best_and_margin(cost, v)
    delta = _DELTA0 / 10**depth
    while True:
        fixed = margin > delta
        resid = b - np.bincount(best[fixed], weights=a[fixed], minlength=k)
        if (resid < -1e-12).any() and np.isfinite(delta):
            delta = delta * _GROW if delta < 1 else np.inf
            continue
        amb = np.flatnonzero(~fixed)
        value = float(a[fixed] @ cost[fixed, best[fixed]])
        prices, simplex_rows = v, 0
        if amb.size:
            mass = a[amb].sum()
            sub_b = np.clip(resid, 0.0, None)
            sub_b /= sub_b.sum()
            sub_cost = np.ascontiguousarray(cost[amb])
            sub_a = a[amb] / mass
            if amb.size > _SUB_SMALL and depth < _MAX_DEPTH and amb.size < n:
                sub_cost_value, sub_info = _certified_transport(
                    sub_cost, sub_a, sub_b, tol=tol, v0=v, depth=depth + 1, row_costs=row_costs
                )
                prices, simplex_rows = sub_info["prices"], sub_info["simplex_rows"]
                sub_rows = sub_info.get("row_costs")
            elif row_costs:
                simplex_rows = amb.size
                sub_cost_value, plan, prices = _emd_plan(sub_cost, sub_a, sub_b)
                sub_rows = (plan * sub_cost).sum(axis=1) / sub_a
            else:
                simplex_rows = amb.size
                sub_cost_value, log = _emd_cost(sub_cost, sub_a, sub_b, with_log=True)
                prices = np.asarray(log["v"], dtype=np.float64)
            value += mass * sub_cost_value
        dual = float(a @ (cost - prices[None, :]).min(axis=1) + b @ prices)
        if value - dual <= tol or not np.isfinite(delta):
            info = {
                "ambiguous_rows": int(amb.size),
                "simplex_rows": int(simplex_rows),
                "duality_gap": value - dual,
                "prices": prices,
            }
            if row_costs:
                rc = np.empty(n)
                rc[fixed] = cost[fixed, best[fixed]]
                if amb.size:
                    rc[amb] = sub_rows
                info["row_costs"] = rc
            return value, info
        delta = delta * _GROW if delta < 1 else np.inf


def _cot(
    probs: np.ndarray,
    pi: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    batch_size: int | None = None,
    rng: np.random.Generator | None = None,
) -> tuple[float, dict[str, Any]]:
    """Exact (or batched) W1 between rows of ``probs`` (mass ``weights/sum``) and one-hot atoms with mass pi."""
    keep_k = pi > 0
    b = pi[keep_k] / pi[keep_k].sum()
    rows = np.arange(probs.shape[0]) if weights is None else np.flatnonzero(weights > 0)
    w = np.ones(rows.shape[0]) if weights is None else weights[rows].astype(np.float64)
    n = rows.shape[0]
    if batch_size is None and n > _SMALL:
        cost = 1.0 - probs[rows][:, keep_k].astype(np.float64)
        err, info = _certified_transport(cost, w / w.sum(), b)
        info.pop("prices")
        return err, {"n_batches": 1, "exact": True, "solver": "certified", **info}
    if batch_size is None or n <= batch_size:
        batches = [np.arange(n)]
    else:
        rng = np.random.default_rng(0) if rng is None else rng
        batches = np.array_split(rng.permutation(n), int(np.ceil(n / batch_size)))
    total_w = w.sum()
    err = 0.0
    warnings = []
    for bidx in batches:
        sel = rows[bidx]
        cost = 1.0 - probs[sel][:, keep_k].astype(np.float64)
        a = w[bidx] / w[bidx].sum()
        val, warn = _emd_cost(cost, a, b)
        err += float(val * w[bidx].sum() / total_w)
        if warn:
            warnings.append(warn)
    info: dict[str, Any] = {"n_batches": len(batches), "exact": len(batches) == 1}
    if warnings:
        info["solver_warning"] = warnings[0]
    return err, info


def transport_row_costs(probs: Any, reference_distribution: Any) -> np.ndarray:
    """Each row's cost under an optimal COT plan: ``r_i = Σ_k γ_ik (1 − p_ik) / a_i`` (mass a_i = 1/N per row).

    The plan moves the N rows of ``probs`` (mass 1/N each) onto the one-hot atoms e_k (mass pi_k) at cost
    ``1 − p_ik`` (module docstring); ``mean(r) = cot_error(probs, pi)``.  A row split between atoms (at most K − 1
    of them in a vertex solution) gets the mass-weighted mean of its costs.  Exact at any size: the network simplex
    up to ``_SMALL`` rows, the certified route above (its fixed rows go to their best atom whole).

    Returns
    -------
    numpy.ndarray, shape (N,)
        Per-row costs in [0, 1] (float64).
    """
    p = check_probs(probs, "probs")
    pi = _check_distribution(reference_distribution, p.shape[1])
    keep_k = pi > 0
    b = pi[keep_k] / pi[keep_k].sum()
    cost = 1.0 - p[:, keep_k].astype(np.float64)
    a = np.full(p.shape[0], 1.0 / p.shape[0])
    if p.shape[0] > _SMALL:
        return _certified_transport(cost, a, b, row_costs=True)[1]["row_costs"]
    _, plan, _ = _emd_plan(cost, a, b)
    return (plan * cost).sum(axis=1) / a


def cot_error(probs: Any, reference_distribution: Any, *, batch_size: int | None = None) -> float:
    """COT error estimate: W1 between the rows of ``probs`` (N, K) and the one-hot label distribution.

    Parameters
    ----------
    probs : array (N, K)
        Target probabilities (use :func:`helpers.estimators.softmax` on logits).
    reference_distribution : array (K,)
        Reference class proportions pi (non-negative, sums to 1), e.g. :func:`label_distribution`.
    batch_size : int or None, default None
        None: the exact optimum at any size; an int: random batches of that size (an upper bound; see module
        docstring).

    Returns
    -------
    float
        Estimated error in [0, 1]; the accuracy estimate is ``1 - cot_error``.
    """
    p = check_probs(probs, "probs")
    pi = _check_distribution(reference_distribution, p.shape[1])
    return _cot(p, pi, batch_size=batch_size)[0]


def _check_distribution(pi: Any, k: int) -> np.ndarray:
    v = check_vector(pi, "reference_distribution").astype(np.float64)
    if v.shape[0] != k:
        raise InputValidationError(
            f"class-count mismatch: reference_distribution has {v.shape[0]} classes, probs has {k}"
        )
    if (v < 0).any() or abs(v.sum() - 1.0) > 1e-6:
        raise InputValidationError(
            f"reference_distribution: expected non-negative proportions summing to 1, got sum {v.sum():.6g}"
        )
    return v


def warn_if_fewer_rows_than_classes(method: str, p: np.ndarray) -> None:
    """A :class:`~helpers.estimators.base.SmallSampleWarning` when the target has fewer rows than classes: COT's
    and COTT's transport of n rows onto a K-class label distribution cannot match it when n < K (one row reads
    as accuracy 0 whatever the model), so such an estimate means nothing."""
    if p.shape[0] < p.shape[1]:
        warnings.warn(
            f"{method}: {p.shape[0]} target row(s) for {p.shape[1]} classes; the transport onto the reference "
            "label distribution needs at least as many rows as classes, so this estimate is not meaningful",
            SmallSampleWarning,
            stacklevel=3,
        )


class COT(LabelFreeEstimator):
    """Confidence Optimal Transport (Lu et al. 2023): accuracy = 1 - W1(target predictions, reference labels).

    ``fit(*, labels, logits=None, probs=None)`` stores the reference class proportions ``reference_distribution_``
    (the model outputs on the reference are optional and used only to know K); ``estimate`` solves the N x K
    transport problem described in the module docstring.

    Parameters
    ----------
    batch_size : int or None, default None
        None: the exact optimum at any size (certified; see module docstring); an int: random batches of that size
        above it (upper bound on the error).
    n_boot, level, random_state
        Bootstrap settings (defaults 200, 0.95, seed 0).  Each replicate is one more transport solve with
        multinomial weights on the target rows -- the costliest bootstrap here; ``random_state`` also seeds
        the batch split.

    Examples
    --------
    >>> from helpers.estimators.examples import example_sets
    >>> z, y, target, shifted = example_sets()  # 8 rows of 3-class logits (6 right), a less confident target
    >>> round(COT().fit(labels=y).estimate(logits=target).accuracy, 4)
    0.4772
    """

    name = "cot"

    def __init__(
        self,
        *,
        batch_size: int | None = None,
        n_boot: int = 200,
        level: float = 0.95,
        random_state: int | None = 0,
    ):
        self.batch_size = batch_size
        self.n_boot = n_boot
        self.level = level
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if self.batch_size is not None and (
            not isinstance(self.batch_size, (int, np.integer)) or self.batch_size < 1
        ):
            raise InputValidationError(
                f"batch_size: expected a positive integer or None, got {self.batch_size!r}"
            )

    def fit(self, *, labels: Any, logits: Any = None, probs: Any = None) -> COT:
        """Store the reference label distribution; K comes from logits/probs when given, else from the labels."""
        self._check_params()
        k = None
        if logits is not None or probs is not None:
            p = resolve_probs(logits=logits, probs=probs, where="COT.fit")
            k = p.shape[1]
            y = check_labels(labels, "labels", n_classes=k, n=p.shape[0])
        else:
            y = check_labels(labels, "labels")
        self.n_classes_ = k
        self.reference_distribution_ = np.bincount(y, minlength=k or 0) / y.shape[0]
        return self

    def _prepare_target(self, *, logits=None, probs=None) -> Prepared:
        self._check_target_classes(n_classes_of(logits, probs))
        p = resolve_probs(logits=logits, probs=probs, where="COT.estimate")
        pi = self.reference_distribution_
        if pi.shape[0] > p.shape[1]:
            raise InputValidationError(
                f"class-count mismatch: the reference labels passed to fit go up to class {pi.shape[0] - 1}, "
                f"the target has {p.shape[1]} classes"
            )
        pi = np.pad(pi, (0, p.shape[1] - pi.shape[0]))
        warn_if_fewer_rows_than_classes("COT", p)
        return Prepared(
            n=p.shape[0], arrays={"P": p, "pi": pi}, details={"cost": "1 - p_k (= 0.5 L1 = Linf)"}
        )

    def _error(self, prep: Prepared, counts: np.ndarray | None = None) -> tuple[float, dict[str, Any]]:
        rng = np.random.default_rng(self.random_state)
        return _cot(prep.arrays["P"], prep.arrays["pi"], weights=counts, batch_size=self.batch_size, rng=rng)

    def _point(self, prep: Prepared) -> float:
        err, info = self._error(prep)
        prep.details.update(info, error=err)
        return 1.0 - err

    def _weighted(self, prep: Prepared, counts: np.ndarray) -> float:
        return 1.0 - self._error(prep, counts)[0]
