"""``resolve``: a callable, or the one a ``"module:attribute"`` string names, imported when first used.

The registries of extension points (docs/EXTENDING.md) name their built-in entries this way, as a package's
entry point would, so a registry's module imports none of them: choosing one never loads the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def resolve(ref: Callable[..., Any] | str) -> Callable[..., Any]:
    """``ref`` itself, or the attribute ``"module:attribute"`` names, looked up now (a patched one included)."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return found
