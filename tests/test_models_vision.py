"""helpers.models: digit CNNs, CIFAR ResNets (shipped weights, strict load, JPEG test accuracy), MLP, registry."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.errors import DataNotFoundError, InputValidationError, UnknownNameError
from helpers.models import available_models, build_model
from helpers.models.resnet_cifar import CifarResNet, cifar_preprocess, load_cifar_resnet

try:
    from conftest import shared_data_dir
except ImportError:  # pragma: no cover
    shared_data_dir = None


def _data_root():
    from helpers.paths import data_dir

    root = data_dir()
    if not (root / "vision" / "cifar10_resnets").is_dir() and shared_data_dir is not None:
        root = shared_data_dir()
    if root is None or not (root / "vision" / "cifar10_resnets").is_dir():
        pytest.skip("CIFAR data not available (set HELPERS_DATA)")
    return root


def test_registry_names_and_unknown_name():
    names = available_models()
    for n in (
        "cnn",
        "cnn_bn",
        "resnet20",
        "resnet56",
        "dann_digits",
        "dann_mlp",
        "bow",
        "embsum",
        "textcnn",
        "lstm",
        "minilm",
        "mlp",
        "tfidf_mlp",
    ):
        assert n in names
    with pytest.raises(UnknownNameError, match="cnn_bn"):
        build_model("no_such_model")


@pytest.mark.parametrize("name", ["cnn", "cnn_bn"])
def test_small_cnn_shapes_and_split(name):
    m = build_model(name, num_classes=10)
    x = torch.rand(5, 64)
    assert m(x).shape == (5, 10)
    assert m(x.view(5, 8, 8)).shape == (5, 10) and m(x.view(5, 1, 8, 8)).shape == (5, 10)
    assert m.features(x).shape == (5, m.feature_dim)
    torch.testing.assert_close(m.classifier(m.feature_extractor(x)), m(x))
    has_bn = any(isinstance(mod, torch.nn.BatchNorm2d) for mod in m.modules())
    assert has_bn == (name == "cnn_bn")
    usps = build_model(name, image_size=16)
    assert usps(torch.rand(3, 256)).shape == (3, 10)
    with pytest.raises(InputValidationError, match="values per image"):
        m(torch.rand(2, 256))


def test_mlp_shapes():
    m = build_model("tfidf_mlp", in_features=50)
    n_linear = sum(isinstance(mod, torch.nn.Linear) for mod in m.modules())
    assert n_linear == 4 and m.classifier.in_features == 128
    assert m(torch.rand(4, 50)).shape == (4, 2) and m.features(torch.rand(4, 50)).shape == (4, 128)


@pytest.mark.parametrize("depth,blocks", [(20, 3), (32, 5), (44, 7), (56, 9)])
def test_resnet_shapes(depth, blocks):
    m = CifarResNet(depth)
    assert len(m.layer1) == len(m.layer2) == len(m.layer3) == blocks
    x = torch.randn(2, 3, 32, 32)
    m.eval()
    assert m(x).shape == (2, 10) and m.features(x).shape == (2, 64)


def test_cifar_preprocess():
    x = np.zeros((2, 32, 32, 3), np.uint8)
    x[..., 0] = 255
    t = cifar_preprocess(x)
    assert t.shape == (2, 3, 32, 32) and t.dtype == torch.float32
    torch.testing.assert_close(t[0, 0, 0, 0], torch.tensor((1 - 0.485) / 0.229))
    torch.testing.assert_close(t[0, 1, 0, 0], torch.tensor(-0.456 / 0.224))
    with pytest.raises(InputValidationError, match="uint8"):
        cifar_preprocess(x.astype(np.float32))


def test_resnet_load_is_strict(tmp_path):
    root = _data_root()
    src = next((root / "vision" / "cifar10_resnets").glob("resnet20-*.th"))
    ck = torch.load(src, map_location="cpu", weights_only=True)
    assert all(k.startswith("module.") for k in ck["state_dict"])
    # a checkpoint with one tensor missing must not load silently
    bad = dict(ck)
    bad["state_dict"] = {k: v for k, v in ck["state_dict"].items() if not k.endswith("linear.bias")}
    (tmp_path / "vision" / "cifar10_resnets").mkdir(parents=True)
    torch.save(bad, tmp_path / "vision" / "cifar10_resnets" / "resnet20-broken.th")
    with pytest.raises(RuntimeError, match="linear.bias"):
        load_cifar_resnet(20, data_dir=tmp_path)
    with pytest.raises(DataNotFoundError, match="resnet32"):
        load_cifar_resnet(32, data_dir=tmp_path)


def test_resnet20_accuracy_on_stratified_jpeg_subset():
    root = _data_root()
    d = np.load(root / "vision" / "cifar10_test_jpeg.npz")
    x, y = d["x"], d["y"]
    idx = np.concatenate([np.flatnonzero(y == c)[:100] for c in range(10)])  # 100 per class
    from helpers.training import predict

    model = load_cifar_resnet(20, data_dir=root)
    assert not model.training and model.reported_accuracy == pytest.approx(0.9178)
    logits = predict(model, cifar_preprocess(x[idx]), batch_size=250, device="cpu")
    acc = float((logits.argmax(1) == y[idx]).mean())
    assert abs(acc - 0.8103) < 0.03, acc
    feats = model.features(cifar_preprocess(x[idx[:4]]))
    assert feats.shape == (4, 64) and bool((feats >= 0).all())  # post-ReLU average pool


def test_build_model_seed_reproduces_initial_weights_across_processes():
    """torch seeds its global generator randomly per process: without ``seed`` two runs start from other weights."""
    import subprocess
    import sys

    import torch

    from helpers.models import build_model

    code = (
        "import torch; from helpers.models import build_model; "
        "m = build_model('cnn', seed=3); print(repr(float(sum(p.detach().double().sum() for p in m.parameters()))))"
    )
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(outs) == 1
    a, b = build_model("cnn", seed=3), build_model("cnn", seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert repr(float(sum(p.detach().double().sum() for p in a.parameters()))) + "\n" in outs
    c = build_model("cnn", seed=4)
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))
    # the caller's global RNG stream is untouched by a seeded build
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    build_model("cnn", seed=5)
    assert torch.equal(torch.rand(3), expected)
