"""A notebook's parameters as one typed, frozen object, validated once where it is made.

A notebook's experiments package subclasses :class:`NotebookSettings` with one annotated field per name of the
notebook's ``parameters`` cell (a test per notebook keeps the two equal) and the notebook's name in ``NOTEBOOK``.
The notebook then reads its parameters once, right after checking them::

    S = AttributionSettings.this_run(globals())   # in the notebook
    S.n_boot                                        # everywhere after

so that a renamed or mistyped parameter fails where the settings are made (at the top of the notebook, or where
another notebook reads them with :meth:`NotebookSettings.for_profile`), not halfway through a run.  Values are kept
as given (lists stay lists), because cache keys are made from them.

The annotations say what is accepted: ``int`` (not ``bool``), ``float`` (an ``int`` too), ``str``, ``bool``,
``list[X]``, ``dict[str, X]``, ``X | None`` and ``Any``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from helpers.errors import InputValidationError

__all__ = ["NotebookSettings"]

SettingsT = TypeVar("SettingsT", bound="NotebookSettings")


@dataclass(frozen=True)
class NotebookSettings:
    """Base of the per-notebook settings: subclasses add the fields and set ``NOTEBOOK``."""

    NOTEBOOK: ClassVar[str] = ""  #: the notebook's file name without ``.ipynb``

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            check_field(f.name, getattr(self, f.name), hints[f.name])

    @classmethod
    def from_mapping(cls: type[SettingsT], params: Mapping[str, Any]) -> SettingsT:
        """The settings of ``params`` (every field, nothing else): missing and unknown names raise, naming them."""
        names = [f.name for f in dataclasses.fields(cls)]
        missing, unknown = sorted(set(names) - set(params)), sorted(set(params) - set(names))
        if missing or unknown:
            raise InputValidationError(
                f"notebook {cls.NOTEBOOK}'s parameters: missing {missing or 'none'}, unknown {unknown or 'none'} "
                f"(the fields of {cls.__name__} are the names of the notebook's parameters cell)"
            )
        return cls(**{n: params[n] for n in names})

    @classmethod
    def for_profile(cls: type[SettingsT], profile: str = "default", **overrides: Any) -> SettingsT:
        """The notebook's settings under ``profile``: its parameters cell's values, updated by its profile file and
        then by ``overrides`` (an unknown name raises).  How another notebook reads this one's settings."""
        from helpers.run.notebook_params import notebook_parameters

        return cls.from_mapping(notebook_parameters(cls.NOTEBOOK, profile, **overrides))

    @classmethod
    def this_run(cls: type[SettingsT], namespace: Mapping[str, Any]) -> SettingsT:
        """The running notebook's settings, read from its namespace (``globals()``) by the names of its
        ``parameters`` cell."""
        from helpers.run.notebook_params import namespace_parameters

        return cls.from_mapping(namespace_parameters(cls.NOTEBOOK, namespace))

    def as_dict(self) -> dict[str, Any]:
        """``{field: value}`` in the order of the parameters cell."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def check_field(name: str, value: Any, hint: Any) -> None:
    """Raise :class:`InputValidationError` naming ``name`` unless ``value`` fits the annotation ``hint``."""
    if hint is Any:
        return
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return check_field(name, value, inner[0])
        for alternative in inner:  # X | Y (| None): the first alternative the value fits
            try:
                return check_field(name, value, alternative)
            except InputValidationError:
                continue
        expected = " or ".join(_name(a) for a in inner) + (" or None" if type(None) in args else "")
        raise InputValidationError(f"{name}: expected {expected}, got {value!r}")
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise InputValidationError(f"{name}: expected a list of {_name(args[0])}, got {value!r}")
        for item in value:
            check_field(f"{name}[]", item, args[0])
        return
    if origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise InputValidationError(f"{name}: expected a dict with str keys, got {value!r}")
        for key, item in value.items():
            check_field(f"{name}[{key!r}]", item, args[1])
        return
    ok = {int: lambda v: isinstance(v, int) and not isinstance(v, bool),
          float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          str: lambda v: isinstance(v, str),
          bool: lambda v: isinstance(v, bool)}[hint](value)  # fmt: skip
    if not ok:
        raise InputValidationError(f"{name}: expected {_name(hint)}, got {value!r}")


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", str(hint))
