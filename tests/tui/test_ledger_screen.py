"""Pilot tests of the ledger screen over a real ledger in a temporary home."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from pilot_helpers import run, shows, until
from rich.syntax import Syntax
from scripted_engine import ScriptedEngine, make_task
from textual.widgets import Input, ProgressBar, Static, TabbedContent

from ledger import Ledger
from ledger.bundle import verify_bundle
from ledger.export import read_bundle
from ledger.keys import create_key
from logomesh.battle.record import CancelledAt, StageValues, played_battle
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import record_battle
from tui.app import ConsoleApp
from tui.ledger_source import LedgerSource
from tui.screens.entry import EntryScreen
from tui.screens.export_dialog import ExportDialog
from tui.screens.help import HelpScreen
from tui.screens.ledger import LedgerScreen
from tui.widgets.ledger.entries_table import EntriesTable
from tui.widgets.ledger.entry_view import EntryView

ENTRIES = [
    ("alpha-1", "rate-limiter", "mock:good", 0.812, "scored"),
    ("beta-2", "lru-cache", "http://127.0.0.1:9100", 0.0, "failed"),
    ("gamma-3", "lru-cache", "mock:no-lock", 0.455, "scored"),
]




def fill_ledger(home: Path) -> None:
    # A fixed judge key makes the ledger's bytes the same on every run.
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    with Ledger.open(home) as led:
        for battle_id, task_id, purple, cis, status in ENTRIES:
            result = {"battle_id": battle_id, "task_id": task_id, "cis_score": cis, "status": status,
                      "purple_agent": purple}
            led.append(battle_id, result, {"task_spec": f"spec of {task_id}".encode()}, {"purple_agent": purple})


def tamper_result(home: Path, battle_id: str, cis: float) -> None:
    """Edit a recorded DBOM behind the ledger's back, the way an attacker with file access would."""
    conn = sqlite3.connect(home / "battles.db")
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    (dbom_text,) = conn.execute("SELECT dbom FROM battles WHERE battle_id = ?", (battle_id,)).fetchone()
    dbom = json.loads(dbom_text)
    dbom["result"]["cis_score"] = cis
    conn.execute("UPDATE battles SET dbom = ?, cis_score = ? WHERE battle_id = ?", (json.dumps(dbom), cis, battle_id))
    for _, sql in triggers:
        conn.execute(sql)
    conn.commit()
    conn.close()


def make_app(tmp_path: Path) -> ConsoleApp:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return ConsoleApp(home, tasks=[make_task(tmp_path / "task")], engine=ScriptedEngine([]))


def test_the_ledger_screen_lists_filters_and_sorts_entries(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            assert isinstance(app.screen, LedgerScreen)
            table = app.screen.query_one(EntriesTable)
            assert [(r.battle_id, r.task_id, r.purple, r.cis, r.status) for r in table.visible_rows()] == ENTRIES
            assert table.row_count == 3
            assert [r.sequence for r in table.visible_rows()] == [0, 1, 2]

            await pilot.press("s")  # sequence, descending
            assert [r.sequence for r in table.visible_rows()] == [2, 1, 0]
            await pilot.press("s")  # battle id, ascending
            assert table.sort_description() == "battle ↑"
            await pilot.press("s")  # battle id, descending
            assert [r.battle_id for r in table.visible_rows()] == ["gamma-3", "beta-2", "alpha-1"]

            await pilot.press("slash", *"lru", "enter")
            assert {r.battle_id for r in table.visible_rows()} == {"beta-2", "gamma-3"}
            assert table.row_count == 2
            app.screen.query_one("#filter", Input).value = "lru no-lock"
            await pilot.pause()
            assert [r.battle_id for r in table.visible_rows()] == ["gamma-3"]
    run(scenario)


def test_entry_detail_shows_the_signed_dbom_and_its_inclusion_proof(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            await pilot.press("down", "enter")
            await until(pilot, lambda: isinstance(app.screen, EntryScreen))
            assert isinstance(app.screen, EntryScreen)
            detail = app.screen.detail
            assert detail.row.battle_id == "beta-2" and detail.row.sequence == 1
            assert detail.signature.startswith("valid")
            assert detail.inclusion.startswith("verified against checkpoint size 3")
            assert set(detail.input_hashes) == {"task_spec"} and len(detail.input_hashes["task_spec"]) == 64
            assert detail.dbom["result"]["purple_agent"] == "http://127.0.0.1:9100"
            shown = str(app.screen.query_one(EntryView).render())
            assert "entry #1  beta-2" in shown
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, LedgerScreen)
    run(scenario)


def test_a_tampered_entry_fails_its_signature_and_inclusion_checks(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)
    tamper_result(app.home, "gamma-3", 0.99)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            assert isinstance(app.screen, LedgerScreen)
            table = app.screen.query_one(EntriesTable)
            assert [r.cis for r in table.visible_rows()] == [0.812, 0.0, 0.99]
            app.screen.open_entry(2)
            await until(pilot, lambda: isinstance(app.screen, EntryScreen))
            assert isinstance(app.screen, EntryScreen)
            assert app.screen.detail.signature.startswith("INVALID")
            assert "result-edited" in app.screen.detail.signature
            assert app.screen.detail.inclusion.startswith("FAILED")
    run(scenario)


def test_marking_rows_chooses_what_export_sends(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            assert isinstance(app.screen, LedgerScreen)
            table = app.screen.query_one(EntriesTable)
            await pilot.press("space", "down", "down", "space")
            assert table.marked == {0, 2}
            await pilot.pause()
            assert "2 marked" in str(app.screen.query_one("#summary", Static).render())
            await pilot.press("space")
            assert table.marked == {0}
    run(scenario)


def test_verify_marks_every_row_of_an_intact_ledger(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, LedgerScreen)
            await pilot.press("v")
            await until(pilot, lambda: screen.last_verify is not None)
            assert screen.last_verify is not None
            assert screen.last_verify.ok, screen.last_verify.summary
            assert screen.last_verify.marks == {0: (True, ""), 1: (True, ""), 2: (True, "")}
            assert str(screen.query_one(EntriesTable).get_cell("1", "check")) == "✓"
            assert screen.query_one(ProgressBar).percentage == 1.0
    run(scenario)


def test_verify_after_tampering_marks_the_edited_entry_with_its_reason(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)
    tamper_result(app.home, "beta-2", 0.75)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, LedgerScreen)
            await pilot.press("v")
            await until(pilot, lambda: screen.last_verify is not None)
            verdict = screen.last_verify
            assert verdict is not None and not verdict.ok
            assert verdict.summary.startswith("verification FAILED")
            assert verdict.marks[2] == (True, "")
            ok, reason = verdict.marks[1]
            assert not ok and "result-edited" in reason
            assert len(reason.split("; ")) == len(set(reason.split("; ")))
            assert str(screen.query_one(EntriesTable).get_cell("1", "check")).startswith("✗ result-edited")
    run(scenario)


def test_export_writes_verifiable_bundles_for_the_marked_entries_only(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)
    written: list[Path] = []

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, LedgerScreen)
            await pilot.press("space", "down", "down", "space", "e")
            await until(pilot, lambda: isinstance(app.screen, ExportDialog))
            default = Path(app.screen.query_one("#folder", Input).value)
            await pilot.press("enter")  # the folder offered
            await until(pilot, lambda: screen.last_export is not None)
            assert screen.last_export is not None and screen.last_export.error == ""
            written.append(Path(str(screen.last_export.path)))
            assert written[0] == default
    run(scenario)
    (out,) = written
    assert out.parent == app.home / "exports"
    index = json.loads((out / "index.json").read_text())
    assert [b["battle_id"] for b in index["bundles"]] == ["alpha-1", "gamma-3"]
    files = sorted(p.name for p in (out / "bundles").iterdir())
    assert len(files) == 2
    for entry in index["bundles"]:
        check = verify_bundle(read_bundle(out / entry["file"]))
        assert check.ok, check.problems
        assert check.battle_id == entry["battle_id"]
    assert (out / "judge.pub").read_text().strip() == index["public_key"]


def test_export_asks_where_and_refuses_a_folder_that_holds_something(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "index.json").write_text("{}")  # another export's folder
    chosen = tmp_path / "mine" / "bundle"

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            screen = app.ledger_screen
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, ExportDialog))
            dialog = app.screen
            dialog.query_one("#folder", Input).value = str(busy)
            await pilot.press("enter")
            await shows(pilot, app, ["is not empty: choose a new folder"], "in the export dialog")
            assert app.screen is dialog and screen.last_export is None  # still asking, nothing written
            dialog.query_one("#folder", Input).value = str(chosen)
            await pilot.press("enter")
            await until(pilot, lambda: screen.last_export is not None)
            assert screen.last_export is not None and screen.last_export.error == ""
            assert screen.last_export.path == str(chosen)
    run(scenario)
    assert (chosen / "index.json").is_file() and (chosen / "judge.pub").is_file()
    assert sorted(p.name for p in busy.iterdir()) == ["index.json"]


SOURCE = 'def add(a: int, b: int) -> int:\n    """Sum."""\n    return a + b\n'
TESTS = "from solution import add\n\n\ndef test_add() -> None:\n    assert add(1, 2) == 3\n"


def test_entry_detail_opens_on_the_summary_and_shows_the_purples_code_from_the_stored_response(
        tmp_path: Path) -> None:
    app = make_app(tmp_path)
    create_key(app.home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    response = json.dumps({"sourceCode": SOURCE, "testCode": TESTS, "rationale": "adds"}).encode()
    scored = {"battle_id": "with-code", "task_id": "adder", "status": "scored", "cis_score": 0.5, "cis_raw": 0.625,
              "red_penalty_applied": 0.2, "intent_penalty": 1.0, "rationale_score": 0.5, "architecture_score": 0.75,
              "testing_score": 0.5, "logic_score": 0.75, "purple_agent": "mock:good",
              "tests": {"hidden": {"passed": 3, "failed": 1, "total": 4}},
              "red_analysis": {"vulnerabilities": [{"family": "race", "severity": "high", "cwe": "CWE-362",
                                                    "summary": "lost update under threads",
                                                    "reproducer": "run(threads=8,\n    calls=1000)"}]}}
    failed = {"battle_id": "no-answer", "task_id": "adder", "status": "failed", "cis_score": 0.0,
              "failed_stage": "purple", "reason": "connection refused by http://127.0.0.1:9", "purple_agent": "x"}
    with Ledger.open(app.home) as led:
        evidence = json.dumps([{"family": "race", "summary": "lost update under threads",
                                "evidence": "KeyError: 3 (perturb-p12, reproduced 10/10)"}]).encode()
        led.append("with-code", scored, {"purple_response": response, "red_evidence": evidence},
                   {"purple_protocol": "in-process"})
        led.append("no-answer", failed, {"task_spec": b"spec"}, {})

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded and app.ledger_screen.table.row_count == 2)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, EntryScreen))
            screen = app.screen
            assert isinstance(screen, EntryScreen)
            assert screen.query_one(TabbedContent).active == "summary"
            summary = str(screen.query_one(EntryView).render())
            for expected in ("scored  CIS 0.500", "raw 0.625 × (1 − red 0.200) × intent 1.000 = CIS 0.500",
                             "hidden tests 3/4 passed", "findings (1)", "⚑ high", "lost update under threads",
                             "reproduce: run(threads=8, calls=1000)",
                             "evidence: KeyError: 3 (perturb-p12, reproduced 10/10)"):
                assert expected in summary, f"{expected!r} missing from the summary: {summary}"
            await pilot.press("c")
            await until(pilot, lambda: screen.query_one(TabbedContent).active == "code")
            code = screen.query_one("#entry-code", Static).content
            assert isinstance(code, Syntax) and code.code == SOURCE and code.lexer is not None
            assert code.lexer.name == "Python"
            await pilot.press("t")
            tests = screen.query_one("#entry-tests", Static).content
            assert isinstance(tests, Syntax) and tests.code == TESTS
            await pilot.press("f1")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            assert isinstance(app.screen, HelpScreen)
            assert {"Summary", "Code", "Tests", "Proof", "DBOM"} <= {d for _, d in app.screen.rows}
            assert "verified" in {symbol for symbol, _ in app.screen.symbols}
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
            await pilot.press("escape", "down", "enter")
            await until(pilot, lambda: isinstance(app.screen, EntryScreen) and app.screen.detail.row.battle_id
                        == "no-answer")
            assert isinstance(app.screen, EntryScreen)
            summary = str(app.screen.query_one(EntryView).render())
            assert "failure  at purple: connection refused by http://127.0.0.1:9" in summary
            assert "no purple response is stored" in summary
    run(scenario)


def test_the_summary_follows_the_sort_esc_leaves_the_filter_and_the_time_fits_at_120_columns(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    create_key(app.home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    purple = "http://purple-agent.example.internal:9100/a2a"
    with Ledger.open(app.home) as led:
        for n in range(3):
            battle_id = f"connection-pool:purple-agent.example.internal:c-6a92134f7f01:r{n}"
            led.append(battle_id, {"battle_id": battle_id, "task_id": "connection-pool", "cis_score": 0.1 * n,
                                   "status": "scored", "purple_agent": purple}, {}, {})

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            screen = app.ledger_screen
            summary = screen.query_one("#summary", Static)
            assert "sort # ↑" in str(summary.render())
            await pilot.press("s")
            assert "sort # ↓" in str(summary.render())
            await pilot.press("s")
            assert "sort battle ↑" in str(summary.render())
            times = [row.timestamp for row in screen.table.all_rows]
            await shows(pilot, app, times, "as whole times at 120 columns")

            await pilot.press("slash", *"r1", "escape")
            assert screen.table.has_focus, "esc left the focus in the filter box"
            await pilot.press("s")
            assert screen.query_one("#filter", Input).value == "r1", "the shortcut after esc was typed as text"
            assert "sort battle ↓" in str(summary.render())
            assert [row.battle_id[-2:] for row in screen.table.visible_rows()] == ["r1"]
    run(scenario)


def test_the_entry_summary_shows_the_band_step_of_the_arithmetic() -> None:
    from logomesh.battle.result import BattleResult
    from tui.ledger_source import EntryDetail, LedgerRow
    from tui.widgets.ledger.entry_view import render_summary

    result = {"status": "scored", "cis_score": 0.82, "cis_raw": 0.8, "red_penalty_applied": 0.2,
              "intent_penalty": 1.0, "behaviour_penalty": 1.0, "cis_within_band": 0.64,
              "band": {"all_hidden_passed": True, "boundary": 0.5}}
    row = LedgerRow(1, "2026-11-26 06:00:00", "b", "adder", "mock:good", 0.82, "scored")
    text = render_summary(EntryDetail(row, {}, "sig", "inc", result=BattleResult.from_json(result))).plain
    assert "raw 0.800 × (1 − red 0.200) × intent 1.000 × behaviour 1.000 = x 0.640\n" in text
    assert "all hidden tests passed: CIS = 0.5 + 0.5×x = 0.820\n" in text
    result.update(cis_score=0.32, band={"all_hidden_passed": False, "boundary": 0.5})
    row = LedgerRow(1, "2026-11-26 06:00:00", "b", "adder", "mock:good", 0.32, "scored")
    text = render_summary(EntryDetail(row, {}, "sig", "inc", result=BattleResult.from_json(result))).plain
    assert "not all hidden tests passed: CIS = 0.5×x = 0.320\n" in text


def test_verify_blames_the_entry_whose_dbom_bytes_changed_not_entry_0(tmp_path: Path) -> None:
    """One byte of entry 4's dbom column changed: the console marks entry 4 only and names it first."""
    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-1").digest())
    with Ledger.open(home) as led:
        for i in range(6):
            led.append(f"b-{i}", {"battle_id": f"b-{i}", "task_id": "t", "cis_score": 0.5, "status": "scored"},
                       {"task_spec": b"spec"}, {})
    conn = sqlite3.connect(home / "battles.db")
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("UPDATE battles SET dbom = replace(dbom, '\"task_id\":\"t\"', '\"task_id\":\"u\"') WHERE sequence = 4")
    for _, sql in triggers:
        conn.execute(sql)
    conn.commit()
    conn.close()
    verdict = LedgerSource(home).verify(lambda done, total: None)
    assert not verdict.ok
    assert [seq for seq, (ok, _) in verdict.marks.items() if not ok] == [4], verdict.marks
    assert verdict.summary.startswith("verification FAILED: entry 4: entry-edited: the dbom column changed"), \
        verdict.summary
    assert "(1 bad entry, " in verdict.summary


def test_a_cancelled_battle_shows_no_cis_in_the_ledger_list(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    fill_ledger(app.home)
    request = BattleRequest(task_id="rate-limiter", battle_id="cancelled-1", seed=1, home=app.home,
                            mock_variant="good")
    record_battle(app.home, "cancelled-1", played_battle(request, None, StageValues(),
                                                         CancelledAt("purple", "cancelled by the user")))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await pilot.pause()
            table = app.screen.query_one(EntriesTable)
            cancelled = str(len(ENTRIES))
            assert str(table.get_cell(cancelled, "cis")) == "—"
            assert str(table.get_cell(cancelled, "status")).startswith("cancelled")
            assert str(table.get_cell("0", "cis")) == f"{ENTRIES[0][3]:.3f}"
    run(scenario)
