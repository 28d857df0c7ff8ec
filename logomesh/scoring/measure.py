"""Gather the execution facts scoring needs, outside a battle (``logomesh score``, ``calibrate``).

Hidden suite, purple suite, the purple tests against the task's flawed
variants, and optionally the red agent: all run in one open sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from logomesh.events import EventSink, discard
from logomesh.findings import Finding
from logomesh.scoring.logic import RED_NOT_RUN, RedCoverage
from logomesh.scoring.testing import PURPLE_TEST_FILE, MutantReport, run_mutants

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox, SuiteRun
    from logomesh.submission import Submission
    from logomesh.tasks import TaskSpec


@dataclass(frozen=True)
class Measured:
    hidden: SuiteRun
    purple: SuiteRun | None
    mutants: MutantReport | None
    findings: tuple[Finding, ...]
    red: RedCoverage = RED_NOT_RUN


def red_findings(
    task: TaskSpec, source: str, box: Sandbox, budget_s: float, seed: int, battle_id: str, emit: EventSink
) -> tuple[tuple[Finding, ...], RedCoverage]:
    from logomesh.red import attack

    report = attack(task, source, box, budget_s=budget_s, seed=seed, battle_id=battle_id, emit=emit)
    return tuple(report.findings), RedCoverage.from_stats(report.stats)


def measure(
    task: TaskSpec,
    submission: Submission,
    box: Sandbox,
    *,
    red: bool,
    red_budget_s: float = 10.0,
    seed: int = 0,
    battle_id: str = "",
    emit: EventSink = discard,
    variants: dict[str, str] | None = None,
) -> Measured:
    from logomesh.hidden_suite import run_hidden

    hidden = run_hidden(box, task, submission.source).suite
    purple = mutants = None
    if submission.tests.strip():
        purple = box.run_suite(submission.source, {PURPLE_TEST_FILE: submission.tests}, timeout_s=60.0)
        mutants = run_mutants(box, task, submission.tests, variants)
    if not red:
        return Measured(hidden, purple, mutants, ())
    findings, coverage = red_findings(task, submission.source, box, red_budget_s, seed, battle_id, emit)
    return Measured(hidden, purple, mutants, findings, coverage)
