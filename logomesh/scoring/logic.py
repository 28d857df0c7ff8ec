"""L, logic integrity: a deterministic anchor built only from measured facts.

Four parts, each in [0, 1], combined with the weights of ``LogicWeights``:

- ``probes``: how the code stood up to the red agent's edge-case probes:
  1 minus the summed severity cost of the confirmed findings, floored at 0
  (a finding reported for information, not ``penalised``, costs nothing).
- ``complexity``: the worst function's cyclomatic complexity and block nesting
  against the budget (``budget / measured``, capped at 1, the two averaged).
- ``invalid_input``: the pass rate of the hidden tests about bad input (names
  containing invalid, error, raise, reject, bad, negative, empty, edge, zero);
  when the task has none, a static fact: does the code raise or guard at all.
- ``purple_tests``: the share of the purple tests that pass on the submission
  and also on the reference (a test that fails on correct code is a wrong
  claim: it counts against, never for) times the share of flawed variants
  they catch (or a fixed 0.5 when none were tried); ``testing.judge_mutants``.

Absence is not quality: a part that could not be measured scores 0, never 1,
and ``facts`` says why (``<part>_not_measured``). ``probes`` is measured only
when a confirmed finding shows a probe reached the code, or when the red agent
ran (``RedCoverage``) and at least one of its probes reached the code without
a harness error, and the hidden suite imported the code (a suite-level error
means nothing could reach it). A caller that does not report the coverage
(the old signature, ``red=None``) gets the old judgement from its findings,
marked ``red_coverage: "not reported"``, until it passes ``red=``. ``invalid_input`` is measured only when the
hidden suite ran (no suite-level error, not tampered, at least one test).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from logomesh.findings import Finding
from logomesh.scoring.config import LogicWeights
from logomesh.scoring.logic_facts import (
    BehaviourScaling,
    ComplexityFacts,
    InvalidInputFacts,
    LogicFacts,
    ProbeFacts,
    PurpleFacts,
)
from logomesh.scoring.source import parse_source
from logomesh.scoring.testing import MutantReport, sound_pass_rate, suite_valid

if TYPE_CHECKING:
    from logomesh.red.agent import RedStats
    from logomesh.sandbox import SuiteRun

INVALID_INPUT_WORDS = ("invalid", "error", "raise", "reject", "bad", "negative", "empty", "edge", "zero")
_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler, ast.Assert, ast.comprehension,
             ast.match_case)
_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)


@dataclass(frozen=True)
class RedCoverage:
    """What the red agent measured: whether it ran, and how many probes reached the code."""

    ran: bool
    probes_reached: int = 0

    @classmethod
    def from_stats(cls, stats: RedStats) -> RedCoverage:
        """From ``RedReport.stats``: probes run minus those that ended in a harness error."""
        return cls(True, max(0, stats.probes - stats.harness_errors))


RED_NOT_RUN = RedCoverage(ran=False)


@dataclass(frozen=True)
class Logic:
    score: float
    parts: dict[str, float]
    facts: LogicFacts


def _complexity(func: ast.AST) -> int:
    count = 1
    for node in ast.walk(func):
        if isinstance(node, _BRANCHES):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        if isinstance(node, ast.comprehension):
            count += len(node.ifs)
    return count


def _nesting(node: ast.AST, depth: int = 0) -> int:
    deepest = depth
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue  # measured as functions of their own
        inner = depth + 1 if isinstance(child, _BLOCKS) else depth
        deepest = max(deepest, _nesting(child, inner))
    return deepest


def complexity_facts(tree: ast.Module) -> tuple[int, int]:
    """(worst cyclomatic complexity, deepest nesting) over the module and each function."""
    units: list[ast.AST] = [tree]
    units += [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    worst_cc = max(_complexity(u) if u is not tree else 1 for u in units)
    return worst_cc, max(_nesting(u) for u in units)


def _complexity_part(tree: ast.Module | None, weights: LogicWeights) -> tuple[float, ComplexityFacts]:
    if tree is None:
        return 0.0, ComplexityFacts()
    try:
        cc, nest = complexity_facts(tree)
    except RecursionError:
        return 0.0, ComplexityFacts()
    cc_part = min(1.0, weights.complexity_budget / cc)
    nest_part = min(1.0, weights.nesting_budget / nest) if nest else 1.0
    return (cc_part + nest_part) / 2, ComplexityFacts(cc, weights.complexity_budget, nest, weights.nesting_budget)


def _probes_unmeasured(hidden: SuiteRun, red: RedCoverage | None) -> str:
    """Why the probes measured nothing ("" when they did); a confirmed finding is checked by the caller."""
    if not suite_valid(hidden):
        return "the hidden suite did not run the code (import failed, entry point missing, or no test)"
    if red is None:
        return ""  # a caller of the old signature: judged on its findings as before (facts say so)
    if not red.ran:
        return "the red agent did not run"
    if red.probes_reached == 0:
        return "no probe reached the code"
    return ""


def _probes_part(findings: Sequence[Finding], hidden: SuiteRun, red: RedCoverage | None,
                 weights: LogicWeights) -> tuple[float, ProbeFacts]:
    costs = dict(weights.probe_severity_cost)
    spent = sum(costs.get(f.severity, 0.0) for f in findings if f.penalised)
    facts = ProbeFacts(len(findings), red_reported=red is not None)
    if not findings:
        why = _probes_unmeasured(hidden, red)
        if why:
            return 0.0, replace(facts, not_measured=why)
    return max(0.0, 1.0 - spent), facts


def _guards(tree: ast.Module) -> bool:
    """The code raises an exception or checks a type somewhere."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            return True
    return False


def _invalid_input_part(tree: ast.Module | None, hidden: SuiteRun) -> tuple[float, InvalidInputFacts]:
    if not suite_valid(hidden):
        return 0.0, InvalidInputFacts(None, not_measured="the hidden suite did not run")
    relevant = [o for o in hidden.outcomes if any(w in o.name.lower() for w in INVALID_INPUT_WORDS)]
    if relevant:
        passed = sum(1 for o in relevant if o.status == "passed")
        return passed / len(relevant), InvalidInputFacts("hidden tests", tests=len(relevant), passed=passed)
    if tree is None:
        return 0.0, InvalidInputFacts("static")
    guarded = _guards(tree)
    return (1.0 if guarded else 0.5), InvalidInputFacts("static", guards=guarded)


def _purple_part(
    purple: SuiteRun | None, mutants: MutantReport | None, weights: LogicWeights
) -> tuple[float, PurpleFacts]:
    if purple is None or not suite_valid(purple):
        return 0.0, PurpleFacts(0.0)
    rate = sound_pass_rate(purple, mutants)
    wrong = len(mutants.wrong) if mutants is not None else 0
    if mutants is None or mutants.total == 0:
        return rate * weights.untested_discrimination, PurpleFacts(rate, wrong_claims=wrong)
    return rate * mutants.rate, PurpleFacts(rate, len(mutants.caught), mutants.total, wrong)


def logic_anchor(
    source: str,
    hidden: SuiteRun,
    purple: SuiteRun | None,
    findings: Sequence[Finding],
    mutants: MutantReport | None,
    weights: LogicWeights,
    red: RedCoverage | None = None,
    behaviour: float | None = None,
) -> Logic:
    """L from measured facts. ``behaviour`` (the hidden pass rate), when given and ``weights.follow_behaviour``,
    scales every part that is not itself read from the hidden tests: code that fails them earns no credit for
    being simple, unprobed or passing its own tests."""
    tree, _ = parse_source(source)
    probes, probe_facts = _probes_part(findings, hidden, red, weights)
    complexity, complexity_facts_ = _complexity_part(tree, weights)
    invalid_input, invalid_facts = _invalid_input_part(tree, hidden)
    purple_tests, purple_facts = _purple_part(purple, mutants, weights)
    parts = {"probes": probes, "complexity": complexity, "invalid_input": invalid_input, "purple_tests": purple_tests}
    facts = LogicFacts(probe_facts, complexity_facts_, invalid_facts, purple_facts)
    if behaviour is not None and weights.follow_behaviour:
        scaled = tuple(n for n in parts if not (n == "invalid_input" and invalid_facts.from_hidden))
        for name in scaled:
            parts[name] *= behaviour
        facts = replace(facts, behaviour=BehaviourScaling(behaviour, scaled))
    score = sum(getattr(weights, name) * value for name, value in parts.items())
    return Logic(min(1.0, max(0.0, score)), parts, facts)
