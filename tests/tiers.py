"""The fast tier's sample of a long parametrization (``scripts/test.sh``; ``tests/conftest.py`` leaves out what is
marked ``slow`` in the fast tier and runs everything in the full one, CI's).

A check repeated over many similar cases (every task, every terminal size, every command) keeps its meaning
on a few of them; the full tier runs them all."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest.mark.structures import ParameterSet


def sampled(values: Sequence[Any], ids: Sequence[str], keep: Collection[str],
            *, several: bool = False) -> list[ParameterSet]:
    """``values`` as params named ``ids``; those named in ``keep`` run in both tiers, the rest in the full tier.
    ``several``: each value is a tuple of the arguments of a parametrization over several names."""
    unknown = set(keep) - set(ids)
    if unknown:
        raise ValueError(f"sampled: no case is named {sorted(unknown)}")
    return [pytest.param(*(value if several else (value,)), id=name,
                         marks=() if name in keep else (pytest.mark.slow,))
            for value, name in zip(values, ids, strict=True)]


DURATIONS = Path(__file__).with_name("durations.json")
"""Seconds each test file took in a run of each tier, written by ``scripts/record_test_durations.py``."""


def heaviest_first(items: list[pytest.Item], tier: str, durations: Path = DURATIONS) -> None:
    """Order ``items`` by their file's seconds recorded for ``tier``, longest first; a file's tests keep their order.

    ``scripts/test.sh`` hands whole files to its workers (xdist ``loadfile``) in collection order, so a long
    file collected last runs alone at the end while the other workers idle; started first, it runs beside the
    rest (longest-processing-time first). A file with no record (a new one) keeps its place after those that
    have one: a stale record costs time, never a test."""
    recorded: dict[str, dict[str, float]] = (json.loads(durations.read_text(encoding="utf-8"))
                                             if durations.is_file() else {})
    seconds = recorded.get(tier, {})  # a file's share differs by tier: the fast one samples long files
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(item.nodeid.split("::", 1)[0], len(first_seen))

    def weight(item: pytest.Item) -> tuple[float, int]:
        file = item.nodeid.split("::", 1)[0]
        return -seconds.get(file, 0.0), first_seen[file]

    items.sort(key=weight)
