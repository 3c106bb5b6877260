"""The string-keyed registry of dataset loaders behind :func:`helpers.data.load`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers.registry import Registry

__all__ = ["LOADERS", "register_loader"]

#: name -> loader callable (keyword-only options, returns plain Python / numpy / pandas objects).
LOADERS: Registry[Callable[..., Any]] = Registry("dataset")


def register_loader(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a loader function under ``name``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        LOADERS.register(name, fn)
        return fn

    return deco
