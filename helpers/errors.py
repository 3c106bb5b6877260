"""One exception type per kind of misuse.

Every error the toolkit raises on purpose derives from :class:`HelpersError`, and also from the built-in
type a caller would naturally catch (``ValueError``, ``FileNotFoundError``, ...), so both
``except HelpersError`` and ``except ValueError`` work.  Messages say what was expected and what came.
"""

from __future__ import annotations

__all__ = [
    "HelpersError",
    "InputValidationError",
    "UnknownNameError",
    "DataNotFoundError",
    "ChecksumError",
    "ProfileError",
    "NotFittedError",
]


class HelpersError(Exception):
    """Base class of every error raised on purpose by ``helpers``."""


class InputValidationError(HelpersError, ValueError):
    """An array argument has the wrong shape, dtype, range, or contains NaN/inf."""


class UnknownNameError(HelpersError, ValueError):
    """A string key (dataset, model, estimator, profile, notebook) is not registered."""

    def __init__(self, kind: str, name: str, available: list[str] | tuple[str, ...]):
        self.kind, self.name, self.available = kind, name, sorted(available)
        super().__init__(f"unknown {kind} {name!r}; expected one of: {', '.join(self.available) or '(none)'}")


class DataNotFoundError(HelpersError, FileNotFoundError):
    """A dataset file is missing from the data directory."""


class ChecksumError(HelpersError, ValueError):
    """A data file exists but its sha256 does not match the manifest (corrupted or wrong version)."""


class ProfileError(HelpersError, ValueError):
    """A papermill profile or parameter is unknown or not declared by the notebook."""


class NotFittedError(HelpersError, RuntimeError):
    """``estimate`` (or a fitted attribute) was used before ``fit``."""
