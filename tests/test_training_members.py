"""The fast in-memory loops: vectorised members equal sequential ones, shuffles per member, resume, bad input."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from torch import nn

import helpers.training.members as mem
from helpers.errors import InputValidationError
from helpers.training.members import BatchStream, epoch_batches, train_classifier, train_members

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 1).astype(np.int64)
    w = rng.uniform(0.1, 2.0, size=n).astype(np.float32)
    return x, y, w


def _members(n_models=3):
    out = []
    for s in range(n_models):
        torch.manual_seed(s)
        out.append(_mlp())
    return out


def _max_diff(a, b) -> float:
    return max(
        (p - q).abs().max().item() for ma, mb in zip(a, b) for p, q in zip(ma.parameters(), mb.parameters())
    )


def test_vectorised_members_equal_sequential_members():
    x, y, w = _data()
    seq = _members()
    vec = copy.deepcopy(seq)
    train_members(seq, x, y, w, epochs=2, batch_size=8, lr=1e-2, seeds=[5, 6, 7], vectorise=False)
    train_members(vec, x, y, w, epochs=2, batch_size=8, lr=1e-2, seeds=[5, 6, 7], vectorise=True)
    moved = _max_diff(seq, _members())
    assert moved > 1e-2  # they trained
    assert _max_diff(seq, vec) < 1e-5  # 10 Adam steps, same batches, same weights to float tolerance


def test_member_equals_the_same_model_trained_alone():
    """Member i of a pool is the model trained alone with seeds[i]: members do not interact."""
    x, y, w = _data()
    pool = _members()
    train_members(pool, x, y, w, epochs=2, batch_size=8, lr=1e-2, seeds=[5, 6, 7], vectorise=True)
    alone = _members()[1]
    train_classifier(alone, x, y, w, epochs=2, batch_size=8, lr=1e-2, seed=6)
    assert _max_diff([pool[1]], [alone]) < 1e-5


def test_shuffles_follow_the_member_seed():
    x, y, _ = _data()
    a, b, c = (_members(1)[0] for _ in range(3))
    train_members([a, b, c], x, y, epochs=1, batch_size=8, lr=1e-2, seeds=[1, 1, 2])
    assert _max_diff([a], [b]) == pytest.approx(0.0, abs=1e-7)  # same init, same seed: same model
    assert _max_diff([a], [c]) > 1e-4  # same init, another shuffle


def test_weighted_cross_entropy_hand_computed():
    logits = torch.zeros(1, 2, 2)  # one member, two samples, two classes
    loss = mem._weighted_ce(logits, torch.tensor([[0, 1]]), torch.tensor([[2.0, 0.0]]))
    assert loss.item() == pytest.approx(2 * math.log(2) / 2)  # mean over the batch of w·CE


def test_zero_weight_rows_do_not_train():
    x, y, _ = _data(16)
    m = _members(1)[0]
    before = copy.deepcopy(m)
    train_classifier(m, x, y, np.zeros(16, np.float32), epochs=1, batch_size=8, lr=1e-2, seed=0)
    assert _max_diff([m], [before]) == 0.0


def test_epoch_batches_drop_a_final_single_example_and_stream_cycles():
    g = torch.Generator().manual_seed(0)
    batches = epoch_batches(17, 8, g)
    assert [len(b) for b in batches] == [8, 8]
    assert sorted(torch.cat(epoch_batches(16, 8, g)).tolist()) == list(range(16))
    stream = BatchStream(10, 4, torch.Generator().manual_seed(0))
    assert stream.batches_per_epoch == 3
    sizes = [len(stream.next()) for _ in range(6)]
    assert sizes == [4, 4, 2, 4, 4, 2]


def test_interrupted_training_resumes_to_the_same_weights(tmp_path, monkeypatch):
    x, y, w = _data()
    ref = _members(2)
    train_members(ref, x, y, w, epochs=4, batch_size=8, lr=1e-2, seeds=[1, 2], vectorise=True)

    calls = {"n": 0}
    real = mem._Stacked.epoch

    def flaky(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(mem._Stacked, "epoch", flaky)
    ck = tmp_path / "members.pt"
    with pytest.raises(KeyboardInterrupt):
        train_members(
            _members(2),
            x,
            y,
            w,
            epochs=4,
            batch_size=8,
            lr=1e-2,
            seeds=[1, 2],
            checkpoint=ck,
            checkpoint_every=0.0,
        )
    monkeypatch.setattr(mem._Stacked, "epoch", real)
    assert ck.exists()
    resumed = _members(2)
    train_members(resumed, x, y, w, epochs=4, batch_size=8, lr=1e-2, seeds=[1, 2], checkpoint=ck)
    assert _max_diff(ref, resumed) < 1e-6
    # a finished checkpoint is re-used: no further training
    monkeypatch.setattr(
        mem._Stacked, "epoch", lambda *a, **k: (_ for _ in ()).throw(AssertionError("trained"))
    )
    again = _members(2)
    train_members(again, x, y, w, epochs=4, batch_size=8, lr=1e-2, seeds=[1, 2], checkpoint=ck)
    assert _max_diff(ref, again) < 1e-6


def test_bad_input_is_rejected():
    x, y, w = _data()
    with pytest.raises(InputValidationError, match="one seed per model"):
        train_members(_members(2), x, y, epochs=1, batch_size=8, lr=1e-3, seeds=[0])
    with pytest.raises(InputValidationError, match="equal non-empty lengths"):
        train_members(_members(1), x, y[:-1], epochs=1, batch_size=8, lr=1e-3, seeds=[0])
    with pytest.raises(InputValidationError, match="same architecture"):
        train_members([_mlp(), nn.Linear(6, 3)], x, y, epochs=1, batch_size=8, lr=1e-3, seeds=[0, 1])
    bn = [nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4), nn.Linear(4, 3)) for _ in range(2)]
    with pytest.raises(InputValidationError, match="batch norm"):
        train_members(bn, x, y, epochs=1, batch_size=8, lr=1e-3, seeds=[0, 1], vectorise=True)
    train_members(bn, x, y, epochs=1, batch_size=8, lr=1e-3, seeds=[0, 1])  # "auto" falls back to one by one


def test_vectorises_is_the_auto_rule():
    """vectorises(): several members, no buffers, at most VECTORISE_MAX_PARAMETERS parameters."""
    from torch import nn

    from helpers.training.members import VECTORISE_MAX_PARAMETERS, vectorises

    small = nn.Linear(10, 2)
    assert vectorises(small, 3) and not vectorises(small, 1)
    assert not vectorises(nn.Sequential(nn.Linear(10, 4), nn.BatchNorm1d(4)), 3)
    assert not vectorises(nn.Linear(VECTORISE_MAX_PARAMETERS, 1), 3)  # max + 1 parameters
