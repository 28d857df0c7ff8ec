"""The battle command end to end: real CLI process, real Docker sandbox, real SQLite ledger."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def logomesh(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "logomesh", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _assert_one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("logomesh: error:")]
    assert len(error_lines) == 1, proc.stderr
    assert needle in error_lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rows(home: Path) -> list[dict[str, object]]:
    with sqlite3.connect(home / "battles.db") as db:
        return [json.loads(raw) for (raw,) in db.execute("SELECT raw_result FROM battles ORDER BY rowid")]


def test_unknown_task_is_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = logomesh("battle", "run", "--task", "no-such-task", "--mock", "good", home=tmp_path)
    _assert_one_line_error(proc, "unknown task 'no-such-task'")


def test_unknown_mock_variant_is_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = logomesh("battle", "run", "--task", "rate-limiter", "--mock", "nope", home=tmp_path)
    _assert_one_line_error(proc, "has no submission 'nope'")


def test_bad_sandbox_choice_is_a_usage_error(tmp_path: Path) -> None:
    proc = logomesh("battle", "run", "--task", "rate-limiter", "--mock", "good", "--sandbox", "host", home=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_unreachable_purple_is_recorded_as_failed(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    proc = logomesh("battle", "run", "--task", "rate-limiter", "--purple", url, "--no-red", home=tmp_path)
    _assert_one_line_error(proc, "battle failed")
    (row,) = _rows(tmp_path)
    assert row["status"] == "failed" and row["failed_stage"] == "purple"
    assert url in str(row["reason"])


@pytest.mark.docker
def test_good_and_flawed_battles_run_in_docker_and_land_in_the_ledger(tmp_path: Path) -> None:
    good = logomesh(
        "battle",
        "run",
        "--task",
        "rate-limiter",
        "--mock",
        "good",
        "--seed",
        "7",
        "--red-budget",
        "5",
        "--json",
        home=tmp_path,
    )
    assert good.returncode == 0, good.stderr
    result = json.loads(good.stdout)
    assert result["status"] == "scored"
    hidden = result["tests"]["hidden"]
    assert hidden["total"] >= 12 and hidden["passed"] == hidden["total"]
    assert result["testing_score"] == pytest.approx(0.85)
    assert 0.0 < result["cis_score"] <= 1.0
    assert "stage: sandbox" in good.stderr and "recorded as entry #" in good.stderr

    flawed = logomesh(
        "battle",
        "run",
        "--task",
        "rate-limiter",
        "--mock",
        "fixed-window",
        "--seed",
        "7",
        "--no-red",
        "--json",
        home=tmp_path,
    )
    assert flawed.returncode == 0, flawed.stderr
    worse = json.loads(flawed.stdout)
    assert worse["tests"]["hidden"]["failed"] >= 1
    assert worse["testing_score"] < result["testing_score"]
    assert worse["cis_score"] < result["cis_score"]

    rows = _rows(tmp_path)
    assert [r["battle_id"] for r in rows] == [result["battle_id"], worse["battle_id"]]
    assert rows[0]["cis_score"] == result["cis_score"]
