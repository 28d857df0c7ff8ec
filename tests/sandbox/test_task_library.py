"""The task library through the real sandbox, both backends, judged as battles judge it.

``task_check.check_task`` per task: the drivers judge nothing, the reference
completes every driver deterministically (two runs, byte-identical
observations), ``good`` and the other defect-free labels pass every hidden
test, each ``behaviour_defect: true`` submission fails at least one.
Tasks are read from ``tasks/`` as they exist.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tiers import sampled

from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.tasks import TaskSpec, all_tasks
from logomesh.tasks.check import check_task

TASKS = all_tasks()


@pytest.fixture(
    scope="module",
    params=[pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = open_sandbox(str(request.param))
    yield sandbox
    sandbox.close()


@pytest.mark.parametrize("task", sampled(TASKS, [t.id for t in TASKS],
                                         keep={"rate-limiter", "safe-calculator"}))
def test_task_judges_its_labelled_submissions_as_labelled(box: Sandbox, task: TaskSpec) -> None:
    check = check_task(box, task)
    assert check.problems == [], "\n".join(check.lines)
    assert any("good" in line and "hidden" in line for line in check.lines)
