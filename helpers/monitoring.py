"""Per-chunk accuracy estimates over a stream of predictions, with the band and alerts NannyML draws.

:func:`estimate_chunks` splits the analysed predictions into chunks -- consecutive rows (``chunk_size``) or time
periods (``timestamps`` and a pandas ``period`` such as ``"D"``, ``"W"``, ``"M"``) -- and estimates each chunk's
accuracy with one fitted estimator of :mod:`helpers.estimators`.  The band comes from the *reference's own chunks*,
as NannyML sets its thresholds: the reference predictions are cut as NannyML cuts them -- consecutive chunks of the
analysis chunks' size with a short last chunk kept (its ``SizeBasedChunker``), or, with ``reference_timestamps``, the
same periods -- and ``band_lower, band_upper = mean ± 3 standard deviations`` (population sd, clipped to [0, 1]) of
their realised accuracies when the reference labels are given -- NannyML's thresholds -- else of the estimator's
estimates on them; a chunk whose estimate leaves the band raises an alert.  (``band_*``: the alert band over
chunks, not an :class:`~helpers.estimators.Estimate`'s interval ``lower`` / ``upper``.)  With ``labels`` the realised accuracy of each chunk sits beside
its estimate.  Chunks given as Dask arrays (or a Zarr store path) are estimated out of core
(:mod:`helpers.estimators.streaming`).

A period without any prediction is kept as a row with ``n = 0`` and no estimate (``NaN``, no alert), so a gap in
the stream shows as a gap, not as a silent merge of its neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.validation import check_labels

__all__ = ["ChunkResult", "estimate_chunks", "BAND_SIGMAS"]

BAND_SIGMAS = 3.0  #: NannyML's default threshold: the reference chunks' mean ± 3 standard deviations
_COLUMNS = ["chunk", "start", "end", "n", "estimate", "band_lower", "band_upper", "alert", "realised_accuracy"]


@dataclass
class ChunkResult:
    """Per-chunk estimates (:func:`estimate_chunks`); ``to_df()`` for the table, ``plot()`` for the figure."""

    frame: pd.DataFrame
    method: str
    reference_estimates: np.ndarray

    def to_df(self) -> pd.DataFrame:
        """One row per chunk: ``chunk, start, end, n, estimate, band_lower, band_upper, alert, realised_accuracy``."""
        return self.frame.copy()

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Estimate per chunk, the reference band, alerts (red) and, with labels, the realised accuracy."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(9, 3.5))
        f = self.frame
        x = np.arange(len(f))
        ax.fill_between(x, f["band_lower"], f["band_upper"], color="tab:blue", alpha=0.12, step="mid",
                        label="band: reference chunks ± 3 sd")  # fmt: skip
        ax.plot(x, f["estimate"], "o-", color="tab:blue", ms=3, label=f"estimate ({self.method})")
        if f["realised_accuracy"].notna().any():
            ax.plot(x, f["realised_accuracy"], "s--", color="0.3", ms=3, label="realised accuracy")
        hot = f["alert"].astype(bool)
        ax.plot(x[hot], f.loc[hot, "estimate"], "o", color="tab:red", ms=6, label="alert")
        step = max(1, len(f) // 12)
        ax.set_xticks(x[::step], [str(c) for c in f["chunk"].iloc[::step]], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("accuracy")
        ax.set_title(title or f"{self.method}: per-chunk accuracy estimate")
        ax.legend(fontsize=8, loc="lower left")
        return ax


def _check_estimator(estimator: Any) -> None:
    if isinstance(estimator, str) or not hasattr(estimator, "estimate"):
        raise InputValidationError(
            f"estimator: expected a fitted estimator of helpers.estimators (get_estimator(name).fit(...)), got "
            f"{estimator!r}"
        )


def _size_chunks(n: int, chunk_size: int) -> list[tuple[str, Any, Any, slice]]:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise InputValidationError(f"chunk_size: expected a positive integer, got {chunk_size!r}")
    return [(f"[{lo}:{min(lo + chunk_size, n)}]", lo, min(lo + chunk_size, n) - 1, slice(lo, min(lo + chunk_size, n)))
            for lo in range(0, n, int(chunk_size))]  # fmt: skip


def _period_chunks(timestamps: Any, period: str, n: int, *, name: str = "timestamps"
                   ) -> list[tuple[str, Any, Any, np.ndarray]]:  # fmt: skip
    ts = pd.to_datetime(pd.Series(np.asarray(timestamps)), errors="coerce")
    if len(ts) != n:
        raise InputValidationError(f"{name}: expected one per prediction ({n}), got {len(ts)}")
    if ts.isna().any():
        raise InputValidationError(f"{name}: {int(ts.isna().sum())} value(s) are not dates or times")
    try:
        periods = ts.dt.to_period(period)
    except (ValueError, TypeError) as e:
        raise InputValidationError(f"period: expected a pandas period alias such as 'D', 'W' or 'M', got {period!r}") from e
    out = []
    for p in pd.period_range(periods.min(), periods.max(), freq=periods.dt.freq):
        rows = np.flatnonzero((periods == p).to_numpy())
        out.append((str(p), p.start_time, p.end_time, rows))
    return out


def _estimate(estimator: Any, key: str, values: Any, rows: Any) -> float:
    part = values[rows]
    if part.shape[0] == 0:
        return float("nan")
    return float(estimator.estimate(**{key: part}).accuracy)


def estimate_chunks(
    estimator: Any,
    logits: Any = None,
    *,
    probs: Any = None,
    labels: Any = None,
    chunk_size: int | None = None,
    timestamps: Any = None,
    period: str | None = None,
    reference_logits: Any = None,
    reference_probs: Any = None,
    reference_labels: Any = None,
    reference_timestamps: Any = None,
) -> ChunkResult:
    """Estimate the accuracy of every chunk of a stream of predictions (module docstring).

    Parameters
    ----------
    estimator : a fitted estimator of :mod:`helpers.estimators`
        Fitted on the labelled reference (and, for a score, on labelled shifted sets); it must return an accuracy.
    logits, probs : array (n, K) or Dask array
        The analysed predictions, in stream order (exactly one of the two).
    labels : array (n,), optional
        True labels: adds each chunk's realised accuracy.
    chunk_size : int, optional
        Consecutive chunks of this many rows (the last one may be smaller).
    timestamps, period : array (n,) of datetimes and a pandas period alias, optional
        Chunks by period instead (``"D"``, ``"W"``, ``"M"``, ...), in time order; empty periods are kept (n = 0).
    reference_logits, reference_probs : array, optional
        The reference set's predictions, cut into chunks of ``chunk_size`` rows, the last one shorter where the
        size does not divide it (NannyML's chunker), for the band; with periods, by ``reference_timestamps`` into
        the same periods (empty ones left out), or without them into chunks of the median non-empty analysis chunk
        size.  Without reference predictions the band is NaN and nothing alerts.
    reference_labels : array, optional
        The reference labels: the band is then the spread of the reference chunks' realised accuracy (NannyML's
        thresholds), not of their estimates.
    reference_timestamps : array (n_reference,) of datetimes, optional
        With ``period``: the reference rows' times, so that its chunks are periods as NannyML makes them.

    Returns
    -------
    ChunkResult
    """
    _check_estimator(estimator)
    given = {k: v for k, v in (("logits", logits), ("probs", probs)) if v is not None}
    if len(given) != 1:
        raise InputValidationError("logits, probs: give exactly one of the two (the analysed predictions)")
    key, values = next(iter(given.items()))
    n = int(values.shape[0])
    if n == 0:
        raise InputValidationError(f"{key}: no predictions to analyse")
    if (chunk_size is None) == (period is None):
        raise InputValidationError("chunk_size, period: give exactly one (chunks by size, or by time with timestamps)")
    if period is not None and timestamps is None:
        raise InputValidationError("timestamps: needed to chunk by period")
    chunks = _size_chunks(n, chunk_size) if chunk_size is not None else _period_chunks(timestamps, period, n)
    n_classes = int(values.shape[1]) if len(values.shape) == 2 else None
    if n_classes is None or n_classes < 2:
        raise InputValidationError(f"{key}: expected an (n, K) matrix with K >= 2 classes, got shape {values.shape}")
    y = None
    if labels is not None:  # integers in [0, K): out-of-range or fractional labels would read as 0 % accuracy
        y = check_labels(labels, "labels", n=n, n_classes=n_classes)
    pred = None
    if y is not None:
        pred = np.asarray(values.argmax(axis=1))  # Dask arrays compute here: one pass over the predictions
    rows = []
    for name, start, end, idx in chunks:
        size = int(idx.stop - idx.start) if isinstance(idx, slice) else int(len(idx))
        realised = float((pred[idx] == y[idx]).mean()) if y is not None and size else float("nan")
        rows.append({"chunk": name, "start": start, "end": end, "n": size,
                     "estimate": _estimate(estimator, key, values, idx), "realised_accuracy": realised})  # fmt: skip
    frame = pd.DataFrame(rows)
    if reference_timestamps is not None and period is None:
        raise InputValidationError("reference_timestamps: only used with period (chunks by time)")
    ref_chunks = {"size": chunk_size, "timestamps": reference_timestamps, "period": period}
    ref_est = _reference_values(estimator, reference_logits, reference_probs, reference_labels, frame, ref_chunks,
                                n_classes)  # fmt: skip
    if ref_est.size >= 2:
        mu, sd = float(ref_est.mean()), float(ref_est.std())  # population sd, as NannyML's threshold
        frame["band_lower"] = max(0.0, mu - BAND_SIGMAS * sd)
        frame["band_upper"] = min(1.0, mu + BAND_SIGMAS * sd)
    else:
        frame["band_lower"] = frame["band_upper"] = np.nan
    est = frame["estimate"]
    frame["alert"] = (est.notna() & ((est < frame["band_lower"]) | (est > frame["band_upper"]))).astype(bool)
    return ChunkResult(frame[_COLUMNS], getattr(estimator, "name", type(estimator).__name__), ref_est)


def _reference_values(estimator: Any, ref_logits: Any, ref_probs: Any, ref_labels: Any, frame: pd.DataFrame,
                      chunking: dict[str, Any], n_classes: int) -> np.ndarray:  # fmt: skip
    """Per reference chunk (NannyML's chunks, :func:`_reference_chunks`): its realised accuracy (with labels) or
    the estimator's estimate; the reference must have the stream's ``n_classes`` classes."""
    given = {k: v for k, v in (("logits", ref_logits), ("probs", ref_probs)) if v is not None}
    if not given:
        for name, value in (("reference_labels", ref_labels), ("reference_timestamps", chunking["timestamps"])):
            if value is not None:
                raise InputValidationError(f"{name}: give the reference predictions with them")
        return np.array([])
    if len(given) > 1:
        raise InputValidationError("reference_logits, reference_probs: give at most one of the two")
    key, ref = next(iter(given.items()))
    if len(ref.shape) != 2 or int(ref.shape[1]) != n_classes:
        raise InputValidationError(
            f"reference_{key}: expected {n_classes} classes like the stream, got shape {tuple(ref.shape)}; a "
            "reference of another model or label set gives a meaningless band"
        )
    chunks = _reference_chunks(int(ref.shape[0]), frame, chunking)
    if len(chunks) < 2:
        raise InputValidationError(
            f"reference_{key}: {ref.shape[0]} rows make fewer than 2 reference chunks; the band needs at least 2"
        )
    if ref_labels is not None:
        y = check_labels(ref_labels, "reference_labels", n=int(ref.shape[0]), n_classes=n_classes)
        hit = np.asarray(ref.argmax(axis=1)) == y
        return np.array([hit[rows].mean() for rows in chunks])
    return np.array([_estimate(estimator, key, ref, rows) for rows in chunks])


def _reference_chunks(n_ref: int, frame: pd.DataFrame, chunking: dict[str, Any]) -> list[Any]:
    """The reference's chunks as NannyML 0.13 makes them: by ``period`` over ``timestamps`` (non-empty periods
    only), else consecutive chunks of the chunk size (with periods and no reference times: the median non-empty
    analysis chunk size) with the short last chunk kept (``SizeBasedChunker(incomplete="keep")``)."""
    if chunking["timestamps"] is not None:
        return [rows for *_, rows in _period_chunks(chunking["timestamps"], chunking["period"], n_ref,
                                                    name="reference_timestamps") if len(rows)]  # fmt: skip
    size = chunking["size"] or int(np.median(frame.loc[frame["n"] > 0, "n"]))
    return [slice(lo, min(lo + size, n_ref)) for lo in range(0, n_ref, size)]
