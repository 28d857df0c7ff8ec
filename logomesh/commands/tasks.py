"""``logomesh tasks list`` and ``logomesh tasks check``."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from logomesh.commands.common import EXIT_USAGE, EXIT_VERIFY_FAILED, JsonOption, SandboxOption, fail

app = typer.Typer(help="The task library.", no_args_is_help=True)


@app.command("list")
def list_tasks(as_json: JsonOption = False) -> None:
    """List the tasks in the library."""
    from logomesh.tasks import TaskError, all_tasks

    try:
        tasks = all_tasks()
    except TaskError as exc:
        fail(str(exc))
    if as_json:
        rows = [
            {
                "id": t.id,
                "title": t.title,
                "entry_point": t.entry_point,
                "hidden_tests": len(t.hidden_tests),
                "submissions": t.submission_names(),
                "spec_sha256": t.spec_sha256,
                "hidden_sha256": t.hidden_sha256,
            }
            for t in tasks
        ]
        print(json.dumps(rows, indent=2))
        return
    width = max((len(t.id) for t in tasks), default=2)
    for t in tasks:
        print(f"{t.id:<{width}}  {t.title}  [mocks: {', '.join(t.submission_names())}]")


@app.command("check")
def check_tasks(
    task_ids: Annotated[list[str] | None, typer.Argument(help="Task ids (default: the whole library).")] = None,
    sandbox: SandboxOption = "auto",
    as_json: JsonOption = False,
) -> None:
    """Check tasks through a sandbox: drivers judge nothing, the reference is deterministic, labels hold.

    Exit 3 when a task is broken (each problem is printed on stderr).
    """
    from logomesh.sandbox import SandboxUnavailable, open_sandbox
    from logomesh.task_check import check_task
    from logomesh.tasks import TaskError, all_tasks, load_task

    try:
        tasks = [load_task(t) for t in task_ids] if task_ids else all_tasks()
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)
    checks = []
    try:
        with open_sandbox(sandbox) as box:
            for task in tasks:
                check = check_task(box, task)
                checks.append(check)
                if not as_json:
                    print("\n".join(check.lines))
    except SandboxUnavailable as exc:
        fail(str(exc))
    problems = [p for c in checks for p in c.problems]
    if as_json:
        print(json.dumps([{"task_id": c.task_id, "ok": c.ok, "problems": c.problems, "runs": c.lines}
                          for c in checks], indent=2))
    for problem in problems:
        print(f"logomesh: problem: {problem}", file=sys.stderr)
    if problems:
        raise typer.Exit(EXIT_VERIFY_FAILED)
