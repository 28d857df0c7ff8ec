"""Races no invariant sees, found in the client-side history; both backends (issue 31, point 2).

Code that refuses or misses when another thread holds its lock (a non-blocking acquire) can keep every count the
task's invariants check: the cache only ever returns values put under the key asked, the limiter often still
grants exactly its limit over the run. But a refusal that completed before a granted call began, or a miss of a key no
call had evicted, is an answer no serial order of the reference gives. The driver's history shows it; the
reference and the library's good solutions, beside them, never show one.
"""

from __future__ import annotations

import pytest
from tiers import sampled

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.sandbox import Sandbox
from logomesh.tasks import load_task

from .tricks import race_violations

TRY_ACQUIRE = ("        if not self._lock.acquire(blocking=False):\n            return {refusal}\n"
               "        self._lock.release()\n")


def refusing(source: str, method: str, refusal: str) -> str:
    """``source`` whose ``method`` first tries the lock without waiting, and answers ``refusal`` when it is held."""
    head = f"    def {method}(self, "
    at = source.index(head)
    body = source.index(":\n", at) + 2
    changed = source[:body] + TRY_ACQUIRE.format(refusal=refusal) + source[body:]
    assert changed != source
    return changed


CASES = {"rate-limiter": ("allow", "False"), "lru-cache": ("get", "None")}


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


@pytest.mark.parametrize("task_id", sampled(sorted(CASES), sorted(CASES), keep={"lru-cache"}))
def test_refusing_under_contention_is_not_linearizable_and_correct_code_is(box: Sandbox, task_id: str) -> None:
    task = load_task(task_id)
    method, refusal = CASES[task_id]
    hostile = race_violations(box, task, refusing(task.reference, method, refusal), trials=8)
    assert hostile.unexplained and all(v.startswith("not linearizable") for v in hostile.unexplained)
    assert hostile.harness_errors == []
    if task_id == "lru-cache":  # a miss is an answer the cache's invariants allow: only the history shows it
        assert hostile.violations == []
    for name, source in (("reference", task.reference), ("good", task.labelled_submission("good").submission.source)):
        seen = race_violations(box, task, source, trials=8)
        assert (seen.violations, seen.unexplained, seen.harness_errors) == ([], [], []), name


@pytest.mark.slow  # full tier (two attacks, ~33 s): the history test above keeps the principle in the fast tier
def test_the_agent_reports_it_as_a_race_and_not_the_reference(box: Sandbox) -> None:
    task = load_task("lru-cache")
    hostile = attack(task, refusing(task.reference, "get", "None"), box, BattleContext(seed=0), budget_s=4.0)
    races = [f for f in hostile.findings if f.family == "race"]
    assert len(races) == 1 and races[0].severity == "high" and "not linearizable" in races[0].evidence
    control = attack(task, task.reference, box, BattleContext(seed=0), budget_s=4.0)
    assert [f for f in control.findings if f.family == "race"] == []
