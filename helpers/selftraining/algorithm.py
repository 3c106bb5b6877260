"""Algorithm 1 of paper 3 (Chen, Liu, Avci, Wu, Liang & Jha, "Detecting Errors and Estimating Accuracy on Unlabeled
Data with Self-training Ensembles", NeurIPS 2021) (the ensembles T_RI and T_RM are in
:mod:`helpers.selftraining.ensembles`).

Algorithm 1 (Section 6): start with R = ∅; for t = 1..T train an ensemble {h_i}_{i=1..N} = T(D, U_X, R), take the
hard majority vote ỹ_x (ties go to the lowest class, as ``argmax`` does in the authors' code) and set
R = {(x, ỹ_x) : x ∈ U_X, ỹ_x ≠ f(x)} -- R is rebuilt from the current disagreements every round.  Output: the
flagged points R_X and the estimated accuracy |U_X \\ R_X| / |U_X| = 1 − |R| / |U|.

T_RI (Algorithm 2): N members pre-trained on D from different random initialisations; every round each member is
re-loaded from its pre-trained state and fine-tuned for one epoch on D ∪ R with loss
E_D[ℓ] + γ·E_R[ℓ] (eq. 3), implemented with per-sample weights 1 (D) and γ (R) in one shuffled pass.

T_RM (Algorithm 3): a DANN h_0 pre-trained on D and U_X; every round it is re-loaded and fine-tuned for N epochs
with eq. 4 (class loss on D, γ-weighted class loss on R, DANN domain loss on D and U_X with α = α_max, no domain
loss on the pseudo-labelled copies; one D ∪ R batch and one U_X batch per step, as in the authors' code,
:mod:`helpers.selftraining.adversarial`) and the N end-of-epoch snapshots form the ensemble.

Training runs on the fast in-memory loops of :mod:`helpers.training.members` (the T_RI members and every pool of
independent members vectorised over members) and :mod:`helpers.selftraining.adversarial`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.estimators.base import Estimate
from helpers.models.dann import IGNORE_LABEL
from helpers.selftraining.adversarial import train_dann_paired
from helpers.training import predict
from helpers.training.members import ConfigCheckpoint, train_members
from helpers.training.settings import TrainSettings

__all__ = [
    "majority_vote",
    "disagreement_mask",
    "RoundRecord",
    "SelfTrainingResult",
    "self_training",
    "weighted_training_set",
    "dann_training_set",
    "train_pool",
    "train_supervised",
    "train_dann",
]


# ----------------------------------------------------------------------------------------------------------------
# votes and the loop
# ----------------------------------------------------------------------------------------------------------------
def _check_labels(a: Any, name: str, *, ndim: int) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != ndim or arr.size == 0:
        raise InputValidationError(
            f"{name}: expected a non-empty {ndim}-D integer array, got shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        raise InputValidationError(f"{name}: expected integer class labels, got dtype {arr.dtype}")
    if arr.min() < 0:
        raise InputValidationError(f"{name}: class labels must be non-negative")
    return arr.astype(np.int64, copy=False)


def majority_vote(member_predictions: np.ndarray, *, num_classes: int | None = None) -> np.ndarray:
    """Hard majority vote ỹ_x = argmax_j Σ_i 1[h_i(x) = j] (Algorithm 1, line 4); ties go to the lowest class.

    Parameters
    ----------
    member_predictions : numpy.ndarray of int, shape (N, n)
        Predicted class of each of the N members on each of the n points.
    num_classes : int, optional
        Number of classes K (default: largest label + 1).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
    """
    preds = _check_labels(member_predictions, "member_predictions", ndim=2)
    k = int(num_classes) if num_classes is not None else int(preds.max()) + 1
    if preds.max() >= k:
        raise InputValidationError(f"member_predictions: label {preds.max()} with num_classes={k}")
    counts = np.zeros((preds.shape[1], k), dtype=np.int64)
    for row in preds:
        counts[np.arange(preds.shape[1]), row] += 1
    return counts.argmax(axis=1)  # first maximum = lowest class


def disagreement_mask(votes: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """R_X as a boolean mask: points where the ensemble's vote differs from f's prediction (Algorithm 1, line 5)."""
    v = _check_labels(votes, "votes", ndim=1)
    p = _check_labels(predictions, "predictions", ndim=1)
    if v.shape != p.shape:
        raise InputValidationError(f"votes and predictions differ in length: {v.shape} vs {p.shape}")
    return v != p


@dataclass
class RoundRecord:
    """One iteration of Algorithm 1.

    Attributes
    ----------
    member_predictions : numpy.ndarray, shape (N, n)
        Hard predictions of the ensemble trained in this round.
    vote : numpy.ndarray, shape (n,)
        Their majority vote.
    trained_on : numpy.ndarray of bool, shape (n,)
        The pseudo-labelled set R the ensemble was trained with (empty in the first round).
    errors : numpy.ndarray of bool, shape (n,)
        The new R_X (vote ≠ f).
    """

    member_predictions: np.ndarray
    vote: np.ndarray
    trained_on: np.ndarray
    errors: np.ndarray

    @property
    def estimated_accuracy(self) -> float:
        """1 − |R_X| / |U_X| after this round."""
        return 1.0 - float(self.errors.mean())


@dataclass
class SelfTrainingResult:
    """Output of :func:`self_training`: the final R_X, the estimate and every round."""

    errors: np.ndarray
    estimated_accuracy: float
    rounds: list[RoundRecord] = field(default_factory=list)

    def to_estimate(self, method: str = "self_training") -> Estimate:
        """The project's :class:`~helpers.estimators.base.Estimate` (accuracy = 1 − |R|/|U|)."""
        return Estimate(
            method=method,
            accuracy=self.estimated_accuracy,
            n=int(self.errors.size),
            details={
                "rounds": len(self.rounds),
                "members": int(self.rounds[-1].member_predictions.shape[0]) if self.rounds else 0,
                "per_round_accuracy": [r.estimated_accuracy for r in self.rounds],
            },
        )

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Stacked arrays for :func:`helpers.cache.cached_arrays` (members (T, N, n), trained_on/errors (T, n))."""
        return {
            "members": np.stack([r.member_predictions for r in self.rounds]),
            "trained_on": np.stack([r.trained_on for r in self.rounds]),
        }

    @classmethod
    def from_arrays(
        cls, arrays: dict[str, np.ndarray], *, predictions: np.ndarray, num_classes: int | None = None
    ) -> SelfTrainingResult:
        """Rebuild a result from :meth:`to_arrays` output and f's predictions."""
        rounds = []
        for members, trained in zip(arrays["members"], arrays["trained_on"], strict=True):
            vote = majority_vote(members, num_classes=num_classes)
            rounds.append(
                RoundRecord(members, vote, trained.astype(bool), disagreement_mask(vote, predictions))
            )
        return cls(rounds[-1].errors, rounds[-1].estimated_accuracy, rounds)

    def truncated(self, rounds: int) -> SelfTrainingResult:
        """The result Algorithm 1 would have returned with T = ``rounds`` (round t never depends on later ones)."""
        if not 1 <= rounds <= len(self.rounds):
            raise InputValidationError(f"rounds: expected 1..{len(self.rounds)}, got {rounds}")
        kept = self.rounds[:rounds]
        return SelfTrainingResult(kept[-1].errors, kept[-1].estimated_accuracy, kept)


EnsembleFn = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def self_training(
    *,
    predictions: np.ndarray,
    train_ensemble: EnsembleFn,
    rounds: int = 5,
    num_classes: int | None = None,
    progress: bool = False,
) -> SelfTrainingResult:
    """Run Algorithm 1 of paper 3.

    Parameters
    ----------
    predictions : numpy.ndarray of int, shape (n,)
        f's predicted classes on the unlabelled target set U_X.
    train_ensemble : callable(round, pseudo_index, pseudo_labels) -> numpy.ndarray (N, n)
        The ensemble method T(D, U_X, R): given the 0-based round, the indices of the points in R and their
        pseudo-labels, train an ensemble and return its members' hard predictions on all of U_X
        (:class:`RandomInitEnsemble`, :class:`RepresentationMatchingEnsemble`).
    rounds : int, default 5
        T, the number of self-training iterations (T = 1: no self-training).
    num_classes : int, optional
    progress : bool, default False

    Returns
    -------
    SelfTrainingResult
    """
    from helpers.progress import tqdm

    f_pred = _check_labels(predictions, "predictions", ndim=1)
    if int(rounds) < 1:
        raise InputValidationError(f"rounds: expected T ≥ 1, got {rounds}")
    n = f_pred.size
    r_mask = np.zeros(n, dtype=bool)
    pseudo = np.zeros(n, dtype=np.int64)
    records: list[RoundRecord] = []
    for t in tqdm(range(int(rounds)), disable=not progress, desc="self-training", leave=False):
        idx = np.flatnonzero(r_mask)
        members = _check_labels(train_ensemble(t, idx, pseudo[idx].copy()), "train_ensemble output", ndim=2)
        if members.shape[1] != n:
            raise InputValidationError(
                f"train_ensemble returned predictions for {members.shape[1]} points, expected {n}"
            )
        vote = majority_vote(members, num_classes=num_classes)
        new_r = disagreement_mask(vote, f_pred)
        records.append(RoundRecord(members, vote, r_mask.copy(), new_r))
        r_mask, pseudo = new_r, vote
    return SelfTrainingResult(r_mask, 1.0 - float(r_mask.mean()), records)


# ----------------------------------------------------------------------------------------------------------------
# training sets
# ----------------------------------------------------------------------------------------------------------------
def _check_pseudo(
    x_target: np.ndarray, index: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    lab = np.asarray(labels, dtype=np.int64).reshape(-1)
    if idx.shape != lab.shape:
        raise InputValidationError(
            f"pseudo_index and pseudo_labels differ in length: {idx.shape} vs {lab.shape}"
        )
    if idx.size and (idx.min() < 0 or idx.max() >= len(x_target)):
        raise InputValidationError(f"pseudo_index: indices must lie in [0, {len(x_target)})")
    return idx, lab


def weighted_training_set(
    x_source: np.ndarray,
    y_source: np.ndarray,
    x_target: np.ndarray,
    pseudo_index: np.ndarray,
    pseudo_labels: np.ndarray,
    *,
    gamma: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """D ∪ R as ``(x, y, w)`` with w = 1 on D and w = γ on R (paper 3 eq. 3 via per-sample loss weights).

    With :func:`helpers.training.fit` (``weight_reduction="mean"``) a batch's loss is Σ wᵢℓᵢ / B, the empirical
    E_D[ℓ] + γ·E_R[ℓ] when D and R are sampled together as in the authors' code (appendix C.1.3).
    """
    if gamma < 0:
        raise InputValidationError(f"gamma: expected γ ≥ 0, got {gamma}")
    idx, lab = _check_pseudo(x_target, pseudo_index, pseudo_labels)
    x = np.concatenate([np.asarray(x_source), np.asarray(x_target)[idx]])
    y = np.concatenate([np.asarray(y_source, dtype=np.int64), lab])
    w = np.concatenate([np.ones(len(y_source), np.float32), np.full(idx.size, gamma, np.float32)])
    return x, y, w


def dann_training_set(
    x_source: np.ndarray,
    y_source: np.ndarray,
    x_target: np.ndarray,
    pseudo_index: np.ndarray | None = None,
    pseudo_labels: np.ndarray | None = None,
    *,
    gamma: float = 0.1,
) -> tuple[np.ndarray, ...]:
    """Rows ``(x, y, w, domain, domain_weight)`` for :class:`helpers.models.dann.DANNLoss` (eq. 4).

    D: (y, 1, 0, 1); every target point: (ignored label, 0, 1, 1) for the domain loss; each pseudo-labelled point
    again as (ỹ, γ, 1, 0) -- class loss weighted by γ, no domain loss (as in the authors' code).
    """
    xs, xt = np.asarray(x_source), np.asarray(x_target)
    if pseudo_index is None:
        pseudo_index, pseudo_labels = np.zeros(0, np.int64), np.zeros(0, np.int64)
    idx, lab = _check_pseudo(xt, pseudo_index, pseudo_labels)
    ns, nt, nr = len(xs), len(xt), idx.size
    x = np.concatenate([xs, xt, xt[idx]])
    y = np.concatenate([np.asarray(y_source, np.int64), np.full(nt, IGNORE_LABEL, np.int64), lab])
    w = np.concatenate([np.ones(ns, np.float32), np.zeros(nt, np.float32), np.full(nr, gamma, np.float32)])
    dom = np.concatenate([np.zeros(ns, np.int64), np.ones(nt + nr, np.int64)])
    dw = np.concatenate([np.ones(ns + nt, np.float32), np.zeros(nr, np.float32)])
    return x, y, w, dom, dw


# ----------------------------------------------------------------------------------------------------------------
# training helpers (seeded, checkpointed): the fast loops of helpers.training.members and .adversarial
# ----------------------------------------------------------------------------------------------------------------
def _build(model_factory: Callable[[], nn.Module], seed: int) -> nn.Module:
    torch.manual_seed(int(seed))  # the initialisation depends on the seed only
    return model_factory()


def _cpu_state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def train_pool(
    model_factory: Callable[[], nn.Module],
    x: np.ndarray,
    y: np.ndarray,
    settings: TrainSettings | None = None,
    *,
    seeds: Sequence[int],
    vectorise: bool | str = "auto",
    **overrides: Any,
) -> list[nn.Module]:
    """Members built as ``model_factory()`` under ``seeds[i]`` (initialisation) and trained on (x, y) with
    cross-entropy and Adam, shuffling with ``seeds[i]``, all at once (:func:`helpers.training.members.train_members`).

    ``settings`` gives epochs, batch size, learning rate and progress.  With ``settings.checkpoint_dir`` training
    resumes from ``checkpoint_dir / "members.pt"`` (saved every minute), and a finished pool is re-loaded instead
    of retrained.
    """
    s = TrainSettings.resolve(settings, **overrides)
    models = [_build(model_factory, seed) for seed in seeds]
    return train_members(models, x, np.asarray(y, np.int64), None, s, seeds=list(seeds), vectorise=vectorise)


def train_supervised(
    model_factory: Callable[[], nn.Module],
    x: np.ndarray,
    y: np.ndarray,
    settings: TrainSettings | None = None,
    **overrides: Any,
) -> nn.Module:
    """One member of :func:`train_pool`: built under ``settings.seed`` and trained on (x, y)."""
    s = TrainSettings.resolve(settings, **overrides)
    return train_pool(model_factory, x, y, s, seeds=[s.seed], vectorise=False)[0]


def train_dann(
    model_factory: Callable[[], nn.Module],
    x_source: np.ndarray,
    y_source: np.ndarray,
    x_target: np.ndarray,
    settings: TrainSettings | None = None,
    **overrides: Any,
) -> nn.Module:
    """DANN training on labelled D and unlabelled U_X, one D batch and one U_X batch per step, min(|D|, |U_X|)/B
    steps per epoch, α(p) = (2/(1+e^{−10p}) − 1)·α_max (appendix C.1.4; the authors' ``train_dann.py``).

    ``settings`` gives epochs, batch size, learning rate and seed.  With ``settings.checkpoint_dir`` the trained
    weights are stored in ``checkpoint_dir / "dann.pt"`` and re-loaded.
    """
    s = TrainSettings.resolve(settings, **overrides)
    epochs, batch_size, lr, seed = s.total_epochs, s.batch_size, s.lr, s.seed
    model = _build(model_factory, seed)
    config = {
        "n_s": len(y_source),
        "n_t": len(x_target),
        "epochs": int(epochs),
        "batch_size": int(batch_size),
        "lr": float(lr),
        "seed": int(seed),
    }
    ck = ConfigCheckpoint(s.checkpoint_dir / "dann.pt" if s.checkpoint_dir is not None else None, config)
    saved = ck.load()
    if saved is not None:
        model.load_state_dict(saved["state"])
        return model.eval()
    train_dann_paired(model, x_source, y_source, x_target, s, schedule=True, steps="min")
    ck.save({"state": _cpu_state(model)})
    return model.eval()


def _hard(model: nn.Module, x: np.ndarray, batch_size: int = 512, device: Any = "auto") -> np.ndarray:
    """Hard predictions of ``model`` on ``x``, computed on ``device`` (where the model is then left)."""
    return predict(model, x, batch_size=batch_size, device=device).argmax(1).astype(np.int64)
