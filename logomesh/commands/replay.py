"""``logomesh replay BATTLE_ID``: re-score from stored inputs."""

from __future__ import annotations

from logomesh.commands.common import not_implemented


def replay() -> None:
    """Re-score a battle from its stored inputs and compare H(result)."""
    not_implemented("replay")
