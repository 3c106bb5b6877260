"""The examples a user copies: every ``>>>`` line of the package (doctest) and every ``python`` block of the README
and ``docs/`` runs, on synthetic logits bound to the names the blocks use (``val_logits``, ``target_logits``, ...).

A block may elide with ``...`` inside a literal (``{"blur": ..., ...}``); the elision is dropped before it runs.
"""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
HELPERS = REPO / "helpers"
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    out = []
    for path in sorted(HELPERS.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(REPO).with_suffix("").parts
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


@pytest.mark.parametrize("module", _modules_with_examples())
def test_the_docstring_examples_run(module):
    mod = importlib.import_module(module)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(mod, module) if t.examples]
    assert tests, f"{module}: '>>>' in the source but no example found"
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{module}: {result.failed} of {result.attempted} examples failed (see the output)"


def _blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def _namespace() -> dict:
    """The arrays the examples name: a 4-class model whose shifted sets lose accuracy step by step."""
    from helpers.benchmark import ShiftTask
    from helpers.estimators.examples import MeanMaxProb

    rng = np.random.default_rng(0)

    def labelled(n: int, noise: float):
        y = rng.integers(0, 4, n)
        z = rng.normal(scale=noise, size=(n, 4)).astype(np.float32)
        z[np.arange(n), y] += 2.0
        return z, y

    ns: dict = {}
    for name, noise in (("val", 1.0), ("target", 1.6), ("blur", 1.3), ("noise", 1.9), ("jpeg", 1.5), ("new", 1.4)):
        ns[f"{name}_logits"], ns[f"{name}_labels"] = labelled(300, noise)
    ns["more_shifted"] = {f"shift{i}": labelled(300, 1.2 + 0.1 * i) for i in range(7)}  # 10 sets with the 3 above
    ns["family_of"] = {name: f"family{i % 5}" for i, name in enumerate(["blur", "noise", "jpeg", *ns["more_shifted"]])}
    meta = {f"m{i}": labelled(200, 1.0 + 0.25 * i) for i in range(4)}
    # three candidate models on the same target rows and the same labelled reference (the README's ranking)
    y_target, y_ref = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    ns["ref_labels"] = y_ref
    for name, skill in (("20", 1.0), ("56", 1.6), ("_vit", 2.2)):
        ns[f"z{name}"] = (rng.normal(size=(300, 4)) + 0.7 * skill * np.eye(4)[y_target]).astype(np.float32)
        ns[f"ref{name}"] = (rng.normal(size=(300, 4)) + skill * np.eye(4)[y_ref]).astype(np.float32)
    ns["task"] = ShiftTask("yours", "byod", (ns["val_logits"], ns["val_labels"]),
                           {"target": (ns["target_logits"], ns["target_labels"])}, meta=meta)  # fmt: skip

    class MyEstimator(MeanMaxProb):  # the README's "your own method": the public base's pattern, mean max-softmax
        name = "mine"

    ns["MyEstimator"] = MyEstimator
    return ns


@pytest.mark.parametrize("path", [p for p in DOC_FILES if _blocks(p)], ids=lambda p: p.name)
def test_the_documentation_examples_run(path, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from helpers.estimators.registry import ESTIMATORS

    monkeypatch.chdir(tmp_path)  # files an example writes (np.savez(...)) land here
    ns = _namespace()
    registered_before = set(importlib.import_module("helpers.estimators").list_estimators())
    try:
        for i, block in enumerate(_blocks(path)):
            code = re.sub(r",\s*\.\.\.\s*(?=[}\]])", "", block)  # {"a": x, ...} -> {"a": x}
            try:
                exec(compile(code, f"{path.name}[python block {i + 1}]", "exec"), ns)
            except Exception as exc:  # noqa: BLE001 - re-raised with the block that failed
                raise AssertionError(f"{path.name}, python block {i + 1} failed: {exc!r}\n{block}") from exc
    finally:
        plt.close("all")
        for name in set(importlib.import_module("helpers.estimators").list_estimators()) - registered_before:
            ESTIMATORS.unregister(name)
