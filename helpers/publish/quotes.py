"""Numbers in prose that come from the records: inline quotes, included tables, and the check that finds the rest.

A report explains; its results come from the published run.  Two markers let prose show them without typing them:

* ``<!-- q NOTEBOOK METRIC [key=value,...] [fmt] -->0.824<!-- /q -->`` -- one value of ``figures/summary.csv``
  (the row of ``NOTEBOOK`` named ``METRIC`` whose labels contain every ``key=value``), written between the markers
  by :func:`refresh_quotes` with the format ``fmt`` (a Python format spec, default ``.3g``; ``pct`` gives ``82.4 %``
  from a fraction).  Markdown viewers hide the comments and show the number.
* ``<!-- table:begin NAME -->`` ... ``<!-- table:end -->`` -- the committed table ``figures/NAME.md`` included
  verbatim (a notebook or a script writes it; ``helpers publish`` copies a run's); ``NAME#2`` includes
  the file's second markdown table only.
* ``<!-- paper SOURCE -->R² 0.973<!-- /paper -->`` -- the paper's own number(s), quoted from ``SOURCE`` (e.g.
  ``p5 Table 1``; required): what is between the markers is the paper's, not ours.

:func:`unquoted_numbers` finds what is left: numbers in prose outside those markers, the generated blocks, code and
links that are not settings (``N = 20``), section references (``§6.1``) or dates -- decimals, percentages, ranges
of percentages, ratios and integers with a measured unit (``238 s``, ``25 minutes``, ``88 MB``, ``860 tests``).
``tests/test_docs.py`` runs it over the README, ``docs/`` and the notebooks' markdown.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from helpers.errors import HelpersError
from helpers.paths import REPO_ROOT

__all__ = ["QUOTE", "TABLE", "ADVICE", "quote_value", "which_estimator", "refresh_quotes", "refresh_file",
           "unquoted_numbers", "prose_files", "PAPER_QUOTE"]

QUOTE = re.compile(r"<!-- q (\S+) (\S+)((?: [^ >]+)*) -->(.*?)<!-- /q -->", re.S)
TABLE = re.compile(r"<!-- table:begin (\S+) -->(.*?)<!-- table:end -->", re.S)
ADVICE = re.compile(r"<!-- advice:begin -->.*?<!-- advice:end -->", re.S)
#: a quote of the paper: its source (non-empty) in the opening marker, the paper's numbers between the markers
PAPER_QUOTE = re.compile(r"<!-- paper (?=\S)[^>]*?\S -->.*?<!-- /paper -->", re.S)
_GENERATED = re.compile(r"<!-- (numbers|results|times|advice):begin.*?<!-- \1:end -->", re.S)
_FENCE = re.compile(r"```.*?```", re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\]\([^)]*\)|https?://\S+|<!--.*?-->|<[^>\n]+>", re.S)
#: units of a measured quantity (time, size, a count of tests): an integer with one of them is a result
_UNIT = (r"(?:ms|s|sec|seconds?|min|minutes?|h|hours?|CPU-min|CPU-s|CPU-h|[kKMGT]i?B|GB|MB|tests|pp)"
         r"(?![\w\-])")
#: a result-like number: a decimal (0.82, .82, 1,017.5), a percentage (82 %, 82%), a range of percentages
#: (50-58 %, 50–58%), a ratio (3.8x, 12×) or an integer with a measured unit (238 s, 88 MB, 860 tests)
_NUMBER = re.compile(r"(?<![\w.\-/:])[-+−]?(?:\d+(?:\.\d+)?\s?[–-]\s?\d+(?:\.\d+)?\s?%|\d[\d,]*\.\d+(?:x|×)?|\.\d+"
                     r"|\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?(?:x|×)(?=[\s,;.)]|$)"
                     r"|\d[\d,]*(?:\s?[–-]\s?\d[\d,]*)?\s?" + _UNIT + r")(?![\w.]*\w)")
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[A-Z(*])")
#: what may stand right before a number that is a setting or a reference, not a result
_SETTING = re.compile(r"(?:[=≤≥<>×~⌈+]|§|Sec\.|Eq\.|\bv|ε|α|η|τ|\blr|\bp|below|above|least|most|nominal|levels?|version|Python|numpy)\s*$")
#: what may follow a number that is a setting: a confidence level ("95 % interval")
_LEVEL = re.compile(r"^\s*(?:interval|Clopper|confidence|CI\b|bootstrap|percentile|level)")


def quote_value(frame: pd.DataFrame, notebook: str, metric: str, labels: str = "") -> float:
    """The value of ``metric`` of ``notebook`` in a summary frame whose labels contain every ``key=value`` of
    ``labels`` (comma-separated); a clear error when none or several rows match."""
    rows = frame[(frame["notebook"] == notebook) & (frame["name"] == metric)]
    for pair in filter(None, labels.split(",")):
        rows = rows[rows["labels"].fillna("").astype(str).str.split(";").map(lambda ls, p=pair: p in ls)]
    if len(rows) != 1:
        raise HelpersError(f"quote {notebook} {metric} {labels!r}: {len(rows)} rows of the summary match (need 1)")
    return float(rows["value"].iloc[0])


def _format(value: float, spec: str) -> str:
    if spec == "pct":
        return f"{100 * value:.1f} %"
    return format(value, spec)


#: a method "fails" on a shift family where its MAE there is at least this many times the family's lowest MAE ...
FAIL_RATIO = 2.0
#: ... and at least this many percentage points
FAIL_MIN_PP = 5.0


def failing_families(rows: pd.DataFrame) -> dict[str, list[tuple[str, float]]]:
    """Per method, the shift families where the benchmark measured it failing: its MAE on the family (mean absolute
    error over the family's target sets, pp) at least :data:`FAIL_RATIO` times the family's lowest MAE and at least
    :data:`FAIL_MIN_PP`, worst first.  ``rows``: ``06_benchmark_rows.csv`` (``method``, ``family``, ``abs_error``).

    >>> rows = pd.DataFrame({"method": ["a", "b", "a", "b"], "family": ["x", "x", "y", "y"],
    ...                      "abs_error": [0.02, 0.12, 0.03, 0.04]})
    >>> failing_families(rows)
    {'a': [], 'b': [('x', 12.0)]}
    """
    mae = rows.groupby(["method", "family"])["abs_error"].mean().unstack() * 100
    best = mae.min(axis=0)
    bad = (mae >= FAIL_RATIO * best) & (mae >= FAIL_MIN_PP)
    return {m: sorted(((f, round(float(mae.at[m, f]), 1)) for f in mae.columns if bad.at[m, f]), key=lambda t: -t[1])
            for m in mae.index}  # fmt: skip


def _failures(method: str, failing: dict[str, list[tuple[str, float]]]) -> str:
    fams = failing.get(method, [])
    return "" if not fams else " (fails on " + ", ".join(f"{f} {pp:.1f} pp" for f, pp in fams) + ")"


def which_estimator(figures: Path) -> str:
    """The "which estimator" paragraph from the benchmark's published ranks (``06_benchmark_set_ranks.csv``: mean
    normalised set rank, 0 = best on every shared set) and its best method per family."""
    ranks_csv, best_csv = Path(figures) / "06_benchmark_set_ranks.csv", Path(figures) / "06_benchmark_best_per_family.csv"
    if not (ranks_csv.exists() and best_csv.exists()):
        return "(the benchmark has not been published yet)"
    ranks = pd.read_csv(ranks_csv).set_index("method")["overall"].dropna().sort_values()
    best = pd.read_csv(best_csv)
    wins = best["best"].value_counts()
    from helpers.benchmark import ACCURACY_METHODS, SCORE_METHODS

    reference_only = [m for m in ranks.index if m in ACCURACY_METHODS and m != "agreement"]
    with_sets = [m for m in ranks.index if m in SCORE_METHODS]
    rows_csv = Path(figures) / "06_benchmark_rows.csv"
    failing = failing_families(pd.read_csv(rows_csv)) if rows_csv.exists() else {}
    per_family = "; ".join(f"{r.family}: `{r.best}` ({100 * r.best_mae:.1f} pp)" for r in best.itertuples())

    def named(methods: list[str]) -> str:  # "`m` (rank; fails on ...)"
        return ", ".join(f"`{m}` ({ranks[m]:.2f}" + (f"; {_failures(m, failing)[2:]}" if failing.get(m) else ")")
                         for m in methods)  # fmt: skip

    return (
        f"Across the benchmark's families (notebook 06), the best mean set rank is `{ranks.index[0]}`'s "
        f"({ranks.iloc[0]:.2f}; 0 = best on every set it shares with the others){_failures(ranks.index[0], failing)}. "
        f"Among the methods that need only logits and a labelled reference, {named(reference_only[:3])} rank best; "
        f"among the scores read off a line fitted on labelled shifted sets, {named(with_sets[:3])}. "
        f"`{wins.index[0]}` has the lowest MAE on {int(wins.iloc[0])} of {len(best)} families. The lowest MAE per "
        f"family: {per_family}. A method \"fails\" on a family here where its MAE is at least {FAIL_RATIO:g} times the "
        f"family's lowest and at least {FAIL_MIN_PP:g} pp. So: with labelled shifted sets of your own, stack; with a "
        "labelled reference only, start from the best-ranked methods that need no more, and under label shift alone "
        "prefer the methods that calibrate on the reference. Which shift you face is not known without labels: "
        "compare your target's predicted-class frequencies with the reference's (a large change with confident "
        "predictions points to label shift) and look at the inputs; then check on a shift like yours, ideally a "
        "few labelled target examples, before trusting any of them (their errors differ by family)."
    )


def refresh_quotes(text: str, frame: pd.DataFrame, figures: Path) -> str:
    """``text`` with every quote written from ``frame`` and every included table from ``figures``."""

    def one_quote(m: re.Match) -> str:
        notebook, metric, rest = m.group(1), m.group(2), m.group(3).split()
        labels = next((r for r in rest if "=" in r), "")
        spec = next((r for r in rest if "=" not in r), ".3g")
        value = _format(quote_value(frame, notebook, metric, labels), spec)
        return f"<!-- q {notebook} {metric}{m.group(3)} -->{value}<!-- /q -->"

    def one_table(m: re.Match) -> str:
        name, _, part = m.group(1).partition("#")
        path = Path(figures) / f"{name}.md"
        if not path.exists():
            raise HelpersError(f"table {m.group(1)}: {path} does not exist")
        body = path.read_text(encoding="utf-8").strip()
        if part:  # the part-th markdown table of the file (1 = the first)
            tables = re.findall(r"(?:^\|.*\n?)+", body, flags=re.M)
            if not part.isdigit() or not 1 <= int(part) <= len(tables):
                raise HelpersError(f"table {m.group(1)}: {path} has {len(tables)} tables")
            body = tables[int(part) - 1].strip()
        return f"<!-- table:begin {m.group(1)} -->\n\n{body}\n\n<!-- table:end -->"

    text = TABLE.sub(one_table, QUOTE.sub(one_quote, text))
    if ADVICE.search(text):
        advice = f"<!-- advice:begin -->\n{which_estimator(figures)}\n<!-- advice:end -->"
        text = ADVICE.sub(lambda _: advice, text)
    return text


def refresh_file(path: Path, frame: pd.DataFrame, figures: Path) -> bool:
    """Refresh the quotes and tables of one markdown file in place; True when it changed."""
    text = Path(path).read_text(encoding="utf-8")
    new = refresh_quotes(text, frame, figures)
    if new != text:
        Path(path).write_text(new, encoding="utf-8")
    return new != text


def unquoted_numbers(text: str) -> list[tuple[str, str]]:
    """``(number, sentence)`` for each result-like number of markdown ``text`` that no marker (a quote of the
    records or of the paper), code span, link, setting or date accounts for."""
    for pattern in (QUOTE, TABLE, PAPER_QUOTE, _GENERATED, _FENCE, _CODE, _LINK):
        text = pattern.sub(" ", text)
    found = []
    for para in re.split(r"\n\s*\n", text):
        rows = para.split("\n") if para.lstrip().startswith("|") else _SENTENCE.split(para.replace("\n", " "))
        for row in rows:
            allowed_until = -1  # the end of the last number that was a setting (a range "A–B" continues it)
            for m in _NUMBER.finditer(row):
                before = row[max(0, m.start() - 8) : m.start()]
                continues = allowed_until >= 0 and re.fullmatch(r"\s*(?:[–-]|to|and)\s*", row[allowed_until : m.start()])
                if continues or _SETTING.search(before) or _LEVEL.match(row[m.end() :]):
                    allowed_until = m.end()
                else:
                    allowed_until = -1
                    found.append((m.group(), row.strip()[:160]))
    return found


def prose_files(root: Path = REPO_ROOT) -> list[Path]:
    """The README and every markdown file under ``docs/`` (the published notebooks' folder aside)."""
    return [root / "README.md", *sorted(p for p in (root / "docs").rglob("*.md") if "notebooks" not in p.parts)]
