"""Published notebooks carry no machine paths, PosixPath reprs, warnings, record dicts or overlong outputs."""

import json

import pytest

from helpers.paths import REPO_ROOT
from helpers.publish.clean import MAX_OUTPUT_CHARS, clean_outputs, output_problems

ROOTS = {"/home/someone/project/.venv": "<venv>", "/home/someone/project": "<repo>"}


def _stream(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": [text]}


def _result(text):
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": [text]}}


def test_clean_outputs_drops_and_scrubs_what_a_reader_should_not_see():
    outputs = [
        _result("[PosixPath('/home/someone/project/runs/default/x/figures/a.png')]"),  # save_figure's return
        _result("{'notebook': '05_mde', 'name': 'mae_pp', 'value': 3.1, 'unit': 'pp'}"),  # a record dict
        _stream("/home/someone/project/.venv/lib/dask/base.py:1: UserWarning: Sending large graph\n", "stderr"),
        _stream("fit:  40%|####      | 4/10 [00:01<00:01, 3.1it/s]\r", "stderr"),
        _stream("findfont: Font family ['cmr10'] not found. Falling back to DejaVu Sans.\n", "stderr"),  # a log line
        _stream("wrote PosixPath('/home/someone/project/figures/t.md') in 2.0 s\n"),
        _stream("x" * (MAX_OUTPUT_CHARS + 1000)),
        _result("accuracy 0.81"),
    ]
    kept = clean_outputs(outputs, ROOTS)
    texts = ["".join(o.get("text") or o["data"]["text/plain"]) for o in kept]
    assert texts[0] == "wrote '<repo>/figures/t.md' in 2.0 s\n"
    assert texts[1].startswith("x" * 100) and "characters in all" in texts[1] and len(texts[1]) < MAX_OUTPUT_CHARS + 200
    assert texts[2] == "accuracy 0.81" and len(kept) == 3
    nb = {"cells": [{"cell_type": "code", "outputs": outputs}]}
    assert len(output_problems(nb, ROOTS)) >= 5  # the uncleaned outputs are caught by the check
    assert output_problems({"cells": [{"cell_type": "code", "outputs": kept}]}, ROOTS) == []


def test_the_published_notebooks_are_clean():
    published = sorted((REPO_ROOT / "docs" / "notebooks").glob("*.ipynb"))
    if not published:
        pytest.skip("no published notebooks yet")
    bad = {p.name: output_problems(json.loads(p.read_text(encoding="utf-8"))) for p in published}
    assert not {k: v for k, v in bad.items() if v}, bad
