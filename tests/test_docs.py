"""The front door: a short README whose links resolve, the reports' generated blocks, the published notebooks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from helpers.estimators import list_estimators
from helpers.paths import REPO_ROOT
from helpers.publish.reports import HEADLINES, NUMBERS_BEGIN, NUMBERS_END, REPORTS, headline_values

DOCS = REPO_ROOT / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(md: Path) -> set[str]:
    """GitHub-style anchors of the headings of a Markdown file."""
    out = set()
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def _pages() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_readme_is_a_short_guide():
    assert len((REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_relative_link_resolves(page):
    bad = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if path and not dest.exists():
            # a published notebook appears with the first publish after a complete default run
            if not (dest.parent == (DOCS / "notebooks").resolve() and dest.suffix == ".ipynb"):
                bad.append(target)
            continue
        if anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(target)
    assert not bad, f"{page.name}: links that do not resolve: {bad}"


def test_every_report_has_a_numbers_block_for_its_notebook():
    for stem, (report, _) in REPORTS.items():
        if not report:
            continue
        text = (DOCS / "reproductions" / report).read_text(encoding="utf-8")
        blocks = NUMBERS_BEGIN.findall(text)
        assert blocks == [stem] and NUMBERS_END in text, report


def test_every_registered_estimator_is_documented():
    text = (DOCS / "estimators.md").read_text(encoding="utf-8")
    missing = [n for n in list_estimators() if f"| `{n}` |" not in text]
    assert not missing, f"docs/estimators.md lacks {missing}"


def test_published_notebooks_have_outputs_and_the_published_headline_numbers():
    published = sorted((DOCS / "notebooks").glob("*.ipynb"))
    if not published:
        pytest.skip("no published notebooks yet (python -m helpers publish after a complete default run)")
    summary = pd.read_csv(REPO_ROOT / "figures" / "summary.csv", keep_default_na=False, na_values=[""])
    heads = headline_values(summary)
    for path in published:
        nb = json.loads(path.read_text(encoding="utf-8"))
        outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
        assert outputs, f"{path.name} has no outputs"
        assert any("image/png" in (o.get("data") or {}) for o in outputs) or path.stem == "00_example", path.name
        assert path.stat().st_size < 5_000_000
        meta = nb["metadata"]["helpers"]["published"]
        if path.stem in HEADLINES:
            assert meta["headline"] == pytest.approx(heads[path.stem]), path.name
