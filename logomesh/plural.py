"""Counted nouns in messages: "1 repeat", "2 repeats", never "1 repeats"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural (``noun + "s"`` unless given) for every count but one."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
