"""``logomesh replay``: re-scoring from the ledger's stored inputs, through the real CLI and Docker."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from logomesh.tasks import default_tasks_dir

FAILING_SUITE = "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.fail()\n"


def _cli(*args: str, home: Path, tasks: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOGOMESH_TASKS": str(tasks)}
    return subprocess.run(
        [sys.executable, "-m", "logomesh", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_unknown_battle_is_one_line_error(tmp_path: Path) -> None:
    from logomesh.battle.record import failed_played
    from logomesh.battle.request import BattleRequest
    from logomesh.battle.spine import record_battle

    missing = tmp_path / "missing"
    proc = _cli("replay", "nope", home=missing, tasks=default_tasks_dir())
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert f"no ledger at {missing}" in proc.stderr and not missing.exists()  # a replay creates nothing

    request = BattleRequest(task_id="rate-limiter", battle_id="other", seed=0, home=tmp_path, mock_variant="good")
    record_battle(tmp_path, "other", failed_played(request, "engine", "recorded earlier"))
    proc = _cli("replay", "nope", home=tmp_path, tasks=default_tasks_dir())
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "no battle 'nope' in the ledger" in proc.stderr


@pytest.mark.slow
@pytest.mark.docker
def test_replay_uses_stored_inputs_and_detects_an_altered_response(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(default_tasks_dir() / "rate-limiter", tasks / "rate-limiter")
    home = tmp_path / "home"
    run = _cli("battle", "run", "--task", "rate-limiter", "--mock", "good", "--no-red", "--battle-id", "rp",
               home=home, tasks=tasks)
    assert run.returncode == 0, run.stderr

    # Today's library changes (every hidden test now fails); the replay must not care.
    for test_file in (tasks / "rate-limiter" / "hidden").glob("test_*.py"):
        test_file.write_text(FAILING_SUITE)
    same = _cli("replay", "rp", "--json", home=home, tasks=tasks)
    assert same.returncode == 0, same.stderr
    report = json.loads(same.stdout)
    assert report["matches"] is True and report["differences"] == []
    scorer = report["scorer_config_sha256"]  # the same build: the same judge, so a difference is the entry's
    assert scorer["signed"] == scorer["replayed"] and len(scorer["signed"]) == 64

    # Someone with write access swaps the stored purple response for the flawed variant.
    flawed = (tasks / "rate-limiter" / "submissions" / "fixed-window.json").read_bytes()
    with sqlite3.connect(home / "battles.db") as db:
        triggers = list(db.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'"))
        for name, _ in triggers:
            db.execute(f'DROP TRIGGER "{name}"')
        good = (tasks / "rate-limiter" / "submissions" / "good.json").read_bytes()
        changed = db.execute("UPDATE blobs SET data = ? WHERE data = ?", (flawed, good)).rowcount
        for _, sql in triggers:  # put the tripwire back, so only the replay can notice
            db.execute(sql)
    assert changed == 1
    altered = _cli("replay", "rp", "--json", home=home, tasks=tasks)
    assert altered.returncode == 3, altered.stderr
    report = json.loads(altered.stdout)
    assert report["matches"] is False
    assert "testing_score" in report["differences"]


@pytest.mark.slow
@pytest.mark.docker
def test_replay_with_the_red_agent_restores_the_tasks_own_scenarios(tmp_path: Path) -> None:
    """The stateful model that finds lru-cache's FIFO eviction lives in the task's red.py, stored with the entry.

    The copy has no race scenario: on FIFO code, whether the race probe's history is unexplained (and, with its
    small serial control explained, reported as a race) follows the thread schedule, which a replay does not
    repeat: an open defect (the control is one thread of the same size, not the trial's calls made serially);
    this test is about restoring the model scenario."""
    tasks = tmp_path / "tasks"
    shutil.copytree(default_tasks_dir() / "lru-cache", tasks / "lru-cache")
    spec = tasks / "lru-cache" / "task.toml"
    text = spec.read_text(encoding="utf-8")
    race = text[text.index("[red.race]"):text.index("[red.growth]")]
    spec.write_text(text.replace(race, ""), encoding="utf-8")
    home = tmp_path / "home"
    run = _cli("battle", "run", "--task", "lru-cache", "--mock", "fifo", "--red-budget", "5", "--battle-id", "rr",
               "--json", home=home, tasks=tasks)
    assert run.returncode == 0, run.stderr
    assert "stateful-model" in {v["family"] for v in json.loads(run.stdout)["red_analysis"]["vulnerabilities"]}
    (tasks / "lru-cache" / "red.py").unlink()  # today's library lost it; the replay must not care
    same = _cli("replay", "rr", "--json", home=home, tasks=tasks)
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["matches"] is True


@pytest.mark.slow
@pytest.mark.docker
def test_exit_3_is_for_a_real_difference_and_another_scorer_is_not_one(tmp_path: Path) -> None:
    """An entry whose signed result differs from what its inputs give: exit 3 naming the field. The same entry
    signed under another scoring configuration cannot be checked by this build: exit 1, never 3."""
    from ledger import Ledger

    home = tmp_path / "home"
    run = _cli("battle", "run", "--task", "rate-limiter", "--mock", "good", "--no-red", "--battle-id", "orig",
               home=home, tasks=default_tasks_dir())
    assert run.returncode == 0, run.stderr
    with Ledger.open(home) as led:
        stored = led.get("orig")
        assert stored is not None
        inflated = {**stored.result, "cis_score": round(float(stored.result["cis_score"]) + 0.1, 4)}
        led.append("inflated", {**inflated, "battle_id": "inflated"}, stored.inputs, stored.attributes,
                   stored.intent_vector)
        other = {**stored.attributes, "scorer_config_sha256": "0" * 64}
        led.append("other-scorer", {**inflated, "battle_id": "other-scorer"}, stored.inputs, other,
                   stored.intent_vector)

    differs = _cli("replay", "inflated", "--json", home=home, tasks=default_tasks_dir())
    assert differs.returncode == 3, differs.stderr
    assert json.loads(differs.stdout)["differences"] == ["cis_score"]
    unknown = _cli("replay", "other-scorer", home=home, tasks=default_tasks_dir())
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert "cannot check this entry with this build" in unknown.stderr
