"""The paired-batch DANN / T_RM / Proxy Risk loops: steps per epoch, α, weights of D ∪ R, the constraint."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import helpers.selftraining.adversarial as adv
from helpers.errors import InputValidationError
from helpers.models.dann import DANN, dann_alpha
from helpers.selftraining.adversarial import domain_source_weights, proxy_risk_finetune, train_dann_paired

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _dann(alpha_max=1.0) -> DANN:
    torch.manual_seed(0)
    return DANN(
        nn.Sequential(nn.Linear(2, 8), nn.ReLU()), nn.Linear(8, 2), nn.Linear(8, 2), alpha_max=alpha_max
    )


def _blobs(n, shift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    x = (rng.normal(size=(n, 2)) * 0.5 + np.where(y[:, None] == 1, 1.0, -1.0) + shift).astype(np.float32)
    return x, y


class _Counting(DANN):
    """A DANN that counts forward passes and records α at each one."""

    def forward_all(self, x):
        self.calls = getattr(self, "calls", 0) + 1
        self.rows = [*getattr(self, "rows", []), len(x)]
        self.alphas = [*getattr(self, "alphas", []), self.grl.alpha]
        return super().forward_all(x)


def _counting(alpha_max=1.0) -> _Counting:
    base = _dann(alpha_max)
    return _Counting(
        base.feature_extractor, base.label_classifier, base.domain_classifier, alpha_max=alpha_max
    )


def test_domain_source_weights_hand_computed():
    s, p = domain_source_weights(3, 2, 0.1)
    np.testing.assert_allclose(s, [1, 1, 1, 0, 0])
    np.testing.assert_allclose(p, [1, 1, 1, 0.1, 0.1], rtol=1e-6)
    with pytest.raises(InputValidationError):
        domain_source_weights(3, 2, -1.0)


@pytest.mark.parametrize(("steps", "per_epoch"), [("min", 3), ("max", 5)])
def test_one_source_and_one_target_batch_per_step(steps, per_epoch):
    xs, ys = _blobs(40)  # 5 batches of 8
    xt, _ = _blobs(24, shift=1.0, seed=1)  # 3 batches of 8
    m = _counting()
    epochs_seen = []
    train_dann_paired(
        m,
        xs,
        ys,
        xt,
        epochs=2,
        batch_size=8,
        lr=1e-3,
        seed=0,
        steps=steps,
        on_epoch_end=lambda e, _: epochs_seen.append(e),
    )
    assert m.calls == 2 * per_epoch  # one joint forward pass over the source and the target batch per step
    assert set(m.rows) == {16}
    assert epochs_seen == [0, 1]


def test_alpha_ramps_when_pretraining_and_stays_at_alpha_max_when_fine_tuning():
    xs, ys = _blobs(16)
    xt, _ = _blobs(16, shift=1.0, seed=1)
    m = _counting(alpha_max=0.5)
    train_dann_paired(m, xs, ys, xt, epochs=2, batch_size=8, lr=1e-3, seed=0, schedule=True)
    total = 4
    expected = [dann_alpha(i / total, alpha_max=0.5) for i in range(total)]
    np.testing.assert_allclose(m.alphas, expected)
    m2 = _counting(alpha_max=0.5)
    train_dann_paired(m2, xs, ys, xt, epochs=1, batch_size=8, lr=1e-3, seed=0, schedule=False, steps="max")
    assert set(m2.alphas) == {0.5}


def test_pseudo_labelled_rows_get_gamma_class_weight_and_no_domain_loss(monkeypatch):
    """With one batch holding all of D ∪ R and all of U, the first step's loss equals eq. 4 written out."""
    xs, ys = _blobs(4)
    xt, _ = _blobs(4, shift=1.0, seed=1)
    rx, ry = xt[:2], np.array([1, 0])
    seen = {}
    real = adv._ce

    def spy(logits, target):
        out = real(logits, target)
        seen.setdefault("terms", []).append(out.detach())
        return out

    monkeypatch.setattr(adv, "_ce", spy)
    m = _dann()
    ref = _dann()
    train_dann_paired(
        m,
        xs,
        ys,
        xt,
        pseudo_x=rx,
        pseudo_y=ry,
        gamma=0.25,
        epochs=1,
        batch_size=6,
        lr=1e-3,
        seed=0,
        schedule=False,
        steps="max",
    )
    # recompute by hand on the initial model, in the loop's row order
    g = torch.Generator().manual_seed(0)
    order = torch.randperm(6, generator=g)
    gt = torch.Generator().manual_seed(1_000_003)
    order_t = torch.randperm(4, generator=gt)
    x_all = torch.from_numpy(np.concatenate([xs, rx]))[order]
    y_all = torch.from_numpy(np.concatenate([ys, ry]))[order]
    s = torch.tensor([1, 1, 1, 1, 0, 0.0])[order]
    p = s + 0.25 * (1 - s)
    ref.grl.alpha = 1.0
    c_s, d_s = ref.forward_all(x_all)
    _, d_t = ref.forward_all(torch.from_numpy(xt)[order_t])
    hand = (
        F.cross_entropy(d_t, torch.ones(4, dtype=torch.int64))
        + (s * F.cross_entropy(d_s, torch.zeros(6, dtype=torch.int64), reduction="none")).mean()
        + (p * F.cross_entropy(c_s, y_all, reduction="none")).mean()
    )
    t_dom, s_dom, s_cls = seen["terms"][:3]
    loop = t_dom.mean() + (s * s_dom).mean() + (p * s_cls).mean()
    assert loop.item() == pytest.approx(hand.item(), rel=1e-5)


def test_steps_must_be_min_or_max():
    xs, ys = _blobs(8)
    with pytest.raises(InputValidationError):
        train_dann_paired(_dann(), xs, ys, xs, epochs=1, batch_size=4, lr=1e-3, seed=0, steps="mean")


def test_proxy_risk_constraint_and_selection():
    xs, ys = _blobs(40)
    xh, yh = _blobs(20, seed=3)
    xt, _ = _blobs(30, shift=0.5, seed=1)
    pf = np.tile([[0.9, 0.1]], (30, 1)).astype(np.float32)
    m = _dann(alpha_max=0.1)
    train_dann_paired(m, xs, ys, xt, epochs=3, batch_size=8, lr=1e-2, seed=0)
    # the constraint value by hand: 0-1 error on D^test + α·(domain CE on D^test + domain CE on U)
    with torch.no_grad():
        c_h, d_h = m.forward_all(torch.from_numpy(xh))
        _, d_t = m.forward_all(torch.from_numpy(xt))
    hand = float((c_h.argmax(1).numpy() != yh).mean()) + 0.1 * (
        float(F.cross_entropy(d_h, torch.zeros(20, dtype=torch.int64)))
        + float(F.cross_entropy(d_t, torch.ones(30, dtype=torch.int64)))
    )
    out0 = proxy_risk_finetune(m, pf, xs, ys, xt, xh, yh, epochs=0, alpha=0.1)
    assert out0["epsilon0"] == pytest.approx(hand, rel=1e-5) and out0["epoch"] == 0
    out = proxy_risk_finetune(m, pf, xs, ys, xt, xh, yh, epochs=3, alpha=0.1, lr=1e-2, batch_size=8)
    assert out["epsilon"] == pytest.approx(1.1 * out["epsilon0"])
    assert len(out["history"]) == 3
    ok = [h for h in out["history"] if h["constraint"] <= out["epsilon"]]
    if out["epoch"] > 0:  # the kept epoch meets the constraint and has the largest disagreement among those
        kept = out["history"][out["epoch"] - 1]
        assert kept["constraint"] <= out["epsilon"]
        assert kept["disagreement"] == max(h["disagreement"] for h in ok)
    assert out["check_predictions"].shape == (30,)
    with pytest.raises(InputValidationError):
        proxy_risk_finetune(m, pf[:5], xs, ys, xt, xh, yh, epochs=1)
