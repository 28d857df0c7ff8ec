"""What each part of L was measured from (``Logic.facts``), one frozen value per part.

``to_json`` gives the ``components.logic.facts`` block of a result: each part writes only the keys it
measured, in the order the parts are computed, floats rounded to the scorer's digits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Round = Callable[[float], float]


@dataclass(frozen=True)
class ProbeFacts:
    """The red agent's confirmed findings; why the probes measured nothing, when they did not."""

    confirmed_findings: int
    red_reported: bool = True  # False: a caller of the old signature said nothing of the red agent
    not_measured: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"confirmed_findings": self.confirmed_findings}
        if not self.red_reported:
            out["red_coverage"] = "not reported"
        if self.not_measured:
            out["probes_not_measured"] = self.not_measured
        return out


@dataclass(frozen=True)
class ComplexityFacts:
    """The worst cyclomatic complexity and deepest nesting, with their budgets; ``None`` when not measured."""

    complexity: int | None = None
    complexity_budget: int = 0
    nesting: int | None = None
    nesting_budget: int = 0

    def to_json(self) -> dict[str, Any]:
        if self.complexity is None:
            return {"complexity": None, "nesting": None}
        return {"complexity": self.complexity, "complexity_budget": self.complexity_budget,
                "nesting": self.nesting, "nesting_budget": self.nesting_budget}


@dataclass(frozen=True)
class InvalidInputFacts:
    """Where invalid-input handling was read: ``hidden tests`` (counted), ``static`` (guards), or nowhere."""

    source: str | None
    not_measured: str = ""
    tests: int = 0
    passed: int = 0
    guards: bool | None = None  # static: the code raises or checks a type; None when it does not parse

    @property
    def from_hidden(self) -> bool:
        return self.source == "hidden tests"

    def to_json(self) -> dict[str, Any]:
        if self.source is None:
            return {"invalid_input_source": None, "invalid_input_not_measured": self.not_measured}
        if self.from_hidden:
            return {"invalid_input_source": self.source, "invalid_input_tests": self.tests,
                    "invalid_input_passed": self.passed}
        out: dict[str, Any] = {"invalid_input_source": self.source}
        if self.guards is not None:
            out["raises_or_checks_types"] = self.guards
        return out


@dataclass(frozen=True)
class PurpleFacts:
    """The purple tests' sound pass rate (passing, and no wrong claim), how many flawed variants they caught
    when some were tried, and how many of them failed on the reference (wrong claims)."""

    pass_rate: float
    flawed_caught: int | None = None
    flawed_total: int | None = None
    wrong_claims: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"purple_pass_rate": self.pass_rate, "flawed_caught": self.flawed_caught}
        if self.flawed_total is not None:
            out["flawed_total"] = self.flawed_total
        if self.wrong_claims:
            out["wrong_claims"] = self.wrong_claims
        return out


@dataclass(frozen=True)
class BehaviourScaling:
    """The hidden pass rate the parts not read from the hidden tests were scaled by, and which parts."""

    scale: float
    scaled: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"behaviour_scale": self.scale, "scaled_by_behaviour": list(self.scaled)}


@dataclass(frozen=True)
class LogicFacts:
    probes: ProbeFacts
    complexity: ComplexityFacts
    invalid_input: InvalidInputFacts
    purple_tests: PurpleFacts
    behaviour: BehaviourScaling | None = None

    def to_json(self, r: Round) -> dict[str, Any]:
        """``components.logic.facts``: every part's keys, in the order the parts are computed, floats rounded."""
        out = {**self.probes.to_json(), **self.complexity.to_json(), **self.invalid_input.to_json(),
               **self.purple_tests.to_json(), **(self.behaviour.to_json() if self.behaviour is not None else {})}
        return {k: (r(v) if isinstance(v, float) else v) for k, v in out.items()}
