"""T, testing integrity, and the report on the purple agent's own tests.

T = floor + span × pass rate of the judge's hidden tests (0.20 + 0.65 × rate:
100 % → 0.85, 0 % → 0.20). A suite that could not run (import error, whole-run
timeout) or that the harness caught tampering with counts as a 0 % pass rate.

The purple agent's tests never enter T. They are reported separately, with a
mutation-style measure of whether they test anything: how many of the task's
flawed variants (labelled submissions with ``behaviour_defect``) they reject;
a run that failed to import rejects nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from logomesh.scoring.config import ScoringConfig

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox, SuiteRun
    from logomesh.tasks import TaskSpec

PURPLE_TEST_FILE = "test_submission.py"


@dataclass(frozen=True)
class MutantReport:
    """How many of the task's flawed variants the purple tests reject (at least one test fails)."""

    caught: tuple[str, ...]
    missed: tuple[str, ...]

    @property
    def total(self) -> int:
        return len(self.caught) + len(self.missed)

    @property
    def rate(self) -> float:
        return len(self.caught) / self.total if self.total else 0.0


@dataclass(frozen=True)
class Testing:
    __test__: ClassVar[bool] = False  # not a pytest class, despite its name

    score: float
    pass_rate: float
    counted: bool  # False when the suite errored or was tampered with


def suite_valid(run: SuiteRun) -> bool:
    return run.total > 0 and run.error is None and not run.tampered


def pass_rate(run: SuiteRun | None) -> float:
    if run is None or not suite_valid(run):
        return 0.0
    return run.passed / run.total


def score_testing(hidden: SuiteRun, config: ScoringConfig) -> Testing:
    rate = pass_rate(hidden)
    return Testing(config.testing_floor + config.testing_span * rate, rate, suite_valid(hidden))


def suite_counts(run: SuiteRun | None) -> dict[str, Any]:
    if run is None:
        return {"passed": 0, "failed": 0, "total": 0}
    counts: dict[str, Any] = {"passed": run.passed, "failed": run.failed, "total": run.total}
    if run.error:
        counts["error"] = run.error.splitlines()[0] if run.error.strip() else "error"
    if run.tampered:
        counts["tampered"] = run.tamper_reason
    return counts


def flawed_variants(task: TaskSpec) -> dict[str, str]:
    """The sources of the task's labelled submissions with a behaviour defect, by name."""
    out: dict[str, str] = {}
    for name in task.submission_names():
        labelled = task.labelled_submission(name)
        if labelled.behaviour_defect:
            out[name] = labelled.submission.source
    return out


def run_mutants(
    box: Sandbox, task: TaskSpec, purple_tests: str, variants: Mapping[str, str] | None = None, timeout_s: float = 30.0
) -> MutantReport:
    """Run the purple tests against every flawed variant; a variant is caught when a test ran and did not pass.

    A suite-level error (the tests or the variant failed to import, the whole run timed out) catches
    nothing: tests that never ran measured nothing about the variant.
    """
    caught: list[str] = []
    missed: list[str] = []
    for name, source in sorted((variants if variants is not None else flawed_variants(task)).items()):
        run = box.run_suite(source, {PURPLE_TEST_FILE: purple_tests}, timeout_s=timeout_s)
        rejected = run.error is None and run.failed > 0
        (caught if rejected else missed).append(name)
    return MutantReport(tuple(caught), tuple(missed))
