"""Reading the setup forms' text fields: the one error type and the parsers both forms share."""

from __future__ import annotations

import math
from collections.abc import Iterable

from logomesh.battle.request import SEED_LIMIT

MAX_SEED = SEED_LIMIT - 1  # results and plans are canonical JSON, which refuses larger integers


class FormError(ValueError):
    """A form holds a value that cannot start its job; ``str()`` says which and how to fix it."""


def whole_number(text: str, what: str, minimum: int = -MAX_SEED, maximum: int = MAX_SEED) -> int:
    try:
        value = int(text)
    except ValueError:
        raise FormError(f"{what} must be a whole number, not {text!r}") from None
    if not minimum <= value <= maximum:
        raise FormError(f"{what} must lie between {minimum} and {maximum}")
    return value


def red_budget(text: str) -> float:
    """Seconds for the red agent; 0 runs none."""
    try:
        budget = float(text)
    except ValueError:
        raise FormError(f"red budget must be a number of seconds, not {text!r}") from None
    if not budget >= 0:
        raise FormError("red budget must be 0 (no red agent) or a positive number of seconds")
    return budget


def seconds(text: str, what: str) -> float:
    """A finite, positive number of seconds (``--purple-timeout``'s rule)."""
    try:
        value = float(text)
    except ValueError:
        raise FormError(f"{what} must be a number of seconds, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise FormError(f"{what} must be a finite, positive number of seconds, not {text!r}")
    return value


def good_first(variants: Iterable[str]) -> list[str]:
    """Mock variant names sorted with ``good`` first."""
    return sorted(variants, key=lambda name: (name != "good", name))
