"""The red agent attacks the task's interface, however the code spells it.

Every family used to ask the code's text whether it defines the entry point (a module-level ``def`` or
``class``). Code that assigned it instead (``RateLimiter = _Impl``) was attacked by no family: the lockless
limiter so spelled scored 0.828 against 0.764 for the same code spelled plainly. Each labelled submission and
reference of the library, its declared names spelled by assignment, must draw the same variants from every
family as when spelled plainly; and the red agent finds the lockless limiter's race either way, where the
locked one so spelled draws no finding. Both backends.
"""

from __future__ import annotations

import re

import pytest

from logomesh.context import BattleContext
from logomesh.red import attack
from logomesh.red.attacks import families
from logomesh.red.context import AttackContext
from logomesh.sandbox import Sandbox
from logomesh.tasks import TaskSpec, all_tasks, load_task


def assigned(source: str, task: TaskSpec) -> str:
    """``source`` with each module-level ``def``/``class`` the task declares renamed, then assigned its name."""
    names = dict.fromkeys([task.entry_point, *(t.split(".")[0] for t in task.attack_targets)])
    spelled = source
    for name in names:
        spelled, count = re.subn(rf"^(def|class) {name}\b", rf"\1 _impl_{name}", spelled, flags=re.MULTILINE)
        if count:
            spelled += f"\n\n{name} = _impl_{name}\n"
    assert spelled != source, f"{task.id}: nothing of {list(names)} is defined at module level"
    return spelled


def _variants(task: TaskSpec, source: str) -> dict[str, list[str]]:
    ctx = AttackContext.build(task, source)
    return {f.name: [v.id for entry in ctx.entries() for v in f.variants(ctx, entry)] for f in families()}


@pytest.mark.parametrize("task_id", [t.id for t in all_tasks()])
def test_every_family_attacks_the_declared_names_however_they_are_spelled(task_id: str) -> None:
    task = load_task(task_id)
    sources = {"reference": task.reference,
               **{n: task.labelled_submission(n).submission.source for n in task.submission_names()}}
    for label, source in sources.items():
        plain = _variants(task, source)
        assert any(plain.values()), (task_id, label)
        assert _variants(task, assigned(source, task)) == plain, (task_id, label)


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    return either_box


def test_the_race_of_a_limiter_assigned_its_name_is_found(box: Sandbox) -> None:
    task = load_task("rate-limiter")
    found = {}
    for label in ("no-lock", "good"):
        source = assigned(task.labelled_submission(label).submission.source, task)
        report = attack(task, source, box, BattleContext(seed=0), budget_s=4.0)
        found[label] = sorted({(f.family, f.severity) for f in report.findings if f.severity != "low"})
    assert ("race", "high") in found["no-lock"], found
    assert found["good"] == [], found
