from __future__ import annotations

import numpy as np
import pytest

from helpers.cache import cache_key, cache_path, cached_arrays


def test_key_depends_on_every_part():
    a = np.arange(5)
    base = cache_key({"model": "m", "data": a, "T": 1.0})
    assert base == cache_key({"T": 1.0, "data": np.arange(5), "model": "m"})  # order-free, content-based
    assert base != cache_key({"model": "m", "data": a + 1, "T": 1.0})
    assert base != cache_key({"model": "m", "data": a, "T": 2.0})
    assert base != cache_key({"model": "m", "data": a.astype(np.int32), "T": 1.0})


def test_cached_arrays_computes_once():
    calls = []

    def compute():
        calls.append(1)
        return {"logits": np.ones((3, 2), dtype=np.float32)}

    first = cached_arrays("logits", {"k": 1}, compute)
    second = cached_arrays("logits", {"k": 1}, compute)
    assert len(calls) == 1
    np.testing.assert_array_equal(first["logits"], second["logits"])
    assert second["logits"].dtype == np.float32
    cached_arrays("logits", {"k": 1}, compute, refresh=True)
    assert len(calls) == 2


def test_failed_compute_leaves_no_entry():
    def boom():
        raise RuntimeError("interrupted")

    try:
        cached_arrays("logits", {"k": 2}, boom)
    except RuntimeError:
        pass
    assert not cache_path("logits", {"k": 2}).exists()


def test_source_fingerprint_follows_the_code(tmp_path, monkeypatch):
    from helpers.cache import source_fingerprint
    from helpers.errors import InputValidationError

    pkg = tmp_path / "fp_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "loop.py").write_text("def step():\n    return 1\n")
    (tmp_path / "fp_single.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = source_fingerprint("fp_pkg", "fp_single")
    assert before == source_fingerprint("fp_pkg", "fp_single")  # stable
    (pkg / "loop.py").write_text("def step():\n    return 2\n")  # a file inside the package changes
    after = source_fingerprint("fp_pkg", "fp_single")
    assert after != before
    (tmp_path / "fp_single.py").write_text("X = 2\n")  # a single module changes
    assert source_fingerprint("fp_pkg", "fp_single") != after
    with pytest.raises(InputValidationError, match="not an importable module"):
        source_fingerprint("no_such_module_here")


def test_self_training_checkpoints_are_keyed_by_the_training_code(monkeypatch):
    from types import SimpleNamespace

    from helpers.experiments.p3_selftraining import runs

    pair = SimpleNamespace(kind="digits")
    path = runs._ckpt(pair, "f", "s0")
    assert runs._code() in path.parts  # a change of the training code moves every checkpoint
    monkeypatch.setattr(runs, "_code", lambda: "other-code")
    assert runs._ckpt(pair, "f", "s0") != path
