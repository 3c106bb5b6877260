"""helpers.models.dann: gradient reversal, α schedule, DANN wrapper and loss inside helpers.training.fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from helpers.models import build_model
from helpers.models.dann import (
    DANN,
    IGNORE_LABEL,
    DANNLoss,
    GradientReversal,
    dann_alpha,
    grad_reverse,
    mlp_head,
)
from helpers.models.vision import SmallCNN
from helpers.training import fit, predict


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1.0, 2.5])
def test_grl_reverses_and_scales_gradient(alpha):
    x = torch.randn(4, 3, requires_grad=True)
    upstream = torch.randn(4, 3)
    out = grad_reverse(x, alpha)
    assert torch.equal(out, x)  # identity forward
    out.backward(upstream)
    torch.testing.assert_close(x.grad, -alpha * upstream)
    x.grad = None
    GradientReversal(alpha)(x).backward(upstream)
    torch.testing.assert_close(x.grad, -alpha * upstream)


def test_dann_alpha_schedule():
    assert dann_alpha(0.0, alpha_max=0.1) == 0.0
    assert dann_alpha(1.0, alpha_max=0.1) == pytest.approx((2 / (1 + math.exp(-10)) - 1) * 0.1)
    assert dann_alpha(1.0) == pytest.approx(0.9999092, abs=1e-7)
    assert dann_alpha(0.5, alpha_max=1.0) == pytest.approx(2 / (1 + math.exp(-5)) - 1)
    vals = [dann_alpha(p) for p in np.linspace(0, 1, 11)]
    assert all(b > a for a, b in zip(vals, vals[1:]))
    assert dann_alpha(-1.0) == 0.0 and dann_alpha(2.0) == dann_alpha(1.0)  # clipped


def test_dann_wrapper_shapes_and_gradient_flow():
    base = SmallCNN(10, batch_norm=True)
    model = DANN.from_classifier(base, mlp_head(128, 64, 2, num_layers=3), alpha_max=0.1)
    x = torch.rand(6, 64)
    cls, dom = model.forward_all(x)
    assert cls.shape == (6, 10) and dom.shape == (6, 2)
    assert model.set_progress(0.0) == 0.0 and model.set_progress(1.0) == pytest.approx(0.1, rel=1e-3)
    # the domain loss reaches the feature extractor with reversed sign
    model.grl.alpha = 1.0
    model.eval()
    feat_param = model.feature_extractor[1].weight
    _, dom = model.forward_all(x)
    g_rev = torch.autograd.grad(dom.sum(), feat_param)[0]
    z = model.feature_extractor(x)
    g_plain = torch.autograd.grad(model.domain_classifier(z).sum(), feat_param)[0]
    torch.testing.assert_close(g_rev, -g_plain)
    assert build_model("dann_digits").alpha_max == 0.1
    amazon = build_model("dann_mlp", in_features=30)
    assert sum(isinstance(m, torch.nn.Linear) for m in amazon.domain_classifier.modules()) == 7
    assert amazon(torch.rand(3, 30)).shape == (3, 2)


def test_dann_trains_with_fit():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(120, 64)).astype(np.float32)
    ys = (xs[:, 0] > 0).astype(np.int64)
    xt = (rng.normal(size=(80, 64)) + 0.5).astype(np.float32)
    x = np.concatenate([xs, xt])
    y = np.concatenate([ys, np.full(80, IGNORE_LABEL)])
    w = np.ones(200, np.float32)
    dom = np.concatenate([np.zeros(120), np.ones(80)]).astype(np.int64)
    dw = np.ones(200, np.float32)
    torch.manual_seed(0)
    model = build_model("dann_digits", num_classes=2)
    alphas = []
    res = fit(
        model,
        (x, y, w, dom, dw),
        epochs=2,
        batch_size=20,
        compute_loss=DANNLoss(),
        progress=False,
        callback=lambda s: alphas.append(s.model.grl.alpha),
    )
    assert res.steps == 20 and all(np.isfinite(res.losses))
    assert alphas[0] == 0.0 and 0.09 < alphas[-1] <= 0.1 and alphas == sorted(alphas)
    logits = predict(model, xs)
    assert logits.shape == (120, 2) and (logits.argmax(1) == ys).mean() > 0.8
