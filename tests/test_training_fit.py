"""helpers.training: exact resume, determinism, sample weights, prediction order, checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.training import (
    TrainingInterrupted,
    fit,
    get_device,
    latest_checkpoint,
    load_checkpoint,
    predict,
    seed_everything,
)

N, D, C = 150, 8, 3  # 150 samples / batch 32 → 5 batches per epoch, the last one partial


def _data(n: int = N, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, D)).astype(np.float32)
    y = (x[:, :C].argmax(1)).astype(np.int64)
    return x, y


def _model(init_seed: int = 0) -> nn.Module:
    torch.manual_seed(init_seed)
    # dropout makes the result depend on the global RNG, so resuming must restore it too
    return nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, C))


def _same_weights(a: nn.Module, b: nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


COMMON = dict(epochs=3, batch_size=32, lr=1e-2, scheduler="linear", warmup=2, progress=False, device="cpu")


def _interrupt_at(k: int):
    def cb(info):
        if info.step == k:
            raise TrainingInterrupted(f"stop at {k}")

    return cb


@pytest.mark.parametrize("stop_at", [7, 10])  # 7: mid-epoch (epoch 1, batch 2); 10: at an epoch boundary
def test_interrupted_run_resumes_to_identical_weights(tmp_path, stop_at):
    x, y = _data()
    ref = _model()
    ref_res = fit(ref, (x, y), seed=3, **COMMON)

    ck = tmp_path / "ck"
    run = _model()
    with pytest.raises(TrainingInterrupted):
        fit(
            run,
            (x, y),
            seed=3,
            checkpoint_dir=ck,
            checkpoint_every=3,
            callback=_interrupt_at(stop_at),
            **COMMON,
        )
    last = latest_checkpoint(ck)
    assert last is not None and load_checkpoint(last)["step"] == (stop_at // 3) * 3

    resumed = _model(init_seed=123)  # a different initial state: everything must come from the checkpoint
    res = fit(resumed, (x, y), seed=3, checkpoint_dir=ck, checkpoint_every=3, **COMMON)
    assert res.resumed_from == (stop_at // 3) * 3
    assert res.steps == ref_res.steps == 15
    assert _same_weights(ref, resumed)
    assert res.losses == ref_res.losses  # the loss history is carried over the interruption


def test_max_steps_then_continue_matches_uninterrupted(tmp_path):
    x, y = _data()
    common = {k: v for k, v in COMMON.items() if k not in ("scheduler", "warmup")}
    ref = _model()
    fit(ref, (x, y), seed=1, **common)
    part = _model()
    r1 = fit(part, (x, y), seed=1, max_steps=8, checkpoint_dir=tmp_path, **common)
    assert r1.steps == 8 and 1 < r1.epochs < 2
    cont = _model(init_seed=99)
    r2 = fit(cont, (x, y), seed=1, checkpoint_dir=tmp_path, **common)
    assert r2.resumed_from == 8 and r2.steps == 15
    assert _same_weights(ref, cont)


def test_resume_check_is_not_vacuous(tmp_path):
    """The resume assertions above would fail if resume were broken: a fresh run with another seed, or one that
    ignores the checkpoint, ends with different weights."""
    x, y = _data()
    ref = _model()
    fit(ref, (x, y), seed=3, **COMMON)

    with pytest.raises(TrainingInterrupted):
        fit(
            _model(),
            (x, y),
            seed=3,
            checkpoint_dir=tmp_path,
            checkpoint_every=3,
            callback=_interrupt_at(7),
            **COMMON,
        )
    ignored = _model(init_seed=123)
    fit(ignored, (x, y), seed=3, checkpoint_dir=tmp_path / "other", resume=False, **COMMON)
    assert not _same_weights(ref, ignored)  # starting over from another init does not reproduce the run

    other_seed = _model()
    fit(other_seed, (x, y), seed=4, **COMMON)
    assert not _same_weights(ref, other_seed)  # the seed matters (data order, dropout)


def test_resume_with_different_config_is_refused(tmp_path):
    x, y = _data()
    fit(_model(), (x, y), seed=0, max_steps=3, checkpoint_dir=tmp_path, **COMMON)
    with pytest.raises(InputValidationError, match="resume=False"):
        fit(_model(), (x, y), seed=1, checkpoint_dir=tmp_path, **COMMON)


def test_same_seed_same_predictions():
    x, y = _data()
    preds = []
    for _ in range(2):
        m = _model()
        fit(m, (x, y), seed=5, **COMMON)
        preds.append(predict(m, x, device="cpu"))
    assert np.array_equal(preds[0], preds[1])
    m = _model()
    fit(m, (x, y), seed=6, **COMMON)
    assert not np.array_equal(preds[0], predict(m, x, device="cpu"))


def test_zero_weight_sample_has_no_effect():
    x, y = _data()
    w = np.ones(N, dtype=np.float32)
    w[[0, 40, 77]] = 0.0
    x2, y2 = x.copy(), y.copy()
    x2[[0, 40, 77]] = 100.0 * np.random.default_rng(1).normal(size=(3, D))  # garbage inputs and labels
    y2[[0, 40, 77]] = (y[[0, 40, 77]] + 1) % C
    a, b = _model(), _model()
    fit(a, (x, y, w), seed=0, **COMMON)
    fit(b, (x2, y2, w), seed=0, **COMMON)
    assert _same_weights(a, b)
    c = _model()  # control: with weight 1 the same garbage changes the result
    fit(c, (x2, y2, np.ones(N, np.float32)), seed=0, **COMMON)
    assert not _same_weights(a, c)


def test_zero_weight_equals_dropping_the_sample_full_batch():
    """With Σwℓ/Σw and one full batch, a zero-weight sample is the same as no sample (up to float rounding)."""
    x, y = _data(40)
    w = np.ones(40, np.float32)
    w[5] = 0.0
    keep = np.arange(40) != 5
    a, b = _model(), _model()
    opts = dict(
        epochs=5, batch_size=64, lr=1e-2, progress=False, device="cpu", weight_reduction="weighted_mean"
    )
    a = nn.Sequential(nn.Linear(D, 16), nn.ReLU(), nn.Linear(16, C))
    b = nn.Sequential(nn.Linear(D, 16), nn.ReLU(), nn.Linear(16, C))
    b.load_state_dict(a.state_dict())
    fit(a, (x, y, w), seed=0, **opts)
    fit(b, (x[keep], y[keep]), seed=0, **opts)
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb, rtol=1e-5, atol=1e-6)


def test_weights_scale_the_loss():
    x, y = _data(32)
    m = _model()
    r1 = fit(m, (x, y, np.full(32, 0.5, np.float32)), max_steps=1, batch_size=32, lr=0.0, progress=False)
    m = _model()
    r2 = fit(m, (x, y), max_steps=1, batch_size=32, lr=0.0, progress=False)
    assert r1.losses[0] == pytest.approx(0.5 * r2.losses[0], rel=1e-6)


def test_predict_order_and_batch_size_invariance():
    x, _ = _data()
    m = _model()
    m.train()
    full = predict(m, x, batch_size=N, device="cpu")
    assert m.training  # the previous mode is restored
    assert full.dtype == np.float32 and full.shape == (N, C)
    for bs in (1, 7, 64):
        np.testing.assert_allclose(predict(m, x, batch_size=bs, device="cpu"), full, rtol=1e-5, atol=1e-6)
    # order: predicting a permutation permutes the rows; single rows agree with the batch
    perm = np.random.default_rng(0).permutation(N)
    np.testing.assert_allclose(predict(m, x[perm], device="cpu"), full[perm], rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        m.eval()
        direct = m(torch.from_numpy(x[:5])).numpy()
    np.testing.assert_allclose(full[:5], direct, rtol=1e-5, atol=1e-6)
    # tuples, datasets and loaders give the same logits
    ds = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.zeros(N, dtype=torch.long))
    np.testing.assert_allclose(predict(m, ds, batch_size=50), full, rtol=1e-5, atol=1e-6)
    loader = torch.utils.data.DataLoader(ds, batch_size=33, shuffle=False)
    np.testing.assert_allclose(predict(m, loader), full, rtol=1e-5, atol=1e-6)


class _DictModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, input_ids, attention_mask):
        m = attention_mask.unsqueeze(-1).float()
        return self.out((self.emb(input_ids) * m).sum(1) / m.sum(1))


def test_dict_inputs_and_eval_history():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 20, size=(64, 6))
    mask = np.ones_like(ids)
    y = ((ids > 10).sum(1) >= 3).astype(np.int64)
    data = {"input_ids": ids, "attention_mask": mask, "labels": y}
    torch.manual_seed(0)
    m = _DictModel()
    res = fit(m, data, epochs=8, batch_size=16, lr=5e-2, eval_data=data, progress=False)
    assert [e["step"] for e in res.evals] == [4, 8, 12, 16, 20, 24, 28, 32]
    assert res.evals[-1]["accuracy"] > 0.8
    logits = predict(m, {"input_ids": ids, "attention_mask": mask})
    assert logits.shape == (64, 2)
    assert res.wall_time_s > 0 and res.epochs == 8.0


def test_checkpoint_files_are_atomic_and_pruned(tmp_path):
    x, y = _data()
    res = fit(
        _model(), (x, y), seed=0, checkpoint_dir=tmp_path, checkpoint_every=2, keep_checkpoints=2, **COMMON
    )
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["ckpt_step000000014.pt", "ckpt_step000000015.pt"]  # latest few; no temporary files left
    ck = torch.load(res.checkpoint, weights_only=True)
    assert ck["step"] == 15 and ck["epoch"] == 3 and ck["batch_in_epoch"] == 0
    # a finished run resumes to itself without training
    again = fit(_model(), (x, y), seed=0, checkpoint_dir=tmp_path, checkpoint_every=2, **COMMON)
    assert again.resumed_from == 15 and again.steps == 15


def test_seed_everything_and_device():
    seed_everything(11)
    a = torch.rand(3), np.random.rand()
    seed_everything(11)
    b = torch.rand(3), np.random.rand()
    assert torch.equal(a[0], b[0]) and a[1] == b[1]
    assert get_device("cpu").type == "cpu"
    assert get_device().type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_bad_arguments_raise():
    x, y = _data()
    with pytest.raises(InputValidationError, match="optimizer"):
        fit(_model(), (x, y), optimizer="lbfgs", progress=False)
    with pytest.raises(InputValidationError, match="same length"):
        fit(_model(), (x, y[:-1]), progress=False)
    with pytest.raises(InputValidationError, match="labels"):
        fit(_model(), torch.from_numpy(x), progress=False)


def test_dataloader_input_resumes_by_skipping_seen_batches(tmp_path):
    """An iterable of batches (here a non-shuffling DataLoader) is re-iterated and the seen batches are skipped."""
    x, y = _data()
    ds = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=False)
    opts = {k: v for k, v in COMMON.items() if k != "batch_size"}
    ref = _model()
    ref_res = fit(ref, loader, seed=2, **opts)
    assert ref_res.steps == 15
    with pytest.raises(TrainingInterrupted):
        fit(
            _model(),
            loader,
            seed=2,
            checkpoint_dir=tmp_path,
            checkpoint_every=4,
            callback=_interrupt_at(6),
            **opts,
        )
    resumed = _model(init_seed=5)
    res = fit(resumed, loader, seed=2, checkpoint_dir=tmp_path, checkpoint_every=4, **opts)
    assert res.resumed_from == 4 and _same_weights(ref, resumed)


def test_in_length_order_returns_outputs_in_input_order():
    from helpers.training import in_length_order

    texts = ["ccc", "a", "bb", "dddd", "e"]
    seen = []

    def fn(batch):
        seen.append(list(batch))
        return {"n": np.array([len(t) for t in batch]), "first": np.array([t[0] for t in batch])}

    out = in_length_order(fn, texts)
    assert seen == [["a", "e", "bb", "ccc", "dddd"]]  # stable sort by length
    assert out["n"].tolist() == [3, 1, 2, 4, 1] and out["first"].tolist() == ["c", "a", "b", "d", "e"]
    assert in_length_order(lambda b: np.array([len(t) for t in b]), texts).tolist() == [3, 1, 2, 4, 1]
