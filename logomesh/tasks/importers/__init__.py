"""Build task libraries from other benchmarks (``logomesh tasks import SOURCE``).

An importer is a function ``(into: Path) -> ImportReport`` that writes one task folder per problem into
``into``, registered under the name ``tasks import`` takes (``register_importer``; docs/EXTENDING.md, "Task
importers"). ``check_drivers`` turns an assert-based ``check(candidate)`` into observation drivers (no expected
value enters the sandbox); ``humaneval`` writes one task folder per HumanEval problem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logomesh.lazy import lookup, register


class ImportProblem(ValueError):
    """The benchmark cannot be imported (package missing, a problem that does not transform)."""


@dataclass
class ImportReport:
    tasks: list[str] = field(default_factory=list)  # task ids written
    drivers: int = 0  # hidden test functions in all
    expected_survivors: dict[str, tuple[str, ...]] = field(default_factory=dict)  # task -> names still bound
    literal_survivors: dict[str, tuple[str, ...]] = field(default_factory=dict)  # of those, bound to literals
    looser: dict[str, tuple[str, ...]] = field(default_factory=dict)  # task -> how its check accepted more
    contracts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # task -> what its [contract] states
    inferred: dict[str, str] = field(default_factory=dict)  # task -> the precondition inferred from its tests

    def as_json(self) -> dict[str, Any]:
        return {"tasks": len(self.tasks), "drivers": self.drivers,
                "expected_survivors": self.expected_survivors, "literal_survivors": self.literal_survivors,
                "looser": self.looser, "contracts": self.contracts, "inferred": self.inferred}


Importer = Callable[[Path], ImportReport]  # writes into the folder, raises ImportProblem (one line) where it cannot

IMPORTERS: dict[str, Importer | str] = {}  # name -> the importer, or "module:function" imported on use


def register_importer(name: str, importer: Importer | str) -> None:
    """Make ``logomesh tasks import NAME`` run ``importer``."""
    register(IMPORTERS, name, importer, "task importer")


def find_importer(name: str) -> Importer:
    """The importer registered as ``name``; ``ImportProblem`` naming the known ones where there is none."""
    found: Importer = lookup(IMPORTERS, name,
                             lambda known: ImportProblem(f"unknown benchmark {name!r} (known: {known})"))
    return found


register_importer("humaneval", "logomesh.tasks.importers.humaneval:import_humaneval")
