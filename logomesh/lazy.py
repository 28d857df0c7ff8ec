"""The registries' few lines: ``register`` an entry once, ``lookup`` one by name, ``resolve`` a lazy one.

The registries of extension points (docs/EXTENDING.md) name their built-in entries as ``"module:attribute"``
strings, as a package's entry point would, so a registry's module imports none of them: choosing one never
loads the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def register(registry: dict[str, T], name: str, entry: T, what: str) -> T:
    """Add ``entry`` to ``registry`` under ``name``; a name registered twice is a mistake, said at once."""
    if name in registry:
        raise ValueError(f"{what} {name!r} is already registered")
    registry[name] = entry
    return entry


def lookup(registry: Mapping[str, Callable[..., Any] | str], name: str,
           unknown: Callable[[str], Exception]) -> Callable[..., Any]:
    """The entry registered as ``name``, resolved; ``unknown(the known names, joined)`` raised where there is
    none."""
    if name not in registry:
        raise unknown(", ".join(registry))
    return resolve(registry[name])


def resolve(ref: Callable[..., Any] | str) -> Callable[..., Any]:
    """``ref`` itself, or the attribute ``"module:attribute"`` names, looked up now (a patched one included)."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return found
