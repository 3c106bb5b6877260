"""Notebook 07 (monitoring a deployed model): a CIFAR-10 ResNet served over a stream that drifts, every estimator's
per-chunk estimate against the realised accuracy (:mod:`.stream`).  The model outputs are notebook 05's (read from
its cache through notebook 06's task producers), so 07 computes no new predictions."""

from helpers.experiments.p7_monitoring.stream import (
    MonitoringSettings,
    Stream,
    alert_table,
    build_stream,
    fit_methods,
    monitor,
)

__all__ = ["MonitoringSettings", "Stream", "build_stream", "fit_methods", "monitor", "alert_table"]
