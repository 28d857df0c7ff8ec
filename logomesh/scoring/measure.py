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

from logomesh.events import FindingConfirmed, SandboxOutput, StageStarted, TestResult
from logomesh.findings import Finding
from logomesh.scoring.import_probe import IMPORT_FAILED, locate_import_failure
from logomesh.scoring.logic import RED_NOT_RUN, RedCoverage
from logomesh.scoring.testing import PURPLE_TEST_FILE, MutantReport, run_mutants, task_interface

if TYPE_CHECKING:
    from logomesh.context import BattleContext
    from logomesh.sandbox import Sandbox, SuiteRun
    from logomesh.sandbox.base import OutputSink
    from logomesh.scoring.judging import Judging
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
    # modules the code's processes loaded in the judge's other runs of it: the hidden suite's reruns in another
    # setting and the red agent's probes (``sandbox/loads.py``)
    probe_loads: tuple[str, ...] = ()


@dataclass(frozen=True)
class RedMeasured:
    """What the red stage measured: confirmed findings and how far it reached."""

    findings: tuple[Finding, ...]
    coverage: RedCoverage


def red_findings(task: TaskSpec, source: str, box: Sandbox, budget_s: float, battle: BattleContext) -> RedMeasured:
    from logomesh.red import attack

    report = attack(task, source, box, battle, budget_s=budget_s)
    return RedMeasured(tuple(report.findings), RedCoverage.from_stats(report.stats))


def _suite(
    execute: Callable[[OutputSink], SuiteRun], suite: Literal["hidden", "purple"], battle: BattleContext,
) -> SuiteRun:
    """Run one suite through ``execute``, streaming its output and each test's outcome as events."""
    battle_id, emit = battle.battle_id, battle.emit

    def on_output(origin: str, stream: str, text: str) -> None:
        emit(SandboxOutput(battle_id, f"{suite}:{origin}", "stderr" if stream == "stderr" else "stdout", text))

    battle.cancel.check()
    run = execute(on_output)
    battle.cancel.check()  # a box killed by the cancel answers "crashed": that is no test result
    for outcome in run.outcomes:
        emit(TestResult(battle_id, suite, outcome.name, outcome.status, outcome.reason))
    return run


def measure(task: TaskSpec, submission: Submission, box: Sandbox, judging: Judging, battle: BattleContext) -> Measured:
    """What ``judging`` asks to be measured of ``submission`` in the open ``box``, for the battle ``battle``."""
    from logomesh.sandbox.loads import LoadsSeen
    from logomesh.tasks.hidden_suite import run_hidden

    battle_id, emit, cancel = battle.battle_id, battle.emit, battle.cancel
    source = submission.source
    hidden_runs = []
    # Every observed run of the code adds what it loaded to the hidden suite's record: code that imports a banned
    # module only in the setting of a rerun, or on a probe's calls, is seen there.
    watched = LoadsSeen(box, source)

    def hidden_suite(on_output: OutputSink) -> SuiteRun:
        hidden_runs.append(run_hidden(watched, task, source, on_output, seed=battle.seed))
        return hidden_runs[-1].suite

    def purple_suite(on_output: OutputSink) -> SuiteRun:
        variants = judging.variants if judging.variants is not None else task.flawed_variants()
        return box.run_suite(source, {PURPLE_TEST_FILE: submission.tests}, 60.0, on_output,
                             task_interface(task, variants))

    hidden = _suite(hidden_suite, "hidden", battle)
    hidden = locate_import_failure(box, source, hidden)
    if hidden.error and hidden.error.startswith(f"{IMPORT_FAILED} at "):
        emit(SandboxOutput(battle_id, "hidden:import", "stderr", f"{hidden.error}\n"))
    basis = hidden_runs[0].reference_observations if hidden_runs else b""
    keyed = hidden_runs[0].findings if hidden_runs else ()  # answers that followed how the code was started
    for finding in keyed:
        emit(FindingConfirmed(battle_id, finding.family, finding.severity, finding.cwe,
                              f"{finding.summary}: {finding.evidence}"))
    purple = mutants = None
    if submission.tests.strip():
        purple = _suite(purple_suite, "purple", battle)
        cancel.check()
        mutants = run_mutants(box, task, submission.tests, judging.variants)
    if not judging.red:
        return Measured(hidden, purple, mutants, keyed, reference_observations=basis, probe_loads=watched.seen())
    cancel.check()
    emit(StageStarted(battle_id, "red"))
    red = red_findings(task, source, watched, judging.red_budget_s, battle)
    cancel.check()  # probes cut short by a killed box are no findings
    return Measured(hidden, purple, mutants, (*keyed, *red.findings), red.coverage, basis, watched.seen())
