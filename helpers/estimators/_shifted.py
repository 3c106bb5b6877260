"""Labelled shifted sets (a meta-set) given to ``fit(shifted=...)``, and the score -> accuracy line fitted on them.

A set-level score (MDE, Average Energy, average negative entropy, nuclear norm, Fréchet distance) is not an
accuracy.  Paper 5 (Peng et al. 2024, Algorithm 1) turns one into an accuracy estimator: compute the score on many
labelled synthetic shifted sets, fit a line ``accuracy ≈ slope · score + intercept`` on them, and read the target
set's accuracy off the line.  ``fit(..., shifted={name: (logits, labels), ...})`` does exactly that for every
score-type estimator; the line is :class:`~helpers.estimators.metaset.MetaSetRegression` (ordinary least squares).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from helpers.errors import InputValidationError
from helpers.validation import check_labels

__all__ = ["shifted_items", "fit_score_line"]

_INPUT_KEYS = ("logits", "probs", "features")


def _one_set(name: str, value: Any, keys: tuple[str, ...] | None = None) -> tuple[dict[str, Any], float]:
    """``(inputs for the score, true accuracy)`` of one shifted set given as ``(logits, labels)`` or a mapping;
    ``keys``: the inputs the score takes together (e.g. features *and* logits), default features or else outputs."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {*_INPUT_KEYS, "labels", "accuracy"})
        if unknown:
            raise InputValidationError(
                f"shifted[{name!r}]: unknown key(s) {unknown}; expected some of logits, probs, features, labels, "
                f"accuracy"
            )
        # the score on features where given (a distance between representations), else on the model outputs
        scored = keys or (("features",) if value.get("features") is not None else ("logits", "probs"))
        inputs = {k: value[k] for k in scored if value.get(k) is not None}
        outputs = value.get("logits") if value.get("logits") is not None else value.get("probs")
        labels, accuracy = value.get("labels"), value.get("accuracy")
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        inputs, labels, accuracy = {"logits": value[0]}, value[1], None
        outputs = value[0]
    else:
        raise InputValidationError(
            f"shifted[{name!r}]: expected (logits, labels) or a mapping with logits/probs/features and labels "
            f"(or accuracy), got {type(value).__name__}"
        )
    if not inputs:
        raise InputValidationError(f"shifted[{name!r}]: no logits, probs or features to score")
    if accuracy is None:
        if outputs is None or labels is None:
            raise InputValidationError(
                f"shifted[{name!r}]: the set's accuracy needs labels with logits or probs (or give accuracy=)"
            )
        outputs = np.asarray(outputs)
        if outputs.ndim != 2:
            raise InputValidationError(f"shifted[{name!r}]: expected (n, K) logits or probs, got shape {outputs.shape}")
        pred = outputs.argmax(axis=1)
        y = check_labels(labels, f"shifted[{name!r}] labels", n=pred.shape[0], n_classes=outputs.shape[1])
        accuracy = float(np.mean(pred == y))
    accuracy = float(accuracy)
    if not 0.0 <= accuracy <= 1.0:
        raise InputValidationError(
            f"shifted[{name!r}]: accuracy must be a fraction in [0, 1], got {accuracy!r}"
        )
    return inputs, accuracy


def shifted_items(shifted: Any, keys: tuple[str, ...] | None = None) -> list[tuple[str, dict[str, Any], float]]:
    """``[(name, inputs, accuracy), ...]`` of ``shifted``: a mapping ``{name: (logits, labels) | {...}}``
    (``keys``: see :func:`_one_set`)."""
    if not isinstance(shifted, Mapping):
        raise InputValidationError(
            f"shifted: expected a mapping {{set name: (logits, labels)}}, got {type(shifted).__name__}"
        )
    return [(str(name), *_one_set(str(name), value, keys)) for name, value in shifted.items()]


def fit_score_line(estimator: Any, shifted: Any):
    """The :class:`MetaSetRegression` of accuracy on ``estimator``'s score over the sets of ``shifted``.

    Each set is scored with ``estimator.measure(...)`` (the raw score, the estimator already fitted on its
    reference); at least 3 sets with scores that are not all equal.
    """
    from helpers.estimators.metaset import MetaSetRegression

    items = shifted_items(shifted, getattr(estimator, "shifted_inputs", None))
    if len(items) < 3:
        raise InputValidationError(
            f"shifted: expected at least 3 labelled shifted sets to fit a line, got {len(items)}"
        )
    scores = [float(estimator.measure(**inputs).score) for _, inputs, _ in items]
    return MetaSetRegression().fit(scores=scores, accuracies=[acc for _, _, acc in items])
