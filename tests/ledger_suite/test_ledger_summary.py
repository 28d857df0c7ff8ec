"""The summary columns and the reading interface the console uses: one derivation, real SQLite files."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ledger_fixtures import ATTRS, fill, make_inputs, make_result, step_clock

from ledger import Ledger
from ledger.summary import cis_column, summary_columns
from ledger.verify import verify_ledger

# (what a result says its cis_score is, what the column holds): numbers become floats, nothing else counts
SCORES: list[tuple[Any, float | None]] = [(0.25, 0.25), (1, 1.0), (0, 0.0), (True, None), ("0.5", None),
                                          (None, None)]


@pytest.mark.parametrize(("score", "column"), SCORES)
def test_cis_column_takes_numbers_only(score: Any, column: float | None) -> None:
    assert cis_column(score) == column
    assert type(cis_column(score)) is type(column)


def test_rows_hold_the_columns_verify_derives_from_each_signed_entry(ledger: Ledger, home: Path) -> None:
    for i, (score, _) in enumerate(SCORES):
        result = make_result(f"s{i}", status="failed" if i % 2 else "scored")
        result["cis_score"] = score
        ledger.append(f"s{i}", result, make_inputs(i), ATTRS)
    ledger.append("s-none", {"battle_id": "s-none"}, {}, {})  # no task, no status, no score
    report = verify_ledger(home)
    assert report.ok, report.problems
    db = sqlite3.connect(home / "battles.db")
    db.row_factory = sqlite3.Row
    for row in db.execute("SELECT * FROM battles ORDER BY sequence"):
        summary = ledger.entry(row["battle_id"])
        assert summary is not None and summary.sequence == row["sequence"]
        stored = ledger.get(row["battle_id"])
        assert stored is not None
        assert {column: row[column] for column in summary_columns(stored.dbom)} == summary_columns(stored.dbom)
    columns = {r["battle_id"]: r["cis_score"] for r in db.execute("SELECT battle_id, cis_score FROM battles")}
    assert [columns[f"s{i}"] for i in range(len(SCORES))] == [column for _, column in SCORES]
    assert columns["s-none"] is None


def test_entry_signature_and_inclusion_of_a_stored_battle(home: Path) -> None:
    with Ledger.open(home, clock=step_clock()) as led:
        assert led.entry("b0") is None
        fill(led, 5)
        stored = led.get("b3")
        assert stored is not None
        summary = led.entry("b3")
        assert summary is not None and (summary.sequence, summary.cis_score) == (3, 0.03)
        assert led.signature_problems(stored) == []
        inclusion = led.inclusion(stored)
        assert inclusion.covered and inclusion.verified and inclusion.checkpoint is not None
        assert inclusion.checkpoint.size == 5 and len(inclusion.proof) == 3  # a tree of 5: 3 hashes up from leaf 3
    forged = {**stored.dbom, "result": {**stored.result, "cis_score": 0.99}}
    edited = dataclasses.replace(stored, dbom=forged)
    with Ledger.open(home) as led:
        assert {kind for kind, _ in led.signature_problems(edited)} == {"result-edited", "entry-edited"}
        assert led.inclusion(edited).covered and not led.inclusion(edited).verified
