"""The drifting stream of notebook 07 and the per-chunk monitoring of every estimator on it.

The stream, in serving order, from one CIFAR-10 ResNet's outputs on notebook 05's sets of the same test images:

1. ``clean``: the second half of the clean set (the first half is the labelled reference every estimator is fitted
   on and the band is drawn from -- the two halves never overlap);
2. ``<type>-<severity>``: one held-out CIFAR-10-C corruption at increasing severity, one set per severity;
3. ``labels-<ratio>``: the clean second half resampled to long-tailed class priors (smallest / largest class size
   = ratio), the label-shift period.

:func:`monitor` cuts the stream into chunks of ``chunk_size`` rows and runs :func:`helpers.monitoring.estimate_chunks`
for every method, with the band from the reference's chunks (their realised accuracy, NannyML's thresholds).
Score methods are mapped to accuracy by the line fitted on notebook 05's meta-set (its ``fit`` sets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helpers.benchmark import ShiftTask
from helpers.errors import InputValidationError
from helpers.estimators import get_estimator
from helpers.experiments.p7_monitoring.settings import MonitoringSettings
from helpers.monitoring import estimate_chunks

__all__ = ["MonitoringSettings", "Stream", "build_stream", "fit_methods", "monitor", "alert_table"]

#: accuracy-type methods fitted on the labelled reference; the others are scores read off 05's meta-set line
_LABELLED = ("atc_mc", "atc_ne", "doc", "cbpe", "cot", "cott", "confusion_matrix_shift")


@dataclass
class Stream:
    """The stream's logits, labels and period of every row (serving order), and the reference it is judged by."""

    logits: np.ndarray
    labels: np.ndarray
    period: np.ndarray
    reference_logits: np.ndarray
    reference_labels: np.ndarray
    task: ShiftTask

    @property
    def periods(self) -> list[str]:
        """The periods in serving order."""
        return list(dict.fromkeys(self.period.tolist()))


def build_stream(tasks: Sequence[ShiftTask], s: MonitoringSettings) -> Stream:
    """The stream of the module docstring from notebook 06's CIFAR tasks (:func:`~helpers.experiments.
    p6_benchmark.producers.cifar_tasks`) for ``s.backbone``."""
    from helpers.data.metaset import imbalance_subsets

    task = next((t for t in tasks if t.info.get("model") == s.backbone), None)
    if task is None:
        raise InputValidationError(f"backbone: no CIFAR task of {s.backbone!r}; got {[t.info.get('model') for t in tasks]}")
    ref = task.reference
    n_ref = int(round(len(ref.labels) * s.REFERENCE_SHARE))
    parts = [("clean", ref.logits[n_ref:], ref.labels[n_ref:])]
    missing = [f"{s.ramp_type}-{v}" for v in s.ramp_severities if f"{s.ramp_type}-{v}" not in task.targets]
    if missing:
        ramps = sorted({k.rsplit("-", 1)[0] for k in task.targets if k.rsplit("-", 1)[-1].isdigit()})
        raise InputValidationError(f"ramp_type, ramp_severities: no sets {missing}; corruptions available: {ramps}")
    parts += [(f"{s.ramp_type}-{v}", task.targets[f"{s.ramp_type}-{v}"].logits, task.targets[f"{s.ramp_type}-{v}"].labels)
              for v in s.ramp_severities]  # fmt: skip
    clean_y = ref.labels[n_ref:]
    for ratio, idx in imbalance_subsets(clean_y, list(s.label_ratios), seed=s.seed).items():
        parts.append((f"labels-{ratio:g}", ref.logits[n_ref:][idx], clean_y[idx]))
    return Stream(
        logits=np.vstack([p[1] for p in parts]),
        labels=np.concatenate([p[2] for p in parts]),
        period=np.concatenate([[p[0]] * len(p[2]) for p in parts]),
        reference_logits=ref.logits[:n_ref],
        reference_labels=ref.labels[:n_ref],
        task=task,
    )


def fit_methods(stream: Stream, methods: Sequence[str], chunk_size: int, *, draws: int = 3, seed: int = 0) -> dict:
    """Each method fitted on the reference half (labelled ones with its labels); a score's line on 05's meta-set
    (the task's ``meta``) cut to the chunk's size -- ``draws`` random subsets of ``chunk_size`` rows per meta set --
    since set-level scores such as the nuclear norm depend on the set size and the line is read on chunks."""
    rng = np.random.default_rng(seed)
    shifted = {}
    for name, m in stream.task.meta.items():
        for d in range(draws):
            idx = rng.choice(len(m.labels), size=min(chunk_size, len(m.labels)), replace=False)
            shifted[f"{name}#{d}"] = (m.logits[idx], m.labels[idx])
    out = {}
    for name in methods:
        est = get_estimator(name)
        if name in _LABELLED:
            est.fit(logits=stream.reference_logits, labels=stream.reference_labels)
        elif getattr(est, "output", "accuracy") == "score":
            est.fit(logits=stream.reference_logits, shifted=shifted)
        else:
            est.fit(logits=stream.reference_logits)
        out[name] = est
    return out


def monitor(stream: Stream, fitted: dict, chunk_size: int) -> pd.DataFrame:
    """Every method's per-chunk table (:func:`~helpers.monitoring.estimate_chunks`), long: one row per method and
    chunk, with the period the chunk's first row was served in."""
    frames = []
    for name, est in fitted.items():
        df = estimate_chunks(est, stream.logits, labels=stream.labels, chunk_size=chunk_size,
                             reference_logits=stream.reference_logits,
                             reference_labels=stream.reference_labels).to_df()  # fmt: skip
        df.insert(0, "method", name)
        df["period"] = stream.period[df["start"].to_numpy(int)]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def alert_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: MAE against the realised accuracy (pp), the first chunk that alerts and its period, alerts in
    the clean period (false alarms), and the first chunk whose *realised* accuracy leaves the band (when an oracle
    with labels would have alerted)."""
    out = []
    for method, g in frame.groupby("method", sort=False):
        g = g.reset_index(drop=True)
        real_out = (g["realised_accuracy"] < g["band_lower"]) | (g["realised_accuracy"] > g["band_upper"])
        first = g.index[g["alert"]].min() if g["alert"].any() else np.nan
        oracle = g.index[real_out].min() if real_out.any() else np.nan
        out.append({
            "method": method,
            "mae_pp": 100 * float((g["estimate"] - g["realised_accuracy"]).abs().mean()),
            "first_alert_chunk": first,
            "first_alert_period": g.loc[first, "period"] if np.isfinite(first) else "none",
            "oracle_first_chunk": oracle,
            "chunks_late": first - oracle if np.isfinite(first) and np.isfinite(oracle) else np.nan,
            "false_alerts_clean": int(g.loc[g["period"] == "clean", "alert"].sum()),
            "alerts": int(g["alert"].sum()),
            "chunks": len(g),
        })  # fmt: skip
    return pd.DataFrame(out).sort_values("mae_pp").reset_index(drop=True)
