"""The attack families, in the order of their value for the task library."""

from __future__ import annotations

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

FAMILIES: tuple[Family, ...] = (
    SqlInjectionFamily(),
    EvalInjectionFamily(),
    TraversalFamily(),
    ComplexityFamily(),
    RaceFamily(),
    GrowthFamily(),
    StatefulFamily(),
    DifferentialFamily(),
    BoundaryFamily(),
)

__all__ = ["FAMILIES", "Family", "Variant", "Verdict"]
