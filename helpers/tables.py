"""Plain-text renderings of result tables (Markdown without extra dependencies)."""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["to_markdown", "format_value"]


def format_value(value, *, digits: int = 4) -> str:
    """Format one cell: floats with ``digits`` significant digits, NaN/None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pd.DataFrame, *, digits: int = 4, index: bool = False) -> str:
    """Render ``frame`` as a GitHub-flavoured Markdown table.

    Parameters
    ----------
    frame : DataFrame
        The table; column names become the header.
    digits : int, keyword-only
        Significant digits for floats.
    index : bool, keyword-only
        Include the index as the first column.
    """
    df = frame.reset_index() if index else frame
    header = [str(c) for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(format_value(v, digits=digits) for v in row) + " |")
    return "\n".join(lines) + "\n"
