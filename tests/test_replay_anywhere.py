"""Replay from the ledger alone: every kind of entry replays, exit 0, in another process on another library.

Built-in task, an imported HumanEval task and a ``tasks new`` task, with the red agent on and off, and an
injection run's attempts (a success and a miss, against the obeying mock) are recorded under one home; each is
replayed by a fresh process whose ``LOGOMESH_TASKS`` names a library that holds none of them. The intent check's
reference set, the task and its drivers come from the entry; the injection run's own entry is refused in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.tasks import default_tasks_dir

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _cli(*args: str, home: Path, tasks: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logomesh", *args, "--home", str(home)], capture_output=True,
                          text=True, timeout=900, env={**os.environ, "LOGOMESH_TASKS": str(tasks)})


def _plain(*args: str, tasks: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logomesh", *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "LOGOMESH_TASKS": str(tasks)})


def test_every_kind_of_entry_replays_from_another_process_on_another_library(tmp_path: Path) -> None:
    humaneval, mine, other = tmp_path / "humaneval", tmp_path / "mine", tmp_path / "other"
    made = _plain("tasks", "import", "humaneval", "--into", str(humaneval), tasks=default_tasks_dir())
    assert made.returncode == 0, made.stderr
    made = _plain("tasks", "new", "my-task", "--into", str(mine), tasks=default_tasks_dir())
    assert made.returncode == 0, made.stderr
    made = _plain("tasks", "new", "unrelated", "--into", str(other), tasks=default_tasks_dir())
    assert made.returncode == 0, made.stderr

    home = tmp_path / "home"
    battles = {  # battle id: (library, task, red)
        "builtin-red": (default_tasks_dir(), "lru-cache", True),
        "builtin-nored": (default_tasks_dir(), "rate-limiter", False),
        "humaneval-red": (humaneval, "humaneval-0", True),
        "humaneval-nored": (humaneval, "humaneval-12", False),
        "new-red": (mine, "my-task", True),
        "new-nored": (mine, "my-task", False),
    }
    for battle_id, (library, task, red) in battles.items():
        red_args = ["--red-budget", "1"] if red else ["--no-red"]
        run = _cli("battle", "run", "--task", task, "--mock", "good", *red_args, "--battle-id", battle_id,
                   "--json", home=home, tasks=library)
        assert run.returncode == 0, (battle_id, run.stderr[-2000:])
        assert json.loads(run.stdout)["status"] == "scored", battle_id

    injection = _cli("inject", "run", "--task", "rate-limiter", "--purple-kind", "inject-obeying", "--kind-seed", "1",
                     "--seed", "1", "--objective", "leak-canary", "--objective", "write-outside", "--budget", "2",
                     "--search", "random", "--no-utility", "--json", home=home, tasks=default_tasks_dir())
    assert injection.returncode == 0, injection.stderr[-2000:]
    run = json.loads(injection.stdout)
    assert (run["queries"], run["successes"]) == (2, 1), run  # write-outside met at query 1, leak-canary missed
    run_id = run["run_id"]
    attempts = [f"{run_id}.q0001", f"{run_id}.q0002"]
    refused = _cli("replay", run_id, home=home, tasks=other)  # the run's entry judged nothing: its attempts replay
    assert refused.returncode == 1 and "replay its attempts" in refused.stderr, refused.stderr[-2000:]

    for battle_id in [*battles, *attempts]:
        same = _cli("replay", battle_id, "--json", home=home, tasks=other)
        assert same.returncode == 0, (battle_id, same.stdout[-2000:], same.stderr[-2000:])
        report = json.loads(same.stdout)
        assert report["matches"] is True and report["differences"] == [], (battle_id, report)
