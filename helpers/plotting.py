"""One figure style for every notebook, and savers for figures and tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from helpers.paths import figures_dir
from helpers.tables import to_markdown

__all__ = ["set_style", "save_figure", "save_table"]


def set_style() -> None:
    """Apply the project's seaborn style (white grid, colour-blind palette, readable fonts)."""
    import matplotlib

    matplotlib.use(matplotlib.get_backend())  # keep inline backends in Jupyter
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "savefig.bbox": "tight"})


def save_figure(
    fig, name: str, *, directory: str | Path | None = None, formats: tuple[str, ...] = ("png",)
) -> list[Path]:
    """Save ``fig`` as ``<figures>/<name>.<fmt>`` for each format; returns the paths."""
    out = Path(directory) if directory is not None else figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        fig.savefig(path)
        paths.append(path)
    return paths


def save_table(
    frame: pd.DataFrame, name: str, *, directory: str | Path | None = None, digits: int = 4
) -> tuple[Path, Path]:
    """Save ``frame`` as ``<figures>/<name>.csv`` and ``<name>.md``."""
    out = Path(directory) if directory is not None else figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{name}.csv", out / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    md_path.write_text(to_markdown(frame, digits=digits), encoding="utf-8")
    return csv_path, md_path
