"""T, testing integrity, and the report on the purple agent's own tests.

T = floor + span × pass rate of the judge's hidden tests (0.20 + 0.65 × rate:
100 % → 0.85, 0 % → 0.20). A suite that could not run (import error, whole-run
timeout) or that the harness caught tampering with counts as a 0 % pass rate.

The purple agent's tests never enter T. They are judged as mutation testing
judges tests: first against the task's reference, where a test that does not
pass is a *wrong claim* (it fails on correct code) and counts for nothing
after; then against each of the task's flawed variants (labelled submissions
with ``behaviour_defect``), which are *caught* only when a test that passed on
the reference does not pass on them. A run that failed to import catches
nothing. So adding a test that fails on correct code can never catch a
variant, nor raise the score (``logic._purple_part``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from logomesh.scoring.config import ScoringConfig
from logomesh.syntax import PARSE_ERRORS, parse
from logomesh.tasks.module_check import defined_names

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox, SuiteRun
    from logomesh.tasks import TaskSpec

PURPLE_TEST_FILE = "test_submission.py"


@dataclass(frozen=True)
class MutantReport:
    """Which of the task's flawed variants the purple tests catch, and which of the tests are wrong claims.

    ``caught``: variants on which a test that passed on the reference did not pass. ``wrong``: the tests that
    did not pass on the reference (all of them when the suite could not run there)."""

    caught: tuple[str, ...]
    missed: tuple[str, ...]
    wrong: tuple[str, ...] = ()

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


def task_interface(task: TaskSpec, variants: Mapping[str, str]) -> frozenset[str]:
    """The names of the code's module the purple's tests may read, on the submission, the reference and every
    variant alike: the task's entry point and the public names that the reference and every variant all bind at
    module level (read from their text, never run).

    A name bound by one and not another (a helper, a constant, ``annotations`` from ``__future__``) would tell
    them apart without running them: a test asserting it exists would "catch" every variant that lacks it."""
    names: set[str] | None = None
    for source in (task.reference, *variants.values()):
        try:
            bound = {n for n in defined_names(parse(source)) if not n.startswith("_")}
        except PARSE_ERRORS:
            bound = set()
        names = bound if names is None else names & bound
    return frozenset((names or set()) | {task.entry_point})


def run_mutants(
    box: Sandbox, task: TaskSpec, purple_tests: str, variants: Mapping[str, str] | None = None, timeout_s: float = 30.0
) -> MutantReport:
    """Run the purple tests against the task's reference, then every flawed variant, and judge them
    (``judge_mutants``). The tests read only the task's interface of each (``task_interface``)."""
    tests = {PURPLE_TEST_FILE: purple_tests}
    chosen = variants if variants is not None else task.flawed_variants()
    interface = task_interface(task, chosen)
    on_reference = box.run_suite(task.reference, tests, timeout_s=timeout_s, interface=interface)
    on_variants = {name: box.run_suite(source, tests, timeout_s=timeout_s, interface=interface)
                   for name, source in sorted(chosen.items())}
    return judge_mutants(on_reference, on_variants)


def judge_mutants(on_reference: SuiteRun, on_variants: Mapping[str, SuiteRun]) -> MutantReport:
    """Mutation testing's judgement: a test counts only if it passed on the reference; a variant is caught
    when such a test ran on it and did not pass. A suite-level error (the tests or the variant failed to import,
    the whole run timed out) and a run that touched the judge (tampered) catch nothing: they measured nothing."""
    names = [o.name for o in on_reference.outcomes]
    if on_reference.error is not None or on_reference.tampered:
        wrong = set(names)
    else:
        wrong = {o.name for o in on_reference.outcomes if o.status != "passed"}
    caught: list[str] = []
    missed: list[str] = []
    for name, run in sorted(on_variants.items()):
        ran = run.error is None and not run.tampered
        rejected = ran and any(o.status != "passed" and o.name not in wrong for o in run.outcomes)
        (caught if rejected else missed).append(name)
    return MutantReport(tuple(caught), tuple(missed), tuple(n for n in names if n in wrong))


def sound_pass_rate(run: SuiteRun | None, mutants: MutantReport | None) -> float:
    """The share of the purple's tests that pass on the submission and are no wrong claim (0 for a suite
    that could not run): a test that fails on the reference lowers it whatever it does on the submission."""
    if run is None or not suite_valid(run):
        return 0.0
    wrong = set(mutants.wrong) if mutants is not None else set()
    return sum(1 for o in run.outcomes if o.status == "passed" and o.name not in wrong) / run.total
