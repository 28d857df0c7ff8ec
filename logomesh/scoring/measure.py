"""Gather what scoring needs from the sandbox: the measuring half of ``pipeline.measure_and_score``.

Hidden suite (judged outside the box against the reference), the purple
agent's own suite, the purple tests against the task's flawed variants, and
optionally the red agent: all run in one open sandbox, in that order, each
step checking the cancel token first. Battles and ``logomesh score`` measure
the same things, so the same code scores the same whichever ran it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from logomesh.cancel import CancelToken
from logomesh.events import EventSink, SandboxOutput, StageStarted, TestResult, discard
from logomesh.findings import Finding
from logomesh.scoring.import_probe import IMPORT_FAILED, locate_import_failure
from logomesh.scoring.logic import RED_NOT_RUN, RedCoverage
from logomesh.scoring.testing import PURPLE_TEST_FILE, MutantReport, run_mutants

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox, SuiteRun
    from logomesh.sandbox.base import OutputSink
    from logomesh.submission import Submission
    from logomesh.tasks import TaskSpec


@dataclass(frozen=True)
class Measured:
    hidden: SuiteRun
    purple: SuiteRun | None
    mutants: MutantReport | None
    findings: tuple[Finding, ...]
    red: RedCoverage = RED_NOT_RUN
    reference_observations: bytes = b""  # what the hidden verdicts were judged against


def red_findings(
    task: TaskSpec, source: str, box: Sandbox, budget_s: float, seed: int, battle_id: str, emit: EventSink,
    cancel: CancelToken | None = None,
) -> tuple[tuple[Finding, ...], RedCoverage]:
    from logomesh.red import attack

    report = attack(task, source, box, budget_s=budget_s, seed=seed, battle_id=battle_id, emit=emit, cancel=cancel)
    return tuple(report.findings), RedCoverage.from_stats(report.stats)


def _suite(
    execute: Callable[[OutputSink], SuiteRun], suite: Literal["hidden", "purple"], battle_id: str, emit: EventSink,
    cancel: CancelToken,
) -> SuiteRun:
    """Run one suite through ``execute``, streaming its output and each test's outcome as events."""

    def on_output(origin: str, stream: str, text: str) -> None:
        emit(SandboxOutput(battle_id, f"{suite}:{origin}", "stderr" if stream == "stderr" else "stdout", text))

    cancel.check()
    run = execute(on_output)
    cancel.check()  # a box killed by the cancel answers "crashed": that is no test result
    for outcome in run.outcomes:
        emit(TestResult(battle_id, suite, outcome.name, outcome.status, outcome.reason))
    return run


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
    cancel: CancelToken | None = None,
) -> Measured:
    from logomesh.battle.hidden_suite import run_hidden

    token = cancel or CancelToken()
    source = submission.source
    hidden_runs = []

    def hidden_suite(on_output: OutputSink) -> SuiteRun:
        hidden_runs.append(run_hidden(box, task, source, on_output))
        return hidden_runs[-1].suite

    def purple_suite(on_output: OutputSink) -> SuiteRun:
        return box.run_suite(source, {PURPLE_TEST_FILE: submission.tests}, 60.0, on_output)

    hidden = _suite(hidden_suite, "hidden", battle_id, emit, token)
    hidden = locate_import_failure(box, source, hidden)
    if hidden.error and hidden.error.startswith(f"{IMPORT_FAILED} at "):
        emit(SandboxOutput(battle_id, "hidden:import", "stderr", f"{hidden.error}\n"))
    basis = hidden_runs[0].reference_observations if hidden_runs else b""
    purple = mutants = None
    if submission.tests.strip():
        purple = _suite(purple_suite, "purple", battle_id, emit, token)
        token.check()
        mutants = run_mutants(box, task, submission.tests, variants)
    if not red:
        return Measured(hidden, purple, mutants, (), reference_observations=basis)
    token.check()
    emit(StageStarted(battle_id, "red"))
    findings, coverage = red_findings(task, source, box, red_budget_s, seed, battle_id, emit, token)
    token.check()  # probes cut short by a killed box are no findings
    return Measured(hidden, purple, mutants, findings, coverage, basis)
