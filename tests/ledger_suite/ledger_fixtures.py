"""Fixtures for the ledger tests: a fresh home with a deterministic key and clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger.keys import create_key
from ledger.store import KEYS_DIR

SEED = bytes(range(32))


def step_clock(start: datetime = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) -> Callable[[], datetime]:
    """A clock that advances one second per call, for byte-identical ledgers."""
    state = {"now": start}

    def tick() -> datetime:
        now = state["now"]
        state["now"] = now + timedelta(seconds=1)
        return now

    return tick


def make_result(battle_id: str, score: float = 0.5, status: str = "scored") -> dict[str, Any]:
    return {
        "battle_id": battle_id, "task_id": "rate-limiter", "rationale_score": 0.25, "architecture_score": 1.0,
        "testing_score": 0.75, "logic_score": 0.5, "cis_score": score, "red_penalty_applied": 0.0,
        "intent_penalty": 1.0, "red_analysis": {"attack_successful": False, "vulnerability_count": 0,
                                                "max_severity": "low", "vulnerabilities": []},
        "tests": {"hidden": {"passed": 3, "failed": 0, "total": 3}, "purple": {"passed": 1, "failed": 0, "total": 1}},
        "anchors": {}, "llm_adjustments": {}, "status": status,
    }


def make_inputs(i: int) -> dict[str, bytes]:
    return {
        "task_spec": b"id = 'rate-limiter'\n",
        "hidden_tests": b"def test_x(): pass\n",
        "purple_request": f'{{"battle": {i}}}'.encode(),
        "purple_response": f'{{"sourceCode": "x = {i}"}}'.encode(),
    }


ATTRS = {"sandbox_image": "sha256:" + "ab" * 32, "scorer_config_sha256": "cd" * 32, "purple_agent": "mock:good"}


def fill(led: Ledger, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        led.append(f"b{i}", make_result(f"b{i}", score=round(i / 100, 4)), make_inputs(i), ATTRS, [0.125, -0.5])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    create_key(path / KEYS_DIR, seed=SEED)
    return path


@pytest.fixture
def ledger(home: Path) -> Iterator[Ledger]:
    with Ledger.open(home, clock=step_clock()) as led:
        yield led


@pytest.fixture(params=["one process", "worker processes"])
def verify_workers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test with entries checked in this process, then in two workers over chunks of three entries.

    The parallel path must give the same report, so every tamper case runs both ways.
    """
    import ledger.entry_checks
    import ledger.verify

    if request.param == "worker processes":
        checks = ledger.entry_checks.check_entries

        def in_workers(home: Path, conn: Any, chain: Any, report_add: Any, workers: int) -> Any:
            return checks(home, conn, chain, report_add, 2)

        monkeypatch.setattr(ledger.verify, "check_entries", in_workers)
        monkeypatch.setattr(ledger.entry_checks, "CHUNK", 3)
    return str(request.param)


def as_an_older_release_left_it(home: Path) -> Path:
    """Make ``home`` what a release before ``dbom_files_until`` wrote: a file in ``dboms/`` per entry, byte for byte
    its row's ``dbom`` column, and no ``dbom_files_until`` meta row (removed as an older release never wrote it)."""
    import sqlite3

    from ledger import files
    from ledger.schema import trigger_sql

    db = sqlite3.connect(home / "battles.db")
    (home / files.DBOM_DIR).mkdir(exist_ok=True)
    for dbom, rel in db.execute("SELECT dbom, dbom_path FROM battles"):
        (home / rel).write_bytes(dbom.encode())
    db.execute("DROP TRIGGER meta_no_delete")
    db.execute("DELETE FROM meta WHERE key = ?", (files.DBOM_FILES_UNTIL,))
    db.execute(next(sql for sql in trigger_sql() if " meta_no_delete " in sql))
    db.commit()
    db.close()
    return home
