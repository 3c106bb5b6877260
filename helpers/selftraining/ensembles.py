"""The two ensemble methods of paper 3's Algorithm 1: T_RI (Algorithm 2, random-init members re-loaded and
fine-tuned one epoch per round) and T_RM (Algorithm 3, a DANN re-loaded every round whose N epoch snapshots form the
ensemble).  See :mod:`helpers.selftraining.algorithm` for the loop they plug into."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
from torch import nn

from helpers.errors import InputValidationError
from helpers.selftraining.adversarial import train_dann_paired
from helpers.selftraining.algorithm import (
    _check_pseudo,
    _cpu_state,
    _hard,
    train_dann,
    train_pool,
    weighted_training_set,
)
from helpers.training.members import train_members
from helpers.training.settings import TrainSettings

__all__ = ["RandomInitEnsemble", "RepresentationMatchingEnsemble"]


# ----------------------------------------------------------------------------------------------------------------
# the two ensemble methods
# ----------------------------------------------------------------------------------------------------------------
class RandomInitEnsemble:
    """T_RI (paper 3, Algorithm 2): members pre-trained on D, re-loaded every round, fine-tuned 1 epoch on D ∪ R.

    Parameters
    ----------
    model_factory : callable() -> nn.Module
        Builds one member (the paper uses the DANN-arch, trained here without its domain branch).
    x_source, y_source : arrays
        D.
    x_target : array
        U_X.
    num_models : int
        N.
    gamma : float, default 0.1
        Weight of the pseudo-labelled loss term (eq. 3).
    pretrain_epochs : int
        Epochs of supervised pre-training on D.
    finetune_epochs : int, default 1
        Epochs of fine-tuning per round (the paper: one).
    settings : TrainSettings, optional
        Batch size, learning rate, seed, checkpoint folder and progress (its ``epochs`` is not used: pre-training
        and fine-tuning run ``pretrain_epochs`` and ``finetune_epochs``); member i is initialised with
        ``settings.seed + i`` (pass the seeds of an existing pool to share it, e.g. with an Ens Avg Conf ensemble of
        the same architecture).  The pre-training of all members is checkpointed in
        ``settings.checkpoint_dir / "members.pt"``.
    pretrained : list of nn.Module, optional
        Already pre-trained members (skips pre-training).
    """

    def __init__(
        self,
        *,
        model_factory: Callable[[], nn.Module],
        x_source: np.ndarray,
        y_source: np.ndarray,
        x_target: np.ndarray,
        num_models: int = 5,
        gamma: float = 0.1,
        pretrain_epochs: int = 10,
        finetune_epochs: int = 1,
        settings: TrainSettings | None = None,
        pretrained: list[nn.Module] | None = None,
    ):
        if num_models < 1:
            raise InputValidationError(f"num_models: expected N ≥ 1, got {num_models}")
        if gamma < 0:
            raise InputValidationError(f"gamma: expected γ ≥ 0, got {gamma}")
        self.model_factory = model_factory
        self.x_source, self.y_source, self.x_target = x_source, np.asarray(y_source, np.int64), x_target
        self.num_models, self.gamma = int(num_models), float(gamma)
        self.pretrain_epochs, self.finetune_epochs = int(pretrain_epochs), int(finetune_epochs)
        self.settings = TrainSettings.resolve(settings)
        self.seed = self.settings.seed
        if pretrained is not None:
            if len(pretrained) < self.num_models:
                raise InputValidationError(f"pretrained: {len(pretrained)} models for N = {self.num_models}")
            self.pretrained_states_ = [_cpu_state(m) for m in pretrained[: self.num_models]]
        self.loads_ = 0  # how many times a member was re-loaded from its pre-trained state

    def pretrain(self) -> RandomInitEnsemble:
        """Pre-train the N members on D (Algorithm 2, line 1), vectorised; checkpointed when ``checkpoint_dir`` is set."""
        members = train_pool(
            self.model_factory,
            self.x_source,
            self.y_source,
            self.settings.replace(epochs=self.pretrain_epochs),
            seeds=[self.seed + i for i in range(self.num_models)],
        )
        self.pretrained_states_ = [_cpu_state(m) for m in members]
        return self

    def member(self, i: int) -> nn.Module:
        """A fresh copy of member i in its pre-trained state."""
        if not hasattr(self, "pretrained_states_"):
            self.pretrain()
        model = self.model_factory()
        model.load_state_dict(copy.deepcopy(self.pretrained_states_[i]))
        self.loads_ += 1
        return model

    def __call__(self, round_index: int, pseudo_index: np.ndarray, pseudo_labels: np.ndarray) -> np.ndarray:
        """Members' predictions on U_X after fine-tuning on D ∪ R (eq. 3), shape (N, n)."""
        data = weighted_training_set(
            self.x_source, self.y_source, self.x_target, pseudo_index, pseudo_labels, gamma=self.gamma
        )
        models = [self.member(i) for i in range(self.num_models)]
        train_members(
            models,
            *data,
            self.settings.replace(epochs=self.finetune_epochs, checkpoint_dir=None, progress=False),
            seeds=[self.seed + 1000 * (round_index + 1) + i for i in range(self.num_models)],
        )
        out = [_hard(m, self.x_target, device=self.settings.device) for m in models]
        return np.stack(out)


class RepresentationMatchingEnsemble:
    """T_RM (paper 3, Algorithm 3): N epoch snapshots of a DANN re-loaded from h_0 and fine-tuned every round.

    Parameters
    ----------
    model_factory : callable() -> helpers.models.dann.DANN
    x_source, y_source, x_target : arrays
        D and U_X.
    num_models : int
        N, the number of fine-tuning epochs (= snapshots) per round.
    gamma : float, default 0.1
    pretrain_epochs : int
        Epochs of DANN pre-training of h_0 on D and U_X (α ramped from 0 to α_max).
    settings : TrainSettings, optional
        As in :class:`RandomInitEnsemble`; h_0 is checkpointed in ``settings.checkpoint_dir / "h0"``.
    pretrained : nn.Module, optional
        An already trained h_0 (e.g. shared with :class:`~helpers.selftraining.baselines.ProxyRisk`).

    Fine-tuning keeps α = α_max (appendix C.1.4); every step draws one D ∪ R batch and one U_X batch and an epoch
    is max(|D ∪ R|, |U_X|)/B steps (the authors' ``dann_ensemble_self_training``).
    """

    def __init__(
        self,
        *,
        model_factory: Callable[[], nn.Module],
        x_source: np.ndarray,
        y_source: np.ndarray,
        x_target: np.ndarray,
        num_models: int = 5,
        gamma: float = 0.1,
        pretrain_epochs: int = 10,
        settings: TrainSettings | None = None,
        pretrained: nn.Module | None = None,
    ):
        if num_models < 1:
            raise InputValidationError(f"num_models: expected N ≥ 1, got {num_models}")
        if gamma < 0:
            raise InputValidationError(f"gamma: expected γ ≥ 0, got {gamma}")
        self.model_factory = model_factory
        self.x_source, self.y_source, self.x_target = x_source, np.asarray(y_source, np.int64), x_target
        self.num_models, self.gamma, self.pretrain_epochs = (
            int(num_models),
            float(gamma),
            int(pretrain_epochs),
        )
        self.settings = TrainSettings.resolve(settings)
        self.seed = self.settings.seed
        if pretrained is not None:
            self.pretrained_state_ = _cpu_state(pretrained)
        self.loads_ = 0

    def pretrain(self) -> RepresentationMatchingEnsemble:
        """Train h_0 with DANN on D and U_X."""
        h0 = train_dann(
            self.model_factory,
            self.x_source,
            self.y_source,
            self.x_target,
            self.settings.replace(epochs=self.pretrain_epochs, checkpoint_dir=_sub(self.settings.checkpoint_dir, "h0")),
        )
        self.pretrained_state_ = _cpu_state(h0)
        return self

    def initial_model(self) -> nn.Module:
        """A fresh copy of h_0."""
        if not hasattr(self, "pretrained_state_"):
            self.pretrain()
        model = self.model_factory()
        model.load_state_dict(copy.deepcopy(self.pretrained_state_))
        self.loads_ += 1
        return model

    def __call__(self, round_index: int, pseudo_index: np.ndarray, pseudo_labels: np.ndarray) -> np.ndarray:
        """Predictions on U_X of the N end-of-epoch snapshots, shape (N, n)."""
        idx, lab = _check_pseudo(self.x_target, pseudo_index, pseudo_labels)
        model = self.initial_model()
        snapshots: list[np.ndarray] = []
        train_dann_paired(
            model,
            self.x_source,
            self.y_source,
            self.x_target,
            pseudo_x=np.asarray(self.x_target)[idx],
            pseudo_y=lab,
            gamma=self.gamma,
            settings=self.settings.replace(epochs=self.num_models, seed=self.seed + 1000 * (round_index + 1)),
            schedule=False,
            steps="max",
            on_epoch_end=lambda epoch, m: snapshots.append(_hard(m, self.x_target, device=self.settings.device)),
        )
        return np.stack(snapshots)


def _sub(folder: Path | None, name: str) -> Path | None:
    """``folder / name``, or None without a folder."""
    return folder / name if folder is not None else None
