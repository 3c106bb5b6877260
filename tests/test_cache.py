from __future__ import annotations

import numpy as np

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
