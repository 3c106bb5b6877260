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
    assert runs.training_code() in path.parts  # a change of the training code moves every checkpoint
    monkeypatch.setattr(runs, "training_code", lambda: "other-code")
    assert runs._ckpt(pair, "f", "s0") != path


def test_cached_arrays_with_code_recomputes_after_an_edit(tmp_path, monkeypatch):
    from helpers import cache
    from helpers.errors import InputValidationError

    (tmp_path / "fp_stage.py").write_text("V = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(3)}

    cached_arrays("staged", {"k": 1}, compute, code=("fp_stage",))
    cached_arrays("staged", {"k": 1}, compute, code=("fp_stage",))
    assert len(calls) == 1  # same code: read back
    (tmp_path / "fp_stage.py").write_text("V = 2\n")
    cached_arrays("staged", {"k": 1}, compute, code=("fp_stage",))
    assert len(calls) == 1  # code_version is computed once per process (the code this process imported)
    cache.code_version.cache_clear()  # a new process after the edit
    cached_arrays("staged", {"k": 1}, compute, code=("fp_stage",))
    assert len(calls) == 2
    cached_arrays("staged", {"k": 1}, compute)  # without code= the key is the plain parts: another entry
    assert len(calls) == 3
    with pytest.raises(InputValidationError, match="at least one module"):
        cache.code_version()


def test_every_cached_stage_is_keyed_by_its_code(monkeypatch):
    """The keys of notebook 01's parser and discriminators, 02's runs, 04's models, 05's checkpoints and 05's model
    outputs change with the code that computes them."""
    from helpers import cache
    from helpers.experiments.p1_bounds import Seq2SeqTask
    from helpers.experiments.p1_bounds import pipeline as p1
    from helpers.experiments.p5_mde import setups

    task = Seq2SeqTask("toy", train=[("a b", "A B")], dev=[("a", "A")], test_sets={}, shift={}, max_new_tokens=4)
    before = p1.parser_cache(task, p1.PipelineConfig())[1:]
    ck_before = setups._code()
    real = cache.code_version

    def edited(*modules):
        return "edited-" + real(*modules)[:8]

    monkeypatch.setattr(p1, "code_version", edited)
    assert p1.parser_cache(task, p1.PipelineConfig())[1:] != before  # key and checkpoint folder move
    monkeypatch.setattr(cache, "code_version", edited)
    assert setups._code() != ck_before
