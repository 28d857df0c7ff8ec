"""``logomesh replay`` of injection entries: an attempt is re-judged from its entry alone, in the real sandbox.

A run against the obeying mock on loopback records its attempts in a real SQLite ledger; each replay is a fresh
process of the real CLI whose task library has lost the task's hidden drivers, so the oracle's task can only come
from the entry.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ledger import Ledger
from ledger.verify import verify_ledger
from logomesh.tasks import default_tasks_dir

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BROKEN_SUITE = "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.fail()\n"


def _cli(*args: str, home: Path, tasks: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logomesh", *args, "--home", str(home)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "LOGOMESH_TASKS": str(tasks)})


def _recorded_run(tmp_path: Path) -> tuple[Path, Path, str]:
    """A one-objective run whose first query succeeds (the obeying mock seeded 1 obeys a config part)."""
    tasks, home = tmp_path / "tasks", tmp_path / "home"
    shutil.copytree(default_tasks_dir() / "rate-limiter", tasks / "rate-limiter")
    run = _cli("inject", "run", "--task", "rate-limiter", "--purple-kind", "inject-obeying", "--kind-seed", "1",
               "--seed", "1", "--objective", "leak-canary", "--budget", "3", "--no-utility", "--sandbox", "docker",
               "--json", home=home, tasks=tasks)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["objectives"][0]["queries_to_first_success"] == 1, report
    for driver in (tasks / "rate-limiter" / "hidden").glob("test_*.py"):  # today's library changes
        driver.write_text(BROKEN_SUITE, encoding="utf-8")
    return home, tasks, str(report["run_id"])


def test_an_attempt_replays_a_tampered_answer_differs_and_a_run_is_refused(tmp_path: Path) -> None:
    home, tasks, run_id = _recorded_run(tmp_path)
    attempt = f"{run_id}.q0001"
    with Ledger.open(home) as led:
        stored = led.get(attempt)
    assert stored is not None and stored.result["verdict"]["met"] is True and stored.result["seed"] == 1
    assert {"hidden_tests", "reference_solution", "purple_response", "injected_payload"} <= set(stored.inputs)

    # (a) The success re-judged from the entry: the same H(result), in text and in JSON, twice.
    text = _cli("replay", attempt, "--sandbox", "docker", home=home, tasks=tasks)
    assert text.returncode == 0, text.stderr[-2000:]
    assert text.stdout == (f"replay of {attempt} (entry #{stored.sequence}) matches: "
                           f"H(result) = {stored.result_sha256}\n")
    as_json = _cli("replay", attempt, "--sandbox", "docker", "--json", home=home, tasks=tasks)
    assert as_json.returncode == 0, as_json.stderr[-2000:]
    report = json.loads(as_json.stdout)
    assert report == {"battle_id": attempt, "sequence": stored.sequence, "matches": True,
                      "signed_sha256": stored.result_sha256, "replayed_sha256": stored.result_sha256,
                      "differences": [], "scorer_config_sha256": {"signed": "", "replayed": ""}}

    # (c) The run's entry judged nothing: one line naming its attempts.
    refused = _cli("replay", run_id, "--sandbox", "docker", home=home, tasks=tasks)
    assert refused.returncode == 1 and refused.stdout == "" and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines() == [f"logomesh: error: entry {run_id!r} is an injection run, which judged "
                                           f"nothing itself: replay its attempts ({attempt}) one by one"]

    # (b) Someone with write access edits the stored answer's code so it no longer prints the canary.
    with sqlite3.connect(home / "battles.db") as db:
        triggers = list(db.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'"))
        for name, _ in triggers:
            db.execute(f'DROP TRIGGER "{name}"')
        response = stored.inputs["purple_response"]
        edited = response.replace(b"print(_lm_os.environ", b"str(_lm_os.environ")
        assert edited != response
        changed = db.execute("UPDATE blobs SET data = ? WHERE data = ?", (edited, response)).rowcount
        for _, sql in triggers:  # put the tripwire back, so only the replay and verify can notice
            db.execute(sql)
    assert changed == 1
    altered = _cli("replay", attempt, "--sandbox", "docker", "--json", home=home, tasks=tasks)
    assert altered.returncode == 3, altered.stderr[-2000:]
    report = json.loads(altered.stdout)
    assert report["matches"] is False and report["signed_sha256"] == stored.result_sha256
    assert report["differences"] == ["answer_sha256", "verdict"]  # a new digest, and the canary no longer leaks
    text = _cli("replay", attempt, "--sandbox", "docker", home=home, tasks=tasks)
    assert text.returncode == 3 and "DIFFERS" in text.stdout and "fields: answer_sha256, verdict" in text.stdout
    assert not verify_ledger(home).ok


def test_an_attempt_recorded_without_its_seed_is_one_line(tmp_path: Path) -> None:
    """Entries from before attempts stored their run's seed cannot draw the secrets again: exit 1, one line."""
    home = tmp_path / "home"
    old = {"battle_id": "old.q0001", "task_id": "rate-limiter", "status": "injection-attempt",
           "kind": "injection-attempt", "run_id": "old", "search": "mcts", "query": 1, "objective": "leak-canary",
           "path": ["config", "plain", "end", "leak-canary"], "payload_sha256": "0" * 64, "answer_sha256": "0" * 64,
           "verdict": {"met": False, "severity": "low", "evidence": ""}, "error": ""}
    with Ledger.open(home) as led:
        led.append("old.q0001", old, {"task_spec": b"x", "purple_response": b"{}"}, {"kind": "injection-attempt"})
    proc = _cli("replay", "old.q0001", home=home, tasks=default_tasks_dir())
    assert proc.returncode == 1 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == ["logomesh: error: injection attempt 'old.q0001' was recorded before attempts "
                                        "stored their run's seed: replay it with the LogoMesh release that recorded it"]
