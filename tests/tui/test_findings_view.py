"""The console's findings, read from stored results as the one ``Finding``: the campaign's findings table and the
ledger's entry view, including a stored severity that is none of the four (shown as ``?``, ranked below ``low``)."""

from __future__ import annotations

from typing import Any

from pilot_helpers import run
from rich.text import Text
from textual.app import App, ComposeResult

from logomesh.campaign.model import BattleRow
from logomesh.campaign.reading import parse_result
from tui.findings import finding_rows
from tui.ledger_source import EntryDetail, LedgerRow
from tui.widgets.campaign.findings_table import FindingsTable
from tui.widgets.ledger.entry_view import render_summary

RACE = {"family": "race", "severity": "high", "cwe": "CWE-362", "summary": "lost  update\n under threads",
        "reproducer": "run(threads=8)", "confirmations": 2, "attempts": 2}
BARE = {"summary": "no family, no severity"}  # a hand-made or damaged entry


def _row(battle_id: str, agent: str, task_id: str, vulnerabilities: list[dict[str, Any]]) -> BattleRow:
    result = {"battle_id": battle_id, "task_id": task_id, "status": "scored", "cis_score": 0.5,
              "red_analysis": {"vulnerabilities": vulnerabilities}}
    return BattleRow(battle_id, agent, task_id, 1, parse_result(result, {}))


ROWS = [_row("b1", "no-lock", "task-b", [{**RACE, "severity": "severe"}, RACE]),
        _row("b2", "good", "task-a", [BARE, {**RACE, "severity": "low"}])]


class _FindingsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FindingsTable(id="findings-table")


def test_findings_with_no_known_severity_show_as_a_question_mark_after_the_known_ones() -> None:
    found = finding_rows(ROWS)
    assert [(f.battle_id, f.finding.severity, f.finding.family) for f in found] == [
        ("b1", "high", "race"), ("b2", "low", "race"), ("b2", None, ""), ("b1", None, "race")]
    assert (found[0].finding.confirmations, found[0].finding.attempts) == (2, 2)
    app = _FindingsApp()

    async def scenario() -> None:
        async with app.run_test() as pilot:
            table = app.query_one(FindingsTable)
            table.show(found)
            await pilot.pause()
            cells = [table.get_row_at(i) for i in range(table.row_count)]
            assert [[str(c) for c in row[:6]] for row in cells] == [
                ["high", "race", "CWE-362", "task-b", "no-lock", "1"],
                ["low", "race", "CWE-362", "task-a", "good", "1"],
                ["?", "?", "", "task-a", "good", "1"],
                ["?", "race", "CWE-362", "task-b", "no-lock", "1"]]
            assert [str(row[6]) for row in cells[:2]] == ["lost update under threads"] * 2  # on one line
            severity = cells[2][0]
            assert isinstance(severity, Text) and severity.style == "red"
    run(scenario)


def test_the_ledgers_entry_view_shows_a_finding_with_no_known_severity_as_a_question_mark() -> None:
    row = LedgerRow(1, "2026-01-01T00:00:00Z", "b2", "task-a", "mock:good", 0.5, "scored")
    summary = render_summary(EntryDetail(row, {}, "signature ok", "inclusion ok", result=ROWS[1].result)).plain
    assert "findings (2)" in summary and "⚑ ?        ?  \n      no family, no severity" in summary
    assert "⚑ low      race  CWE-362" in summary
