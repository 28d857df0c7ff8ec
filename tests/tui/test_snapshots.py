"""Snapshots of every screen at 80x24 and 120x40 (pytest-textual-snapshot), compared with the SVGs committed
under ``__snapshots__/``. A layout change shows up here as a diff a person can look at; accept it with
``.venv/bin/pytest tests/tui/test_snapshots.py --snapshot-update`` after looking at the report.

Everything on screen is fixed: scripted events, a judge key from a fixed seed, a ledger clock that steps one
minute per entry, and clocks for the elapsed time and campaign rate that never move. Cursors do not blink.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pilot_helpers import until
from scripted_campaign import ScriptedExecutor, nothing_to_check
from scripted_engine import BANDED_CIS, BATTLE, ScriptedEngine, banded_battle, make_task
from test_campaign_screen import TASKS, open_campaign, race_findings, score
from textual.pilot import Pilot
from textual.widgets import Input, TextArea
from tiers import sampled

from ledger import Ledger
from ledger.keys import create_key
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import BattleOutcome
from logomesh.events import EventSink
from tui.app import ConsoleApp
from tui.engine import Engine
from tui.messages import BattleEventsReceived
from tui.screens.entry import EntryScreen
from tui.widgets.battle.score_panel import ScorePanel
from tui.widgets.battle.status_line import StatusLine
from tui.widgets.campaign.progress_panel import CampaignProgressPanel

SIZES = sampled([(80, 24), (120, 40)], ["80x24", "120x40"], keep={"80x24"})
VIEWS = ["leaderboard", "pairs", "per-task", "findings"]  # the campaign screen's views, in the order "v" shows them
Compare = Callable[..., bool]
Steps = Callable[[Pilot[None]], Any]

SOURCE = '''"""A counter that counts each thing once."""

import threading


class Counter:
    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def add(self, thing: str) -> bool:
        with self._lock:
            if thing in self._seen:
                return False
            self._seen.add(thing)
            return True
'''
TESTS = '''import unittest

from solution import Counter


class CounterTest(unittest.TestCase):
    def test_counts_once(self) -> None:
        counter = Counter()
        self.assertTrue(counter.add("a"))
        self.assertFalse(counter.add("a"))
'''


def minute_clock() -> Callable[[], datetime]:
    """A ledger clock from 2026-11-23 09:00 UTC, one minute later on each call."""
    ticks: Iterator[int] = iter(range(10_000))
    start = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    return lambda: start + timedelta(minutes=next(ticks))


def fill_ledger(home: Path) -> None:
    create_key(home / "keys", seed=hashlib.sha256(b"tui-snapshot").digest())
    response = json.dumps({"sourceCode": SOURCE, "testCode": TESTS, "rationale": "a lock around the set"}).encode()
    entries = [
        ("rate-limiter-edac24d76e10", "rate-limiter", "mock:good", 0.8, "scored", []),
        ("lru-cache-4c6dbc0e9277", "lru-cache", "mock:no-lock", 0.525, "scored",
         [{"family": "race", "severity": "high", "cwe": "CWE-362", "summary": "LRUCache: KeyError: 3 (10/10)",
           "reproducer": "put and get from 8 threads on an LRUCache(2)"}]),
        ("bank-ledger-a43741709eb7", "bank-ledger", "http://127.0.0.1:9100", 0.0, "failed", []),
        ("sql-select:good:c-6a92134f7f01:r1", "sql-select", "mock:good", 0.792, "scored", []),
        ("lru-cache-4c6dbc0e9277-2", "lru-cache", "mock:no-lock", 0.525, "scored", []),  # cut at its end: #1's look
    ]
    with Ledger.open(home, clock=minute_clock()) as led:
        for battle_id, task_id, purple, cis, status, findings in entries:
            result: dict[str, Any] = {"battle_id": battle_id, "task_id": task_id, "cis_score": cis, "status": status,
                                      "purple_agent": purple}
            if status == "scored":
                result.update(rationale_score=0.75, architecture_score=0.8, testing_score=0.85, logic_score=0.9,
                              cis_raw=0.825, red_penalty_applied=0.25 if findings else 0.0, intent_penalty=1.0,
                              tests={"hidden": {"passed": 15, "failed": 0, "total": 15},
                                     "purple": {"passed": 3, "failed": 0, "total": 3}},
                              red_analysis={"vulnerabilities": findings})
                inputs = {"purple_response": response}
                if findings:
                    inputs["red_evidence"] = json.dumps([{"family": f["family"], "summary": f["summary"],
                                                          "evidence": "KeyError: 3 in 10 of 10 runs (perturb-p12)"}
                                                         for f in findings]).encode()
            else:
                result.update(failed_stage="purple", reason="the purple agent at http://127.0.0.1:9100 refused")
                inputs = {"task_spec": b"spec"}
            led.append(battle_id, result, inputs, {"purple_protocol": "in-process", "purple_agent": purple})


def still_clocks(app: ConsoleApp) -> None:
    """Elapsed time and campaign rate from clocks that do not move; no blinking cursors.

    A screen is composed when first shown, so this runs again after each switch.
    """
    for line in app.battle_screen.query(StatusLine):
        line.clock = lambda: 100.0
    for panel in app.campaign_screen.query(CampaignProgressPanel):
        panel.clock = lambda panel=panel: (panel.progress.started_at + 60.0) if panel.progress is not None else 0.0
    for screen in (app.battle_screen, app.ledger_screen, app.campaign_screen):
        for field in screen.query(Input):
            field.cursor_blink = False
        for area in screen.query(TextArea):
            area.cursor_blink = False


class HeldEngine:
    """An engine that sends nothing and returns a scored outcome once released.

    The snapshot hands the screen the whole battle as one batch itself: the adapter's 50 ms batching depends
    on timing, and the best-value sparkline gains one point per batch.
    """

    def __init__(self) -> None:
        self.release = threading.Event()
        self.inner = ScriptedEngine([], cis=BANDED_CIS)

    def __call__(self, request: BattleRequest, emit: EventSink) -> BattleOutcome:
        self.release.wait(120)  # released by the test; the bound only ends a hang
        return self.inner(request, emit)


def battle_app(tmp_path: Path, engine: Engine | None = None) -> ConsoleApp:
    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-snapshot").digest())
    return ConsoleApp(home, tasks=[make_task(tmp_path / "task")], engine=engine or ScriptedEngine([]))


def ledger_app(tmp_path: Path) -> ConsoleApp:
    app = ConsoleApp(tmp_path / "home", tasks=[make_task(tmp_path / "task")], engine=ScriptedEngine([]))
    fill_ledger(app.home)
    return app


def campaign_app(tmp_path: Path) -> ConsoleApp:
    executor = ScriptedExecutor(score, findings=race_findings)
    tasks = [make_task(tmp_path / name, name, ("good", "no-lock", "slow")) for name in TASKS]
    return ConsoleApp(tmp_path / "home", tasks=tasks, executor_factory=executor.factory,
                      campaign_check=nothing_to_check)


def snap(snap_compare: Compare, app: ConsoleApp, size: tuple[int, int], steps: Steps) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        still_clocks(app)
        await steps(pilot)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


# the battle screen


@pytest.mark.parametrize("size", SIZES)
def test_battle_setup(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = battle_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.pause()

    snap(snap_compare, app, size, steps)


@pytest.mark.parametrize("size", SIZES)
def test_battle_finished(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    engine = HeldEngine()
    app = battle_app(tmp_path, engine)

    async def steps(pilot: Pilot[None]) -> None:
        screen = app.battle_screen
        screen.query_one("#battle-id", Input).value = BATTLE
        await pilot.press("ctrl+r")
        screen.post_message(BattleEventsReceived(banded_battle(BATTLE, 12)))  # every line of the CIS derivation
        score_panel = screen.query_one(ScorePanel)
        await until(pilot, lambda: score_panel.final is not None and not score_panel.revealing)
        engine.release.set()
        await until(pilot, lambda: screen.last_ending is not None)

    snap(snap_compare, app, size, steps)


@pytest.mark.parametrize("size", SIZES)
def test_help_on_the_battle_screen(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = battle_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("f1")

    snap(snap_compare, app, size, steps)


# the ledger screen and entry detail


@pytest.mark.parametrize("size", SIZES)
def test_injection_setup_and_its_help(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = battle_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+y")
        await until(pilot, lambda: app.screen.id == "injection")
        await pilot.press("f1")

    snap(snap_compare, app, size, steps)


@pytest.mark.parametrize("size", SIZES)
def test_ledger_verified_and_sorted(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = ledger_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: app.ledger_screen.loaded)
        await pilot.press("v")
        await until(pilot, lambda: app.ledger_screen.last_verify is not None)
        await pilot.press("s", "s", "space")

    snap(snap_compare, app, size, steps)


@pytest.mark.parametrize("size", SIZES)
def test_entry_summary(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = ledger_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: app.ledger_screen.loaded)
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, EntryScreen))

    snap(snap_compare, app, size, steps)


@pytest.mark.parametrize("size", SIZES)
def test_entry_code(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = ledger_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+l")
        await until(pilot, lambda: app.ledger_screen.loaded)
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, EntryScreen))
        await pilot.press("c")

    snap(snap_compare, app, size, steps)


# the campaign screen


@pytest.mark.parametrize("size", SIZES)
def test_campaign_setup(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = campaign_app(tmp_path)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+g")
        await pilot.pause()
        app.campaign_screen.query_one("#workers", Input).value = "2"  # not this machine's default
        still_clocks(app)
        app.campaign_screen.query_one("#tasks").focus()
        await pilot.press("down", "space")  # drop task-b: ☐ beside ☑
        await pilot.pause()

    snap(snap_compare, app, size, steps)


def campaign_view(presses: tuple[str, ...]) -> Callable[[ConsoleApp], Steps]:
    def steps_for(app: ConsoleApp) -> Steps:
        async def steps(pilot: Pilot[None]) -> None:
            screen = await open_campaign(pilot, app, "good, no-lock", workers=2)
            still_clocks(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            await pilot.pause(0.1)
            await pilot.press(*presses)
        return steps
    return steps_for


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("view", sampled(VIEWS, VIEWS, keep={"leaderboard", "findings"}))
def test_campaign_finished(snap_compare: Compare, tmp_path: Path, size: tuple[int, int], view: str) -> None:
    app = campaign_app(tmp_path)
    presses = {"leaderboard": (), "pairs": ("v",), "per-task": ("v", "v"), "findings": ("v", "v", "v")}[view]
    snap(snap_compare, app, size, campaign_view(presses)(app))
