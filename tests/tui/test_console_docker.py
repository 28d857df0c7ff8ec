"""End to end: a real battle through Docker, started from the console, found in its ledger screen."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

import pytest
from textual.widgets import Input, Select, Static

from ledger import Ledger
from ledger.keys import create_key
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import BattleOutcome, run_battle
from logomesh.events import Event, EventSink, MctsNodeAdded
from logomesh.tasks import default_tasks_dir, load_task_dir
from tui.app import ConsoleApp
from tui.screens.ledger import LedgerScreen
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.battle.output_log import SandboxLog
from tui.widgets.battle.score_panel import ScorePanel
from tui.widgets.ledger.entries_table import EntriesTable

BATTLE = "console-docker-1"


@pytest.mark.docker
def test_a_real_battle_runs_from_the_console_and_lands_in_the_ledger(tmp_path: Path) -> None:
    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    app = ConsoleApp(home, tasks=[load_task_dir(default_tasks_dir() / "rate-limiter")])

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.battle_screen
            assert screen.query_one("#purple", Select).value == "good"
            screen.query_one("#battle-id", Input).value = BATTLE
            screen.query_one("#budget", Input).value = "0"  # no red agent: this test is about the console
            await pilot.press("ctrl+r")
            deadline = time.monotonic() + 240
            while screen.last_ending is None:
                assert time.monotonic() < deadline, "the battle did not finish in time"
                await pilot.pause(0.2)
            ending = screen.last_ending
            assert ending.status == "scored", ending.reason
            with Ledger.open(home) as led:
                stored = led.get(BATTLE)
            assert stored is not None and ending.sequence == stored.sequence
            score = screen.query_one(ScorePanel)
            assert score.final == stored.result["cis_score"]
            assert set(score.values) == {"rationale", "architecture", "testing", "logic"}
            band = stored.result["band"]
            assert score.band == (band["all_hidden_passed"], band["boundary"])
            while score.revealing:
                assert time.monotonic() < deadline, "the score was not revealed in time"
                await pilot.pause(0.05)
            arithmetic = str(screen.query_one("#sum", Static).render())
            assert "as recorded" not in arithmetic, arithmetic  # the panel's arithmetic gives the engine's CIS
            assert f"= {stored.result['cis_score']:.3f}" in arithmetic, arithmetic
            lines = list(screen.query_one(SandboxLog).plain_lines)
            hidden = stored.result["tests"]["hidden"]
            assert sum(line.startswith("✓ hidden ") for line in lines) == hidden["passed"] > 0

            await pilot.press("ctrl+l")
            while not app.ledger_screen.loaded:
                assert time.monotonic() < deadline, "the ledger screen did not load"
                await pilot.pause(0.05)
            assert isinstance(app.screen, LedgerScreen)
            rows = app.screen.query_one(EntriesTable).visible_rows()
            assert [(r.battle_id, r.status, r.purple) for r in rows] == [(BATTLE, "scored", "mock:good")]
            assert rows[0].cis == stored.result["cis_score"]
    asyncio.run(scenario())


@pytest.mark.slow
@pytest.mark.docker
def test_cancelling_a_real_battle_mid_search_stops_it_and_records_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    after_cancel: list[int] = []  # search nodes added once the battle's token was cancelled

    def engine(request: BattleRequest, emit: EventSink) -> BattleOutcome:
        def noted(event: Event) -> None:
            if isinstance(event, MctsNodeAdded) and request.cancel.cancelled:
                after_cancel.append(event.node_id)
            emit(event)

        return run_battle(request, noted)

    app = ConsoleApp(home, tasks=[load_task_dir(default_tasks_dir() / "lru-cache")], engine=engine)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.battle_screen
            screen.query_one("#purple", Select).value = "no-lock"
            screen.query_one("#battle-id", Input).value = "console-cancel-1"
            screen.query_one("#budget", Input).value = "60"
            await pilot.press("ctrl+r")
            deadline = time.monotonic() + 300  # a hang guard only
            tree = screen.query_one(MctsTree)
            while not tree.stats:  # the first search node: the red agent has started
                assert screen.last_ending is None, "the battle ended before the search started"
                assert time.monotonic() < deadline, "the red agent did not start in time"
                await pilot.pause(0.05)
            await pilot.press("escape")
            while screen.last_ending is None:  # a hang guard: the speed of a cancel is benchmarks/console_bench.py's
                assert time.monotonic() < deadline, "the battle did not stop after cancel"
                await pilot.pause(0.1)
            ending = screen.last_ending
            assert ending.status == "cancelled" and ending.sequence is not None
            with Ledger.open(home) as led:
                stored = led.get("console-cancel-1")
            assert stored is not None
            assert (stored.result["status"], stored.result["stage"]) == ("cancelled", "red")
            assert "cancelled by the user" in stored.result["reason"]
            assert len(after_cancel) <= 1, f"the search went on after the cancel: {after_cancel}"  # 1: in flight
    asyncio.run(scenario())
