"""Progress bars that read well wherever they go: a notebook, a terminal, or a log file.

:func:`tqdm` is what every progress bar of the project uses.  In a Jupyter kernel it is ``tqdm.auto`` (a
widget), on a terminal the plain bar; when the output is neither (redirected to a file, a CI log) it writes one
line every :data:`LOG_STEP_PERCENT` percent instead of rewriting one line with carriage returns, which in a file
becomes a single line of tens of kilobytes.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm as _std_tqdm

__all__ = ["tqdm", "LineProgress", "LOG_STEP_PERCENT"]

#: a log line every this many percent of the total (bars without a total: every this many updates)
LOG_STEP_PERCENT = 10


class LineProgress(_std_tqdm):
    """A tqdm bar that prints whole lines (``desc: 30% 120/400 [00:12<00:28]``) at every
    :data:`LOG_STEP_PERCENT` percent and at the end, never carriage returns."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("mininterval", 0.0)
        kwargs.setdefault("miniters", 1)  # display() decides when to write: cheap unless a step is crossed
        kwargs["dynamic_ncols"] = False
        self._logged = -1
        super().__init__(*args, **kwargs)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:  # noqa: D102 - tqdm's hook
        if self.disable or self.n == 0:
            return True
        if self.total:
            step = int(100 * self.n / self.total) // LOG_STEP_PERCENT
            last = self.n >= self.total
        else:
            step, last = self.n // LOG_STEP_PERCENT, False
        if step > self._logged or (last and self._logged != -2):
            self._logged = -2 if last else step
            self._write_line()
        return True

    def _write_line(self) -> None:
        self.fp.write(self.format_meter(**self.format_dict).replace("\r", "") + "\n")
        self.fp.flush()

    def close(self) -> None:
        """The last line (where the bar stopped short of a step) and no clearing carriage return."""
        if getattr(self, "disable", True):
            return
        if self._logged != -2 and self.n:
            self._write_line()
        self.disable = True
        self._decr_instances(self)


def _in_kernel() -> bool:
    return "ipykernel" in sys.modules and type(sys.stdout).__module__.startswith("ipykernel")


def tqdm(*args: Any, **kwargs: Any):
    """A progress bar for where the output goes (see the module docstring); tqdm's arguments."""
    if _in_kernel():
        from tqdm.auto import tqdm as auto

        return auto(*args, **kwargs)
    stream = kwargs.get("file") or sys.stderr
    if hasattr(stream, "isatty") and stream.isatty():
        return _std_tqdm(*args, **kwargs)
    return LineProgress(*args, **kwargs)
