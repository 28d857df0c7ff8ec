"""Check a task folder: are its hidden drivers sound, and do they judge its labelled submissions as labelled?

Everything runs through a real sandbox, with the same observation judging
that battles use (``hidden_suite``). A task passes when:

* its drivers judge nothing themselves: no ``assert``, no ``self.assert*`` or
  ``self.fail``, no ``unittest`` (expected values must never enter the box);
* there are at least ``min_hidden`` drivers (1 by default: a library sets its own
  floor, as the built-in one does with 12 in ``tests/test_task_library.py``; an
  imported HumanEval problem may have a single assert), and the reference completes each
  one with at least one observation, twice, with byte-identical observations
  (a driver that observes timing or unseeded randomness shows up here);
* every labelled submission without a behaviour defect passes every hidden
  test (except ``race`` labels, whose failures may depend on timing), and
  every one with a behaviour defect fails at least one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from logomesh.sandbox.base import Sandbox
from logomesh.sandbox.setting import draw_ordinary
from logomesh.sandbox.verdict import observations_bytes
from logomesh.syntax import parse
from logomesh.tasks import TaskSpec
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden

MIN_HIDDEN = 1  # the default floor; ``logomesh tasks check --min-drivers N`` raises it
_JUDGING_CALLS = ("assert", "fail")


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # one per run, for a person

    @property
    def ok(self) -> bool:
        return not self.problems


def judging_code(file_name: str, source: str) -> list[str]:
    """Places where a driver decides a verdict itself (asserts, unittest) instead of observing."""
    found: list[str] = []
    for node in ast.walk(parse(source, filename=file_name)):
        if isinstance(node, ast.Assert):
            found.append(f"{file_name}:{node.lineno}: assert statement")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                and node.func.attr.startswith(_JUDGING_CALLS):
            found.append(f"{file_name}:{node.lineno}: self.{node.func.attr}()")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if any(n.split(".")[0] in ("unittest", "pytest") for n in names):
                found.append(f"{file_name}:{node.lineno}: imports a test framework (drivers only observe)")
    return found


def check_task(box: Sandbox, task: TaskSpec, min_hidden: int = MIN_HIDDEN) -> TaskCheck:
    check = TaskCheck(task.id)
    for name, source in sorted(task.hidden_tests.items()):
        check.problems += [f"{task.id}: {p}" for p in judging_code(name, source)]
    first = box.observe_suite(task.reference, task.hidden_tests)
    # The second run starts the reference as an ordinary program (sandbox/setting.py): a reference whose answers
    # follow how it was started, or vary between runs, would make correct code look keyed or wrong.
    second = box.observe_suite(task.reference, task.hidden_tests, setting=draw_ordinary(0))
    if len(first.tests) < min_hidden:
        check.problems.append(f"{task.id}: only {len(first.tests)} hidden tests (need >= {min_hidden})")
    for test in first.tests:
        if test.status != "observed":
            check.problems.append(f"{task.id}: reference does not complete {test.name}: {test.reason}")
        elif not test.observations:
            check.problems.append(f"{task.id}: {test.name} observes nothing")
        elif any(isinstance(o, list) and o and o[0] == "ended-by" for o in test.observations):
            check.problems.append(f"{task.id}: {test.name} ends with an exception on the reference")
    if first.error or first.tamper_reasons:
        check.problems.append(f"{task.id}: reference run: {first.error or first.tamper_reasons}")
    if observations_bytes(first) != observations_bytes(second):
        pairs = zip(first.tests, second.tests, strict=False)
        differing = [a.name for a, b in pairs if a.observations != b.observations]
        check.problems.append(f"{task.id}: reference observations differ between two runs (the classic start and "
                              f"an ordinary setting): {differing[:3]}")
    check.lines.append(f"{task.id}: reference completes {sum(t.status == 'observed' for t in first.tests)}"
                       f"/{len(first.tests)} drivers ({first.duration_s:.2f} s)")
    cache = ReferenceCache()
    cache.remember(box, task, first)  # the labelled runs are judged against this run, not a third one
    for name in task.submission_names():
        labelled = task.labelled_submission(name)
        run = run_hidden(box, task, labelled.submission.source, cache=cache).suite
        failing = [f"{o.name}: {o.reason}" for o in run.outcomes if o.status != "passed"]
        check.lines.append(f"  {name:<22} {labelled.label:<17} hidden {run.passed:>2}/{run.total:<2}"
                           + (f"  first failure: {failing[0]}" if failing else ""))
        where = f"{task.id}/{name} [{labelled.label}]"
        if labelled.behaviour_defect and not failing:
            check.problems.append(f"{where}: marked behaviour_defect but passes every hidden test")
        if not labelled.behaviour_defect and failing and labelled.label != "race":
            check.problems.append(f"{where}: not marked behaviour_defect but fails: {failing[:2]}")
    return check
