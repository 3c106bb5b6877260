"""``check_estimator``: the contract every estimator of this package keeps, runnable on your own.

Modelled on scikit-learn's ``check_estimator``: one call runs the whole contract on a small synthetic task (a
labelled reference, an unlabelled shifted target, six labelled shifted sets with penultimate features and a second
model's logits) and returns one row per check; a failed check raises unless ``raise_on_failure=False``.

=====================  ==============================================================================================
check                  passes when
=====================  ==============================================================================================
fit                    ``fit`` on the arguments the estimator declares returns the estimator itself
estimate               ``estimate`` returns an :class:`~helpers.estimators.Estimate` with a finite accuracy in [0, 1]
                       and ``n`` = the target's rows
deterministic          the same call twice, and a clone fitted on the same data, give the same estimate
interval               ``interval=True`` gives ``lower <= accuracy <= upper`` (or refuses with a clear error)
pickle                 a pickled (cloudpickle, as Dask sends it) and restored fitted estimator gives the same estimate
bad target: ...        NaN, inf, a 1-d array, a wrong class count and probabilities passed as ``logits=`` are refused
                       with :class:`~helpers.errors.InputValidationError` (probabilities may warn instead) -- never a
                       silent number, never an unexplained error
bad features: ...      NaN and a 1-d array as ``features=`` are refused (estimators that read features)
bad labels             fractional labels in ``fit`` are refused (estimators whose ``fit`` takes labels)
out of core            the target as a Dask array gives the in-memory estimate (to 1e-6), or is refused at once
=====================  ==============================================================================================

>>> from helpers.estimators import get_estimator
>>> table = check_estimator(get_estimator("atc_mc"))
>>> bool(table["passed"].all()), len(table)
(True, 12)
"""

from __future__ import annotations

import inspect
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError

__all__ = ["check_estimator", "synthetic_task"]

_TOL = 1e-6


def synthetic_task(n_classes: int = 4, seed: int = 0) -> dict[str, Any]:
    """The small task :func:`check_estimator` runs on: ``reference`` (logits, labels, features, other_logits, and
    ``others``: three more models of a collection, for the agreement-on-the-line methods),
    ``target`` (the same, less confident: a shift) and six labelled ``shifted`` sets of falling accuracy."""
    rng = np.random.default_rng(seed)
    proj = rng.normal(size=(n_classes, 6))

    def part(n: int, margin: float) -> dict[str, np.ndarray]:
        y = rng.integers(0, n_classes, n)
        z = rng.normal(size=(n, n_classes))
        z[np.arange(n), y] += margin
        return {"logits": z, "labels": y, "features": z @ proj + 0.1 * rng.normal(size=(n, 6)),
                "other_logits": z + 0.5 * rng.normal(size=z.shape),
                "others": {f"m{i}": z * (1 - 0.2 * i) + 0.5 * rng.normal(size=z.shape) for i in range(1, 4)}}  # fmt: skip

    shifted = {f"shift{i}": part(150, 2.5 - 0.35 * i) for i in range(6)}
    return {"reference": part(300, 2.5), "target": part(200, 1.2), "shifted": shifted}


def _declared(method: Any) -> set[str]:
    return set(inspect.signature(inspect.unwrap(method)).parameters)


def _fit_kwargs(est: Any, task: dict[str, Any]) -> dict[str, Any]:
    fit_args, est_args = _declared(est.fit), _declared(est.estimate)
    ref = task["reference"]
    wants_features = "features" in fit_args or "features" in est_args
    shifted = {k: ({"logits": v["logits"], "labels": v["labels"], "features": v["features"]} if wants_features
                   else (v["logits"], v["labels"])) for k, v in task["shifted"].items()}  # fmt: skip
    given = {"logits": ref["logits"], "labels": ref["labels"], "features": ref["features"], "shifted": shifted,
             "other_logits": ref["other_logits"], "others": ref["others"]}  # fmt: skip
    return {k: v for k, v in given.items() if k in fit_args}


def _target_kwargs(est: Any, task: dict[str, Any], **replace: Any) -> dict[str, Any]:
    args = _declared(est.estimate)
    tgt = task["target"]
    given = {"logits": tgt["logits"], "features": tgt["features"], "other_logits": tgt["other_logits"],
             "others": tgt["others"]}
    out = {k: v for k, v in given.items() if k in args}
    out.update(replace)
    return out


def _same(a: Any, b: Any) -> bool:
    return bool(np.isclose(a.accuracy, b.accuracy, rtol=0, atol=1e-12))


def _refused(call: Callable[[], Any], *, may_warn: bool = False) -> tuple[bool, str]:
    """Passes when ``call`` raises InputValidationError (or, with ``may_warn``, warns); a number is a failure."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
        except InputValidationError as e:
            return True, f"refused: {str(e)[:90]}"
        except Exception as e:  # noqa: BLE001 - an unexplained error is what this check looks for
            return False, f"unexplained {type(e).__name__}: {str(e)[:90]}"
    said = [w for w in caught if issubclass(w.category, UserWarning)]
    if may_warn and said:
        return True, f"warned: {str(said[0].message)[:90]}"
    return False, f"silently returned {getattr(out, 'accuracy', out)!r}"


def check_estimator(estimator: Any, *, n_classes: int = 4, seed: int = 0, raise_on_failure: bool = True
                    ) -> pd.DataFrame:  # fmt: skip
    """Run the estimator contract (module docstring) on :func:`synthetic_task` and return one row per check
    (``check, passed, detail``).

    Parameters
    ----------
    estimator : an unfitted estimator (an instance of a :class:`~helpers.estimators.LabelFreeEstimator`
        subclass, or any object with scikit-learn's parameter API and the common ``fit`` / ``estimate`` keywords)
    n_classes, seed : int
        The synthetic task's class count and seed.
    raise_on_failure : bool
        Raise an ``AssertionError`` that lists the failed checks (default), or just return the table.
    """
    import cloudpickle
    from sklearn.base import clone

    if isinstance(estimator, (str, type)) or not hasattr(estimator, "estimate"):
        raise InputValidationError(f"estimator: expected an estimator instance, got {estimator!r}")
    task, rows = synthetic_task(n_classes, seed), []

    def record(check: str, fn: Callable[[], tuple[bool, str]]) -> None:
        try:
            passed, detail = fn()
        except Exception as e:  # noqa: BLE001 - a check that crashes fails, with the reason
            passed, detail = False, f"{type(e).__name__}: {str(e)[:120]}"
        rows.append({"check": check, "passed": bool(passed), "detail": detail})

    est = clone(estimator)
    record("fit", lambda: (est.fit(**_fit_kwargs(est, task)) is est, "fit returns the estimator"))
    kw = _target_kwargs(est, task)
    n_target = len(task["target"]["labels"])

    def estimate() -> tuple[bool, str]:
        out = est.estimate(**kw)
        ok = np.isfinite(out.accuracy) and 0.0 <= out.accuracy <= 1.0 and out.n == n_target
        return bool(ok), f"accuracy {out.accuracy:.4f}, n {out.n}"

    def deterministic() -> tuple[bool, str]:
        twin = clone(estimator).fit(**_fit_kwargs(est, task))
        a, b, c = est.estimate(**kw), est.estimate(**kw), twin.estimate(**kw)
        return _same(a, b) and _same(a, c), f"{a.accuracy:.6f} / {b.accuracy:.6f} / clone {c.accuracy:.6f}"

    def interval() -> tuple[bool, str]:
        try:
            out = est.estimate(**kw, interval=True)
        except InputValidationError as e:
            return True, f"refused: {str(e)[:90]}"
        ok = out.lower is not None and out.upper is not None and out.lower - _TOL <= out.accuracy <= out.upper + _TOL
        return bool(ok), f"[{out.lower}, {out.upper}] around {out.accuracy:.4f}"

    def pickled() -> tuple[bool, str]:
        back = pickle.loads(cloudpickle.dumps(est))  # as Dask ships it to a worker (a notebook's class too)
        return _same(est.estimate(**kw), back.estimate(**kw)), "pickle round trip (cloudpickle, as Dask sends it)"

    for check, fn in (("estimate", estimate), ("deterministic", deterministic), ("interval", interval),
                      ("pickle", pickled)):  # fmt: skip
        record(check, fn)
    _bad_inputs(est, task, kw, record)
    record("out of core", lambda: _out_of_core(est, kw))
    table = pd.DataFrame(rows, columns=["check", "passed", "detail"])
    failed = table[~table["passed"]]
    if raise_on_failure and len(failed):
        lines = "; ".join(f"{r.check}: {r.detail}" for r in failed.itertuples())
        raise AssertionError(f"{type(estimator).__name__} fails {len(failed)} of {len(table)} checks: {lines}")
    return table


def _bad_inputs(est: Any, task: dict[str, Any], kw: dict[str, Any], record: Callable) -> None:
    """The target broken five ways, and fractional reference labels."""
    from helpers.estimators import softmax

    z = task["target"]["logits"]
    without = {k: v for k, v in kw.items() if k != "logits"}
    if without != kw and _works(lambda: est.estimate(**without)):  # logits not used (features only): not checked
        record("bad target: logits", lambda: (True, "not used: the estimate reads no logits"))
        broken = {}
    else:
        broken = {"nan": z.copy(), "inf": z.copy(), "1-d": z[:, 0].copy(), "wrong class count": z[:, :-1].copy(),
                  "probabilities as logits": softmax(z)}  # fmt: skip
        broken["nan"][3, 1], broken["inf"][5, 0] = np.nan, np.inf
    for name, bad in broken.items():
        record(f"bad target: {name}", lambda bad=bad, name=name: _refused(
            lambda: est.estimate(**{**kw, "logits": bad}), may_warn=name == "probabilities as logits"))
    no_features = {k: v for k, v in kw.items() if k != "features"}
    if "features" in kw and _works(lambda: est.estimate(**no_features)):
        record("bad features", lambda: (True, "not used: the estimate reads no features"))
    elif "features" in kw:
        f = task["target"]["features"]
        for name, bad in (("nan", np.where(np.arange(f.size).reshape(f.shape) == 7, np.nan, f)), ("1-d", f[:, 0])):
            record(f"bad features: {name}", lambda bad=bad: _refused(lambda: est.estimate(**{**kw, "features": bad})))
    if "labels" in _declared(est.fit):
        from sklearn.base import clone

        fit_kw = _fit_kwargs(est, task)
        labels = fit_kw["labels"].astype(float) + 0.5
        record("bad labels", lambda: _refused(lambda: clone(est).fit(**{**fit_kw, "labels": labels})))


def _works(call: Callable[[], Any]) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception:  # noqa: BLE001 - only whether it runs
            return False
    return True


def _out_of_core(est: Any, kw: dict[str, Any]) -> tuple[bool, str]:
    import dask.array as da

    z = kw["logits"]
    try:
        out = est.estimate(**{**kw, "logits": da.from_array(z, chunks=(64, z.shape[1]))})
    except InputValidationError as e:
        return True, f"refused: {str(e)[:90]}"
    here = est.estimate(**kw)
    return bool(abs(out.accuracy - here.accuracy) <= _TOL), f"{out.accuracy:.6f} out of core, {here.accuracy:.6f} here"
