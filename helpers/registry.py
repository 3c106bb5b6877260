"""String-keyed registries, so a papermill parameter can name a dataset, model or estimator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from helpers.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from names to objects that raises :class:`UnknownNameError` listing the known names.

    Examples
    --------
    >>> reg = Registry("dataset")
    >>> @reg.register("toy")
    ... def load_toy(): return [1, 2]
    >>> reg.get("toy")()
    [1, 2]
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, obj: T | None = None) -> Callable[[T], T] | T:
        """Register ``obj`` under ``name``; without ``obj``, return a decorator."""
        if obj is not None:
            self._add(name, obj)
            return obj

        def deco(o: T) -> T:
            self._add(name, o)
            return o

        return deco

    def _add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj

    def unregister(self, name: str) -> T:
        """Remove ``name`` and return what was registered under it."""
        self.get(name)  # UnknownNameError listing the known names
        return self._items.pop(name)

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, list(self._items)) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)
