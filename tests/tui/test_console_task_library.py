"""The console opens even when one task folder of the library is broken."""

from __future__ import annotations

import shutil
from pathlib import Path

from logomesh.tasks import default_tasks_dir
from tui.task_library import load_tasks


def test_a_broken_task_folder_is_reported_and_the_rest_load(tmp_path: Path) -> None:
    library = tmp_path / "tasks"
    shutil.copytree(default_tasks_dir() / "rate-limiter", library / "rate-limiter")
    (library / "half-written").mkdir(parents=True)
    tasks, problems = load_tasks(library)
    assert [t.id for t in tasks] == ["rate-limiter"]
    assert len(problems) == 1 and "half-written: no task.toml" in problems[0]


def test_a_missing_library_is_one_problem(tmp_path: Path) -> None:
    tasks, problems = load_tasks(tmp_path / "nowhere")
    assert tasks == []
    assert problems == [f"task library {tmp_path / 'nowhere'} not found (set LOGOMESH_TASKS to its folder)"]
