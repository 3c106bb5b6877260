"""Algorithm 1 of paper 3 on tiny problems: votes, the self-training loop, T_RI / T_RM mechanics, γ weighting."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import helpers.selftraining.ensembles as ens
from helpers.errors import InputValidationError
from helpers.models.dann import DANN, IGNORE_LABEL
from helpers.selftraining import (
    RandomInitEnsemble,
    RepresentationMatchingEnsemble,
    SelfTrainingResult,
    dann_training_set,
    disagreement_mask,
    majority_vote,
    self_training,
    weighted_training_set,
)
from helpers.training import TrainSettings

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _blobs(n=60, shift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    x = rng.normal(size=(n, 2)).astype(np.float32) * 0.6
    x[:, 0] += np.where(y == 1, 1.5, -1.5) + shift
    return x, y.astype(np.int64)


def _mlp():
    return nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))


def _dann():
    return DANN(nn.Sequential(nn.Linear(2, 8), nn.ReLU()), nn.Linear(8, 2), nn.Linear(8, 2), alpha_max=0.1)


# ---------------------------------------------------------------------------------------------------------------
def test_majority_vote_hand_computed_ties_to_lowest_class():
    members = np.array([[0, 1, 2, 1], [1, 1, 0, 0], [2, 0, 0, 2]])
    # col 0: one vote each -> 0; col 1: 1,1,0 -> 1; col 2: 2,0,0 -> 0; col 3: 1,0,2 tie -> 0
    np.testing.assert_array_equal(majority_vote(members, num_classes=3), [0, 1, 0, 0])
    # two members, 2 vs 1: tie -> lower class 1
    np.testing.assert_array_equal(majority_vote(np.array([[2], [1]])), [1])


def test_majority_vote_bad_input():
    with pytest.raises(InputValidationError):
        majority_vote(np.array([0, 1]))
    with pytest.raises(InputValidationError):
        majority_vote(np.array([[0.5, 1.0]]))
    with pytest.raises(InputValidationError):
        majority_vote(np.array([[0, 3]]), num_classes=3)
    with pytest.raises(InputValidationError):
        disagreement_mask(np.array([0, 1]), np.array([0, 1, 1]))


def test_loop_rebuilds_R_from_current_disagreements_and_estimates_one_minus_R_over_U():
    f_pred = np.array([0, 0, 1, 1, 0, 1])
    scripted = [  # round -> members (3, 6)
        np.array([[1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 0, 1], [0, 0, 1, 1, 0, 1]]),  # vote 1,1,1,1,0,1 -> R={0,1}
        np.array([[0, 0, 0, 1, 0, 1], [0, 0, 0, 1, 0, 1], [1, 1, 0, 1, 0, 1]]),  # vote 0,0,0,1,0,1 -> R={2}
        np.array([[0, 0, 0, 0, 1, 1]] * 3),  # vote -> R={2,3,4}
    ]
    calls = []

    def ensemble(t, idx, labels):
        calls.append((t, idx.copy(), labels.copy()))
        return scripted[t]

    res = self_training(predictions=f_pred, train_ensemble=ensemble, rounds=3, num_classes=2)
    assert [c[0] for c in calls] == [0, 1, 2]
    assert calls[0][1].size == 0  # R = ∅ in the first round
    np.testing.assert_array_equal(calls[1][1], [0, 1])
    np.testing.assert_array_equal(calls[1][2], [1, 1])  # pseudo-labels = the vote, ≠ f
    np.testing.assert_array_equal(calls[2][1], [2])  # rebuilt, not accumulated ({0, 1} dropped)
    np.testing.assert_array_equal(calls[2][2], [0])
    np.testing.assert_array_equal(res.errors, [False, False, True, True, True, False])
    assert res.estimated_accuracy == pytest.approx(1 - 3 / 6)
    assert [r.estimated_accuracy for r in res.rounds] == pytest.approx([4 / 6, 5 / 6, 3 / 6])
    assert res.to_estimate("rm").accuracy == pytest.approx(0.5)
    # T-prefix and round-trip through arrays
    assert res.truncated(1).estimated_accuracy == pytest.approx(4 / 6)
    back = SelfTrainingResult.from_arrays(res.to_arrays(), predictions=f_pred, num_classes=2)
    np.testing.assert_array_equal(back.errors, res.errors)
    np.testing.assert_array_equal(back.rounds[2].trained_on, [False, False, True, False, False, False])


def test_loop_bad_input():
    with pytest.raises(InputValidationError):
        self_training(predictions=np.array([0, 1]), train_ensemble=lambda *a: np.zeros((2, 2), int), rounds=0)
    with pytest.raises(InputValidationError):
        self_training(predictions=np.array([0, 1]), train_ensemble=lambda *a: np.zeros((2, 3), int), rounds=1)


def test_weighted_training_set_gamma_weights():
    xs, ys = np.zeros((3, 2), np.float32), np.array([0, 1, 0])
    xt = np.arange(8, dtype=np.float32).reshape(4, 2)
    x, y, w = weighted_training_set(xs, ys, xt, np.array([1, 3]), np.array([1, 0]), gamma=0.1)
    np.testing.assert_array_equal(y, [0, 1, 0, 1, 0])
    np.testing.assert_allclose(w, [1, 1, 1, 0.1, 0.1])
    np.testing.assert_array_equal(x[3:], xt[[1, 3]])
    with pytest.raises(InputValidationError):
        weighted_training_set(xs, ys, xt, np.array([4]), np.array([0]), gamma=0.1)
    with pytest.raises(InputValidationError):
        weighted_training_set(xs, ys, xt, np.array([1]), np.array([0]), gamma=-1)


def test_dann_training_set_columns():
    xs, ys = np.zeros((2, 2), np.float32), np.array([1, 0])
    xt = np.ones((3, 2), np.float32)
    x, y, w, dom, dw = dann_training_set(xs, ys, xt, np.array([2]), np.array([1]), gamma=0.5)
    np.testing.assert_array_equal(y, [1, 0, IGNORE_LABEL, IGNORE_LABEL, IGNORE_LABEL, 1])
    np.testing.assert_allclose(w, [1, 1, 0, 0, 0, 0.5])
    np.testing.assert_array_equal(dom, [0, 0, 1, 1, 1, 1])
    np.testing.assert_allclose(dw, [1, 1, 1, 1, 1, 0])  # no domain loss on the pseudo-labelled copy
    assert len(x) == 6


def _record_initial_states(monkeypatch):
    """Record the state every model has when a round of T_RI / T_RM starts training it."""
    seen = []
    real_members, real_dann = ens.train_members, ens.train_dann_paired

    def spy_members(models, *args, **kw):
        seen.extend({k: v.detach().clone() for k, v in m.state_dict().items()} for m in models)
        return real_members(models, *args, **kw)

    def spy_dann(model, *args, **kw):
        seen.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return real_dann(model, *args, **kw)

    monkeypatch.setattr(ens, "train_members", spy_members)
    monkeypatch.setattr(ens, "train_dann_paired", spy_dann)
    return seen


def _same(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


def test_random_init_members_reloaded_from_pretrained_state_every_round(monkeypatch):
    xs, ys = _blobs(40)
    xt, _ = _blobs(30, shift=1.0, seed=1)
    ens = RandomInitEnsemble(
        model_factory=_mlp,
        x_source=xs,
        y_source=ys,
        x_target=xt,
        num_models=3,
        pretrain_epochs=2,
        settings=TrainSettings(batch_size=16, seed=0),
    ).pretrain()
    pre = [dict(s) for s in ens.pretrained_states_]
    assert not _same(pre[0], pre[1])  # different random initialisations
    seen = _record_initial_states(monkeypatch)
    res = self_training(predictions=np.zeros(len(xt), np.int64), train_ensemble=ens, rounds=3, num_classes=2)
    assert len(seen) == 9 and ens.loads_ == 9
    for call, state in enumerate(seen):
        assert _same(state, pre[call % 3])  # member i starts each round from its pre-trained state
    assert all(_same(a, b) for a, b in zip(ens.pretrained_states_, pre, strict=True))  # never overwritten
    assert res.rounds[0].member_predictions.shape == (3, len(xt))


def test_representation_matching_reloads_h0_and_returns_N_epoch_snapshots(monkeypatch):
    xs, ys = _blobs(40)
    xt, _ = _blobs(30, shift=1.0, seed=1)
    ens = RepresentationMatchingEnsemble(
        model_factory=_dann,
        x_source=xs,
        y_source=ys,
        x_target=xt,
        num_models=4,
        pretrain_epochs=2,
        settings=TrainSettings(batch_size=16, seed=0),
    ).pretrain()
    h0 = dict(ens.pretrained_state_)
    seen = _record_initial_states(monkeypatch)
    res = self_training(predictions=np.zeros(len(xt), np.int64), train_ensemble=ens, rounds=2, num_classes=2)
    assert len(seen) == 2 and all(_same(s, h0) for s in seen)
    assert res.rounds[1].member_predictions.shape == (4, len(xt))


def test_gamma_controls_fit_to_pseudo_labels():
    xs, ys = _blobs(60)
    xt, _ = _blobs(40, seed=2)
    idx = np.arange(0, 40, 2)
    flipped = 1 - (xt[idx, 0] > 0).astype(np.int64)  # pseudo-labels against the source rule

    def agreement(gamma):
        ens = RandomInitEnsemble(
            model_factory=_mlp,
            x_source=xs,
            y_source=ys,
            x_target=xt,
            num_models=2,
            gamma=gamma,
            pretrain_epochs=3,
            finetune_epochs=10,
            settings=TrainSettings(batch_size=32, lr=2e-2, seed=0),
        )
        return (ens(0, idx, flipped)[:, idx] == flipped).mean()

    assert agreement(0.0) < 0.3  # weight 0: R is ignored, members follow D
    assert agreement(20.0) > agreement(0.0) + 0.3
