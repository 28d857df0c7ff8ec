"""The attack families: a registry, the built-in ones in the order of their value for the task library.

``register_family(family)`` adds one; the red agent attacks with ``families()``, in the order they were
registered. A family's variants run a probe (``Family.probe``, registered in ``red/executor.py``) and its oracle
reads the probe's result by the keys both sides share (``Family.markers``; docs/EXTENDING.md, "Attack families").
"""

from __future__ import annotations

from typing import TypeVar

from logomesh.lazy import register
from logomesh.red.attacks.base import Family, Variant, Verdict
from logomesh.red.attacks.boundary import BoundaryFamily
from logomesh.red.attacks.complexity import ComplexityFamily
from logomesh.red.attacks.differential import DifferentialFamily
from logomesh.red.attacks.evaluation import EvalInjectionFamily
from logomesh.red.attacks.growth import GrowthFamily
from logomesh.red.attacks.race import RaceFamily
from logomesh.red.attacks.sqli import SqlInjectionFamily
from logomesh.red.attacks.stateful import StatefulFamily
from logomesh.red.attacks.traversal import TraversalFamily

F = TypeVar("F", bound=Family)

FAMILIES: dict[str, Family] = {}  # name -> family, in the order the agent tries them


def register_family(family: F) -> F:
    """Add ``family`` after those registered before it (its name is the one findings carry)."""
    entry: Family = family
    register(FAMILIES, family.name, entry, "attack family")
    return family


def families() -> tuple[Family, ...]:
    """Every registered family, in registration order."""
    return tuple(FAMILIES.values())


for _family in (
    SqlInjectionFamily(),
    EvalInjectionFamily(),
    TraversalFamily(),
    ComplexityFamily(),
    RaceFamily(),
    GrowthFamily(),
    StatefulFamily(),
    DifferentialFamily(),
    BoundaryFamily(),
):
    register_family(_family)

__all__ = ["FAMILIES", "Family", "Variant", "Verdict", "families", "register_family"]
