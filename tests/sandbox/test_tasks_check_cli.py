"""``logomesh tasks check``: a real subprocess, a real sandbox, a task library copied and then broken."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.tasks import default_tasks_dir

CLI = [sys.executable, "-c", "from logomesh.cli import main; main()"]


def check(library: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOGOMESH_TASKS": str(library)}
    return subprocess.run([*CLI, "tasks", "check", *args, "--sandbox", "docker"], capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    shutil.copytree(default_tasks_dir() / "rate-limiter", tmp_path / "rate-limiter")
    return tmp_path


@pytest.mark.docker
@pytest.mark.slow  # full tier: test_tasks_cli checks a fresh scaffold end to end
def test_a_sound_task_passes(library: Path) -> None:
    done = check(library, "rate-limiter", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["ok"] is True


@pytest.mark.slow
@pytest.mark.docker
def test_a_judging_driver_and_a_mislabelled_submission_are_named(library: Path) -> None:
    driver = library / "rate-limiter" / "hidden" / "test_rate_limiter.py"
    driver.write_text(driver.read_text() + "\n\ndef test_judges_itself():\n    assert RateLimiter(1, 1.0)\n")
    labelled = library / "rate-limiter" / "submissions" / "fixed-window.json"
    data = json.loads(labelled.read_text())
    labelled.write_text(json.dumps({**data, "behaviour_defect": False, "label": "good-enough"}))
    done = check(library)
    assert done.returncode == 3
    assert "test_rate_limiter.py:" in done.stderr and "assert statement" in done.stderr
    assert "rate-limiter/fixed-window [good-enough]: not marked behaviour_defect but fails" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_task_is_a_usage_error(library: Path) -> None:
    done = check(library, "nope")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "unknown task 'nope'" in done.stderr
