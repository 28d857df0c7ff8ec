"""The task library through the real sandbox, both backends: the issue's "done when".

Every reference solution scores 100% on its hidden suite; every labelled
submission with ``behaviour_defect: true`` fails at least one hidden test;
``good`` passes them all. Tasks are read from ``tasks/`` as they exist.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from logomesh.sandbox import Sandbox, make_sandbox
from logomesh.tasks import TaskSpec, all_tasks

TASKS = all_tasks()


@pytest.fixture(
    scope="module",
    params=[pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = make_sandbox(str(request.param))
    yield sandbox
    sandbox.close()


def _failures(box: Sandbox, source: str, task: TaskSpec) -> list[str]:
    run = box.run_suite(source, task.hidden_tests, timeout_s=60)
    assert run.total >= 12, f"{task.id}: only {run.total} hidden tests found"
    assert not run.tampered, run.tamper_reasons
    return [f"{o.name}: {o.status}: {o.reason}" for o in run.outcomes if o.status != "passed"]


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_reference_passes_every_hidden_test(box: Sandbox, task: TaskSpec) -> None:
    source = (task.root / "reference" / "solution.py").read_text(encoding="utf-8")
    assert _failures(box, source, task) == []


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_labelled_submissions_score_as_labelled(box: Sandbox, task: TaskSpec) -> None:
    wrong: list[str] = []
    for name in task.submission_names():
        labelled = task.labelled_submission(name)
        failures = _failures(box, labelled.submission.source, task)
        if name == "good" and failures:
            wrong.append(f"good fails: {failures[:3]}")
        if labelled.behaviour_defect and not failures:
            wrong.append(f"{name} ({labelled.label}) passes every hidden test")
    assert wrong == []
