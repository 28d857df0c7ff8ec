"""The tasks the console offers: every loadable folder of the library, and a line for each broken one."""

from __future__ import annotations

from pathlib import Path

from logomesh.tasks import TaskError, TaskSpec, default_tasks_dir, load_task_dir


def load_tasks(tasks_dir: Path | None = None) -> tuple[list[TaskSpec], list[str]]:
    """(tasks, problems): one broken task folder must not keep the console from opening."""
    directory = tasks_dir or default_tasks_dir()
    if not directory.is_dir():
        return [], [f"task library {directory} not found (set LOGOMESH_TASKS to its folder)"]
    tasks: list[TaskSpec] = []
    problems: list[str] = []
    for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
        try:
            tasks.append(load_task_dir(folder))
        except TaskError as exc:
            problems.append(str(exc))
    return tasks, problems
