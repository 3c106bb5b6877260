"""GdScore (Xie et al., TMLR 2025): the closed form is the autograd gradient, the pseudo-label rule, and the model
read without a side effect (evaluation mode; parameters, buffers and modes unchanged)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.estimators import check_estimator, get_estimator
from helpers.estimators.gdscore import GdScore, _pseudo_labels, gdscore, gdscore_inputs


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def test_the_closed_form_is_the_gradient_of_the_mean_cross_entropy():
    model = _model().eval()
    x = torch.randn(64, 5)
    h = model[:3](x).detach()
    z = model[3](h)
    pseudo = _pseudo_labels(torch.softmax(z, 1).detach().numpy(), 0.5, 0)
    loss = nn.functional.cross_entropy(z, torch.as_tensor(pseudo))
    (grad,) = torch.autograd.grad(loss, model[3].weight)
    want = float((grad.abs() ** 0.3).sum() ** (1 / 0.3))
    assert gdscore(h.numpy(), z.detach().numpy()) == pytest.approx(want, rel=1e-5)


def test_low_confidence_rows_get_a_seeded_random_class():
    p = np.array([[0.9, 0.05, 0.05], [0.4, 0.35, 0.25], [0.2, 0.7, 0.1]] * 50)
    a, b = _pseudo_labels(p, 0.5, 0), _pseudo_labels(p, 0.5, 0)
    assert np.array_equal(a, b) and (a[0::3] == 0).all() and (a[2::3] == 1).all()
    assert len(set(a[1::3])) == 3  # the uncertain rows: uniform over the classes, not their argmax


def test_the_model_is_read_without_any_side_effect():
    """The released code runs the model in training mode: BatchNorm would normalise with, and learn its running
    statistics from, the target.  Here parameters, buffers and every module's mode are the same afterwards."""
    model = _model().train()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    modes = [m.training for m in model.modules()]
    x = torch.randn(100, 5) * 3 + 1
    est = GdScore(model=model).fit(logits=np.zeros((2, 3)))
    score = est.measure(inputs=x).score
    assert np.isfinite(score) and [m.training for m in model.modules()] == modes
    for k, v in model.state_dict().items():
        assert torch.equal(v, state[k]), k
    # what this guards against: the same data through the model in training mode moves the BatchNorm statistics
    model(x)
    assert not torch.equal(model[1].running_mean, state["1.running_mean"])
    # and the score from the model equals the score of its evaluation-mode arrays
    model.load_state_dict(state)
    arrays = gdscore_inputs(model, x)
    assert GdScore().measure(**arrays).score == pytest.approx(score, rel=1e-12)


def test_gdscore_keeps_the_estimator_contract_and_refuses_missing_inputs():
    assert check_estimator(get_estimator("gdscore"))["passed"].all()
    z = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(InputValidationError, match="^features: GdScore needs"):
        GdScore().measure(logits=z)
    with pytest.raises(InputValidationError, match="^inputs: GdScore reads inputs through its model"):
        GdScore().measure(inputs=np.zeros((4, 5)))
    with pytest.raises(InputValidationError, match="^features: expected 20 rows"):
        GdScore().measure(logits=z, features=np.zeros((19, 4)))
