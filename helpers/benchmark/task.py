"""The unit of work of the head-to-head benchmark: one model, one labelled reference set, many shifted sets.

A :class:`ShiftTask` holds nothing but arrays, so every producer (the notebooks' cached predictions, the
bring-your-own-data loaders in :mod:`helpers.byod`, a user's saved logits) hands the benchmark the same thing,
and every label-free estimator is run on the same inputs.

Arrays
------
``reference``   labelled in-distribution held-out data of the model (ATC threshold, DoC, COT, Fréchet ...).
``targets``     the shifted sets whose accuracy is predicted; labels are used only to score the predictions.
``meta``        optional synthetic shifted sets of the source (the meta-set of paper 5, Sec. 3.3); needed by
                the methods that regress a score onto accuracy (MDE, Avg Energy, nuclear norm, ...).
``partner``     optional logits of a second model on the same examples (agreement score, paper 5 baseline).
``features``    optional penultimate features per set (Fréchet distance), keyed like the logits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from helpers.errors import InputValidationError
from helpers.validation import check_labels, check_logits

__all__ = ["LabelledLogits", "ShiftTask"]


@dataclass(frozen=True)
class LabelledLogits:
    """Logits ``(n, K)`` of one model on one set with its integer labels ``(n,)`` in ``[0, K)``."""

    logits: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        logits = check_logits(self.logits, "logits")
        labels = check_labels(self.labels, "labels", n_classes=logits.shape[1], n=logits.shape[0])
        object.__setattr__(self, "logits", logits)
        object.__setattr__(self, "labels", labels)

    @property
    def n(self) -> int:
        return int(self.logits.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.logits.shape[1])

    @property
    def accuracy(self) -> float:
        """Top-1 accuracy (fraction) -- the quantity every estimator predicts without labels."""
        return float((self.logits.argmax(axis=1) == self.labels).mean())

    def __repr__(self) -> str:  # the arrays' sizes, not their values
        return f"LabelledLogits(n={self.n}, classes={self.n_classes}, accuracy={self.accuracy:.3f})"


def _as_set(value, name: str) -> LabelledLogits:
    if isinstance(value, LabelledLogits):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        try:
            return LabelledLogits(*value)
        except InputValidationError as exc:
            raise InputValidationError(f"{name}: {exc}") from exc
    raise InputValidationError(f"{name}: expected LabelledLogits or a (logits, labels) tuple, got {type(value).__name__}")


@dataclass(frozen=True)
class ShiftTask:
    """One model under one family of shifts, as arrays only.

    Parameters
    ----------
    name : str
        Unique task name, e.g. ``"cifar10/resnet20"`` (used in tables and cache keys).
    family : str
        Shift family the methods are ranked within, e.g. ``"cifar-corruption"``, ``"digits-usps"``,
        ``"amazon"``, ``"imdb"``, ``"seq2seq"``, ``"byod"``.
    reference : LabelledLogits or (logits, labels)
        Labelled in-distribution held-out set.
    targets : dict[str, LabelledLogits or (logits, labels)]
        Shifted sets to estimate, by name (at least one).
    meta : dict[str, LabelledLogits or (logits, labels)], optional
        Synthetic meta-set (>= 3 sets) for score -> accuracy regression.
    partner : dict[str, np.ndarray], optional
        A second model's logits on ``"reference"``, every target and every meta set (same rows).
    features : dict[str, np.ndarray], optional
        Penultimate features ``(n, d)`` on ``"reference"``, every target and every meta set.
    info : dict, optional
        Free-form description (model, dataset, source), copied into result tables.
    set_families : dict[str, str], optional
        The family of single target sets where it is not ``family`` (e.g. the CIFAR-10 task's noise, blur, weather
        and digital corruptions, compositions and stress sets are six families of one task, which shares one
        reference and one meta-set); :meth:`family_of` reads it, and every row of a set carries it.
    """

    name: str
    family: str
    reference: LabelledLogits
    targets: dict[str, LabelledLogits]
    meta: dict[str, LabelledLogits] = field(default_factory=dict)
    partner: dict[str, np.ndarray] = field(default_factory=dict)
    features: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    set_families: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line: name, family, classes and how many sets of each kind (``print(task)`` shows no arrays).

        >>> z = np.eye(3)[[0, 1, 2, 0]] * 3.0
        >>> ShiftTask("mine", "byod", (z, [0, 1, 2, 1]), {"t": (z, [0, 1, 2, 0])})
        ShiftTask('mine', family='byod', classes=3, reference n=4 (accuracy 0.750), 1 target set, 0 meta-sets)
        """
        extras = ", with partner outputs" * bool(self.partner) + ", with features" * bool(self.features)
        return (f"ShiftTask({self.name!r}, family={self.family!r}, classes={self.n_classes}, reference "
                f"n={self.reference.n} (accuracy {self.reference.accuracy:.3f}), {len(self.targets)} target "
                f"set{'s' * (len(self.targets) != 1)}, {len(self.meta)} meta-sets{extras})")  # fmt: skip

    def family_of(self, set_name: str) -> str:
        """The shift family of target ``set_name``: ``set_families[set_name]``, else the task's ``family``."""
        return self.set_families.get(set_name, self.family)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputValidationError(f"ShiftTask.name: expected a non-empty string, got {self.name!r}")
        reference = _as_set(self.reference, f"{self.name}: reference")
        if not self.targets:
            raise InputValidationError(f"{self.name}: expected at least one target set, got none")
        targets = {str(k): _as_set(v, f"{self.name}: target {k!r}") for k, v in self.targets.items()}
        meta = {str(k): _as_set(v, f"{self.name}: meta set {k!r}") for k, v in self.meta.items()}
        if meta and len(meta) < 3:
            raise InputValidationError(f"{self.name}: a meta-set needs at least 3 sets to regress on, got {len(meta)}")
        k = reference.n_classes
        for kind, sets in (("target", targets), ("meta set", meta)):
            for set_name, s in sets.items():
                if s.n_classes != k:
                    raise InputValidationError(
                        f"{self.name}: {kind} {set_name!r} has {s.n_classes} classes, the reference has {k}"
                    )
        all_sets = {"reference": reference, **targets, **meta}
        for what, arrays in (("partner", self.partner), ("features", self.features)):
            if not arrays:
                continue
            missing = sorted(set(all_sets) - set(arrays))
            if missing:
                raise InputValidationError(f"{self.name}: {what} is missing sets {missing}")
            for set_name, arr in arrays.items():
                arr = np.asarray(arr)
                if set_name in all_sets and (arr.ndim != 2 or arr.shape[0] != all_sets[set_name].n):
                    raise InputValidationError(
                        f"{self.name}: {what}[{set_name!r}] expected shape ({all_sets[set_name].n}, d), "
                        f"got {arr.shape}"
                    )
        unknown = sorted(set(self.set_families) - set(targets))
        if unknown:
            raise InputValidationError(f"{self.name}: set_families names sets that are not targets: {unknown}")
        bad = {k: v for k, v in self.set_families.items() if not isinstance(v, str) or not v}
        if bad:
            raise InputValidationError(f"{self.name}: set_families: expected non-empty family names, got {bad}")
        object.__setattr__(self, "reference", reference)
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "meta", meta)

    @property
    def n_classes(self) -> int:
        return self.reference.n_classes

    def true_accuracies(self) -> dict[str, float]:
        """Accuracy (fraction) of every target set, from its labels."""
        return {name: s.accuracy for name, s in self.targets.items()}
