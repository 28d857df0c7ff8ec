"""Any task library: ``tasks new | check | import`` and ``--tasks-dir`` on every command that reads tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import sampled

from logomesh.commands.common import use_tasks_dir
from logomesh.tasks import load_task_dir
from logomesh.tasks.scaffold import scaffold


def logomesh(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logomesh", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def _one_line(proc: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("logomesh: error:")]
    assert len(errors) == 1 and needle in errors[0], proc.stderr


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "lib"
    scaffold(folder, "my-task")
    return folder


TASKS_DIR_USERS = [
    ["tasks", "list"], ["tasks", "check"], ["battle", "run", "--task", "x", "--mock", "good"],
    ["score", "--task", "x", "--submission", "s.json"], ["campaign", "run", "--mock", "good"],
    ["green", "serve"], ["console"],
]
TASKS_DIR_IDS = [f"command{i}" for i in range(len(TASKS_DIR_USERS))]  # the ids pytest gave them


@pytest.mark.parametrize("command", sampled(TASKS_DIR_USERS, TASKS_DIR_IDS, keep={"command0", "command6"}))
def test_a_bad_tasks_dir_is_one_usage_line(command: list[str], tmp_path: Path) -> None:
    _one_line(logomesh(*command, "--tasks-dir", str(tmp_path / "missing")), 2, "no such folder")
    _one_line(logomesh(*command, "--tasks-dir", str(tmp_path)), 2, "holds no task folder")


def test_new_scaffolds_a_loadable_task_and_refuses_to_overwrite(tmp_path: Path) -> None:
    proc = logomesh("tasks", "new", "fresh-one", "--into", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    task = load_task_dir(tmp_path / "fresh-one")
    assert task.id == "fresh-one" and list(task.hidden_tests) == ["test_fresh_one.py"]
    assert task.submission_names() == ["good", "odd-sum"] and task.labelled_submission("odd-sum").behaviour_defect
    _one_line(logomesh("tasks", "new", "fresh-one", "--into", str(tmp_path)), 2, "already exists")
    _one_line(logomesh("tasks", "new", "Bad_Id", "--into", str(tmp_path)), 2, "must match")


def test_tasks_dir_and_the_environment_select_the_library(library: Path) -> None:
    by_option = logomesh("tasks", "list", "--json", "--tasks-dir", str(library))
    by_env = logomesh("tasks", "list", "--json", env={"LOGOMESH_TASKS": str(library)})
    builtin = logomesh("tasks", "list", "--json")
    assert [t["id"] for t in json.loads(by_option.stdout)] == ["my-task"]
    assert by_env.stdout == by_option.stdout
    assert "my-task" not in {t["id"] for t in json.loads(builtin.stdout)}


def test_the_consoles_picker_shows_the_selected_library(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.task_library import load_tasks

    monkeypatch.setenv("LOGOMESH_TASKS", "/nowhere")  # restored after the test; use_tasks_dir overrides it
    use_tasks_dir(library)
    tasks, problems = load_tasks()
    assert [t.id for t in tasks] == ["my-task"] and problems == []


def test_import_names_the_known_benchmarks(tmp_path: Path) -> None:
    _one_line(logomesh("tasks", "import", "mbpp", "--into", str(tmp_path)), 2, "humaneval")
    _one_line(logomesh("tasks", "check", str(tmp_path)), 2, "neither a task folder")


@pytest.mark.docker
def test_check_passes_a_fresh_scaffold_and_catches_a_mislabelled_variant(library: Path) -> None:
    assert logomesh("tasks", "check", str(library / "my-task"), "--sandbox", "docker").returncode == 0
    whole = logomesh("tasks", "check", "--tasks-dir", str(library), "--sandbox", "docker")
    assert whole.returncode == 0 and "1 task(s) checked, 0 problem(s)" in whole.stdout
    assert logomesh("tasks", "check", str(library), "--min-drivers", "4", "--sandbox", "docker").returncode == 3
    flawed = library / "my-task" / "submissions" / "odd-sum.json"
    data = json.loads(flawed.read_text())
    flawed.write_text(json.dumps({**data, "behaviour_defect": False}))
    proc = logomesh("tasks", "check", str(library), "--sandbox", "docker")
    assert proc.returncode == 3 and "odd-sum [odd-sum]: not marked behaviour_defect but fails" in proc.stderr


@pytest.mark.docker
def test_a_battle_runs_on_a_task_of_another_library(library: Path, tmp_path: Path) -> None:
    proc = logomesh("battle", "run", "--tasks-dir", str(library), "--task", "my-task", "--mock", "odd-sum",
                    "--no-red", "--sandbox", "docker", "--home", str(tmp_path / "home"), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["task_id"] == "my-task" and result["status"] == "scored"
    assert result["tests"]["hidden"]["total"] == 3 and result["tests"]["hidden"]["failed"] >= 1
