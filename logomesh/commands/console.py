"""``logomesh console``: the Textual battle console (imported lazily)."""

from __future__ import annotations

from logomesh.commands.common import not_implemented


def console() -> None:
    """Open the Textual battle console."""
    not_implemented("console")
