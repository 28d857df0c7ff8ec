"""The fast tier's sample of a long parametrization (``scripts/test.sh``; ``tests/conftest.py`` leaves out what is
marked ``slow`` in the fast tier and runs everything in the full one, CI's).

A check repeated over many similar cases (every task, every terminal size, every command) keeps its meaning
on a few of them; the full tier runs them all."""

from __future__ import annotations

from collections.abc import Collection, Sequence
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
