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


LAB_LOG = {
    "an issue number": re.compile(r"(?<![&\w/])#\d{2,3}\b|\b[Ii]ssue \d+\b"),
    "a work item": re.compile(r"\bItem \d+\b"),
    "a run id": re.compile(r"\b20\d{6}-\d{6}\b"),
    "a commit hash": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}\b"),
    "session narration": re.compile(r"\b(?:[Tt]his|[Tt]he previous|the same|that) session\b"),
}
_GENERATED = re.compile(r"<!-- (?:numbers|results):begin.*?<!-- (?:numbers|results):end -->", re.S)


def _prose_files():
    yield REPO_ROOT / "README.md"
    yield from sorted((REPO_ROOT / "docs").rglob("*.md"))


def lab_log_lines(text: str) -> list[str]:
    """Lines of ``text`` outside generated blocks that carry an issue number, a work item, a run id or a hash."""
    text = _GENERATED.sub("", text)
    out = []
    for line in text.splitlines():
        for what, pattern in LAB_LOG.items():
            if pattern.search(line):
                out.append(f"{what}: {line.strip()[:120]}")
    return out


def _notebook_text(path) -> str:
    """A notebook's markdown cells and its code comments (what a reader reads as prose)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    parts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    parts += [line for c in cells if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines()
              if line.lstrip().startswith("#")]  # fmt: skip
    return "\n".join(parts)


def test_the_prose_is_documentation_not_a_lab_log():
    found = {p.relative_to(REPO_ROOT).as_posix(): lab_log_lines(p.read_text(encoding="utf-8")) for p in _prose_files()}
    found |= {p.name: lab_log_lines(_notebook_text(p)) for p in sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, found


def test_the_lab_log_check_catches_each_kind():
    text = ("Fixed in #54 (run `20261126-031336`, code of e122db7); Item 4 follows.\nThis session's cold run.\n"
            "<!-- numbers:begin x -->\n#12\n<!-- numbers:end -->")
    kinds = {line.split(":")[0] for line in lab_log_lines(text)}
    assert kinds == {"an issue number", "a work item", "a run id", "a commit hash", "session narration"}
    assert lab_log_lines("CIFAR-10 at 1,017 images, τ 2.33, R² .824, 2026-11-26") == []


def _markdown_cells(path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_numbers_in_the_prose_come_from_the_records():
    """Results in the README, docs/ and the notebooks' markdown are quoted or included from the records, never typed."""
    from helpers.publish.quotes import prose_files, unquoted_numbers

    found = {p.relative_to(REPO_ROOT).as_posix(): unquoted_numbers(p.read_text(encoding="utf-8"))
             for p in prose_files(REPO_ROOT)}  # fmt: skip
    found |= {p.name: unquoted_numbers(_markdown_cells(p)) for p in sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, found


def test_the_number_scan_tells_a_typed_result_from_settings_paper_numbers_and_quotes():
    from helpers.publish.quotes import unquoted_numbers

    typed = "Here MDE reaches R² 0.830 on the 95 sets. Coverage was 89 % at load 2.6."
    assert [n for n, _ in unquoted_numbers(typed)] == ["0.830", "89 %", "2.6"]
    ratios_and_ranges = "Batching speeds IG up 3.8x and LIME 12× here. The models at 50-58 % lose. A 10 × 10 grid."
    assert [n for n, _ in unquoted_numbers(ratios_and_ranges)] == ["3.8x", "12×", "50-58 %"]
    units = "make test took 238 s (about 860 tests), a cold run 25 minutes, the data 88 MB, 1,017 images, 10 test sets."
    assert [n for n, _ in unquoted_numbers(units)] == ["238 s", "860 tests", "25 minutes", "88 MB"]
    # a sentence naming the paper is no longer exempt: only the paper's numbers between markers with a source are
    unmarked = "The paper reports R² 0.964 (Table 1) and we measured 0.81."
    assert [n for n, _ in unquoted_numbers(unmarked)] == ["0.964", "0.81"]
    no_source = "The paper's <!-- paper  -->R² 0.964<!-- /paper -->."
    assert [n for n, _ in unquoted_numbers(no_source)] == ["0.964"]
    allowed = (
        "The paper reports <!-- paper p1 Table 1 -->R² 0.964<!-- /paper -->. We train with lr = 3e-3 and N = 20 at "
        "nominal 90 %, a 95 % interval, a 15-minute budget.\n\n"
        "MDE's R² here is <!-- q 05_mde r2 backbone=resnet20 -->0.830<!-- /q -->; `alpha=0.5` is a setting.\n\n"
        "<!-- table:begin 05_mde_sets -->\n| a | 0.5 |\n<!-- table:end -->\n\n"
        "<!-- numbers:begin 05_mde -->\n0.71\n<!-- numbers:end -->\nSee [the note](x/1.5.md), §6.1, levels .50–.95."
    )
    assert unquoted_numbers(allowed) == []


def test_quotes_and_included_tables_are_current():
    """Each quote and each included table in the prose equals what `helpers publish` writes from figures/."""
    import pandas as pd

    from helpers.publish.quotes import prose_files, refresh_quotes

    frame = pd.read_csv(REPO_ROOT / "figures" / "summary.csv")
    stale = [p.relative_to(REPO_ROOT).as_posix() for p in prose_files(REPO_ROOT)
             if refresh_quotes(text := p.read_text(encoding="utf-8"), frame, REPO_ROOT / "figures") != text]  # fmt: skip
    assert not stale, f"run `python -m helpers publish` (or refresh the quotes): {stale}"


def test_a_quote_reads_one_row_and_says_when_it_cannot(tmp_path):
    import pandas as pd

    from helpers.errors import HelpersError
    from helpers.publish.quotes import refresh_quotes

    frame = pd.DataFrame({"notebook": ["05_mde", "05_mde"], "name": ["r2", "r2"], "value": [0.8295, 0.9],
                          "labels": ["backbone=resnet20;split=fit", "backbone=resnet32;split=fit"]})  # fmt: skip
    (tmp_path / "t.md").write_text("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\ntext\n\n| c |\n|---|\n| 3 |\n")
    text = ("R² <!-- q 05_mde r2 backbone=resnet20 -->?<!-- /q -->, <!-- q 05_mde r2 backbone=resnet32 pct -->?<!-- /q -->"
            "\n<!-- table:begin t#2 -->\nold\n<!-- table:end -->")  # fmt: skip
    out = refresh_quotes(text, frame, tmp_path)
    assert "-->0.83<!-- /q -->" in out and "-->90.0 %<!-- /q -->" in out
    assert "| c |\n|---|\n| 3 |" in out and "| a | b |" not in out and "old" not in out
    with pytest.raises(HelpersError, match="2 rows"):
        refresh_quotes("<!-- q 05_mde r2 -->?<!-- /q -->", frame, tmp_path)
    with pytest.raises(HelpersError, match="does not exist"):
        refresh_quotes("<!-- table:begin nope -->\n<!-- table:end -->", frame, tmp_path)
