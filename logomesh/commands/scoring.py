"""``logomesh score`` and ``logomesh calibrate``."""

from __future__ import annotations

from logomesh.commands.common import not_implemented


def score() -> None:
    """Score one submission file against a task."""
    not_implemented("score")


def calibrate() -> None:
    """CIS over every task's labelled submissions."""
    not_implemented("calibrate")
