"""``logomesh tasks list | show | check | new | import``: any task library, not just the built-in one."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logomesh.commands.common import (
    EXIT_USAGE,
    EXIT_VERIFY_FAILED,
    JsonOption,
    SandboxOption,
    TasksDirOption,
    fail,
)

if TYPE_CHECKING:
    from logomesh.tasks import TaskSpec

app = typer.Typer(help="The task library (docs/tasks.md).", no_args_is_help=True)

@app.command("list")
def list_tasks(tasks_dir: TasksDirOption = None, as_json: JsonOption = False) -> None:
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


def resolve_targets(targets: list[str]) -> list[TaskSpec]:
    """Each target is a task folder, a library folder (every task in it) or a task id in the selected library."""
    from logomesh.tasks import TaskError, all_tasks, load_task, load_task_dir

    if not targets:
        return all_tasks()
    found: list[TaskSpec] = []
    for target in targets:
        path = Path(target)
        if (path / "task.toml").is_file():
            found.append(load_task_dir(path.resolve()))
        elif path.is_dir():
            if not any((p / "task.toml").is_file() for p in path.iterdir()):
                raise TaskError(f"{target}: neither a task folder (no task.toml) nor a library of task folders")
            found += all_tasks(path)
        else:
            found.append(load_task(target))
    return found


@app.command("show")
def show_task(
    target: Annotated[str, typer.Argument(metavar="ID|DIR", help="A task id or a task folder.")],
    tasks_dir: TasksDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one task: its entry point, drivers and contract (stated by the task, inferred from its tests)."""
    from logomesh.tasks import TaskError

    try:
        found = resolve_targets([target])
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)
    if len(found) != 1:
        fail(f"{target}: a library of {len(found)} tasks; name one task", EXIT_USAGE)
    task = found[0]
    if as_json:
        print(json.dumps({"id": task.id, "title": task.title, "entry_point": task.entry_point,
                          "hidden_tests": len(task.hidden_tests), "contract": task.contract.as_args()}, indent=2))
        return
    print("\n".join(task_lines(task)))


def task_lines(task: TaskSpec) -> list[str]:
    """What ``tasks show`` prints: the stated contract and the inferred one apart, one clause a line."""
    from logomesh.tasks.contracts import clauses

    contract = task.contract
    lines = [f"{task.id}: {task.title}", f"entry point: {task.entry_point}",
             f"hidden drivers: {len(task.hidden_tests)} file(s)",
             f"requires (stated): {contract.requires or '-'}",
             f"answer: {', '.join(contract.answer) or 'exactly'}"]
    if contract.holds:
        lines.append(f"holds: {contract.holds}")
    inferred = clauses(contract.inferred)
    lines.append("inferred from its tests (outside it a divergence is low):" if inferred
                 else "inferred from its tests: -")
    return lines + [f"  {clause}" for clause in inferred]


@app.command("check")
def check_tasks(
    targets: Annotated[list[str] | None, typer.Argument(
        metavar="[ID|DIR]...", help="Task ids, task folders or library folders (default: the whole library).")] = None,
    sandbox: SandboxOption = "auto",
    min_drivers: Annotated[int, typer.Option(
        "--min-drivers", help="Fail a task with fewer hidden test functions than this.")] = 1,
    tasks_dir: TasksDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check tasks through a sandbox: drivers judge nothing, the reference is deterministic, labels hold.

    Exit 3 when a task is broken (each problem is printed on stderr).
    """
    from logomesh.sandbox import SandboxUnavailable, open_sandbox
    from logomesh.tasks import TaskError
    from logomesh.tasks.check import check_task

    if min_drivers < 1:
        fail("--min-drivers must be at least 1", EXIT_USAGE)
    try:
        tasks = resolve_targets(targets or [])
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)
    checks = []
    try:
        with open_sandbox(sandbox) as box:
            for task in tasks:
                check = check_task(box, task, min_hidden=min_drivers)
                checks.append(check)
                if not as_json:
                    print("\n".join(check.lines))
    except SandboxUnavailable as exc:
        fail(str(exc))
    problems = [p for c in checks for p in c.problems]
    if as_json:
        print(json.dumps([{"task_id": c.task_id, "ok": c.ok, "problems": c.problems, "runs": c.lines}
                          for c in checks], indent=2))
    else:
        print(f"{len(checks)} task(s) checked, {len(problems)} problem(s)")
    for problem in problems:
        print(f"logomesh: problem: {problem}", file=sys.stderr)
    if problems:
        raise typer.Exit(EXIT_VERIFY_FAILED)


@app.command("new")
def new_task(
    task_id: Annotated[str, typer.Argument(
        metavar="ID", help="The new task's id: lower-case letters, digits and hyphens; no leading hyphen.")],
    into: Annotated[Path | None, typer.Option(
        "--into", help="Library folder to create it in (default: $LOGOMESH_TASKS, else the built-in tasks/).")] = None,
) -> None:
    """Scaffold a task folder with a small working example to replace (passes 'tasks check' as written)."""
    from logomesh.tasks import TaskError, default_tasks_dir
    from logomesh.tasks.scaffold import scaffold

    try:
        root = scaffold(into or default_tasks_dir(), task_id)
    except TaskError as exc:
        fail(str(exc), EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot write the task folder: {exc.strerror or exc}")
    print(root)


@app.command("import")
def import_tasks(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="The benchmark to import: humaneval.")],
    into: Annotated[Path, typer.Option("--into", help="Library folder to write one task folder per problem into.")],
    as_json: JsonOption = False,
) -> None:
    """Build a task library from a benchmark (docs/tasks.md, "HumanEval as a library")."""
    from logomesh.tasks.importers import ImportProblem, find_importer

    try:
        importer = find_importer(source)
    except ImportProblem as exc:
        fail(str(exc), EXIT_USAGE)
    if into.exists() and not into.is_dir():
        fail(f"--into {into}: not a folder", EXIT_USAGE)
    try:
        report = importer(into)
    except ImportProblem as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write into {into}: {exc.strerror or exc}")
    if as_json:
        print(json.dumps(report.as_json(), indent=2))
        return
    print(f"{len(report.tasks)} tasks, {report.drivers} hidden drivers written to {into}")
    print(f"expected values still bound in drivers: {len(report.expected_survivors)} task(s) "
          f"({len(report.literal_survivors)} as literals): {', '.join(sorted(report.expected_survivors)) or '-'}")
    for task_id, kinds in sorted(report.looser.items()):
        said = "answer" in report.contracts.get(task_id, ())
        print(f"  {task_id}: the check accepts more than the reference's exact answer ({', '.join(kinds)})"
              + ("; its [contract] says so" if said else ""))
    stated = [t for t, keys in report.contracts.items() if "requires" in keys]
    answers = [t for t, keys in report.contracts.items() if "answer" in keys]
    print(f"contracts from the prompts: {len(report.contracts)} task(s), {len(stated)} with a precondition, "
          f"{len(answers)} with an answer equivalence")
