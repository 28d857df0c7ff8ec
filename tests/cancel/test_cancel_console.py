"""Esc in the console stops the real engine's battle, which lands in the ledger as cancelled with its stage.

The console drives the real ``run_battle`` (a real purple agent over loopback, a real box, the real
ledger) through Textual's Pilot; only the sandbox backend is pinned, so both are exercised. The stop is
proven by the entry (cancelled in its stage) and the events (no search node after the cancel); waits are hang
guards only.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cancel_helpers import (
    HANG_GUARD_S,
    PURPLE_WAIT_S,
    BoxSpy,
    SearchAfterCancel,
    box_gone,
    hanging_purple,
    make_home,
)
from textual.pilot import Pilot
from textual.widgets import Input, Select

import logomesh.sandbox
from ledger import Ledger
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import BattleOutcome, run_battle
from logomesh.cancel import CANCEL_REASON
from logomesh.events import EventSink
from logomesh.tasks import default_tasks_dir, load_task_dir
from tui.app import ConsoleApp
from tui.engine import Engine
from tui.screens.battle import BattleScreen
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.battle.setup_form import URL_CHOICE
from tui.widgets.battle.status_line import StatusLine

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[BoxSpy]:
    spy = BoxSpy(logomesh.sandbox.open_sandbox)
    monkeypatch.setattr(logomesh.sandbox, "open_sandbox", spy)
    yield spy


def on_backend(backend: str = "auto", search: SearchAfterCancel | None = None) -> Engine:
    """The real engine with the sandbox backend pinned (the console itself asks for "auto"), a purple agent
    allowed an hour (``PURPLE_WAIT_S``: a hanging agent's battle ends only by the cancel), and ``search``
    counting the nodes added after the cancel."""

    def engine(request: BattleRequest, emit: EventSink) -> BattleOutcome:
        noted = search.wrap(request.cancel, emit) if search is not None else emit
        return run_battle(dataclasses.replace(request, sandbox=backend, purple_timeout_s=PURPLE_WAIT_S), noted)

    return engine


async def _wait(pilot: Pilot[None], condition: Callable[[], bool], what: str,
                timeout_s: float = HANG_GUARD_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in time"
        await pilot.pause(0.05)


async def _escape_and_wait(pilot: Pilot[None], screen: BattleScreen) -> None:
    """Press Esc; wait until the console shows the battle's end."""
    await pilot.press("escape")
    await _wait(pilot, lambda: screen.last_ending is not None, "the end of the battle")


def _check(home: Path, screen: BattleScreen, battle_id: str, stage: str) -> None:
    ending = screen.last_ending
    assert ending is not None and ending.status == "cancelled" and ending.sequence is not None
    assert screen.query_one(StatusLine).stage == "cancelled"
    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    assert stored is not None and stored.sequence == ending.sequence
    assert (stored.result["status"], stored.result["stage"], stored.result["reason"]) == (
        "cancelled", stage, CANCEL_REASON)


def test_escape_while_the_purple_agent_is_answering(tmp_path: Path, spy: BoxSpy) -> None:
    home = make_home(tmp_path)
    app = ConsoleApp(home, tasks=[load_task_dir(default_tasks_dir() / "rate-limiter")], engine=on_backend())

    async def scenario(url: str) -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.battle_screen
            screen.query_one("#purple", Select).value = URL_CHOICE
            await pilot.pause()
            screen.query_one("#url", Input).value = url
            screen.query_one("#battle-id", Input).value = "console-cancel-purple"
            screen.query_one("#budget", Input).value = "0"
            await pilot.press("ctrl+r")
            await _wait(pilot, lambda: screen.query_one(StatusLine).stage == "purple", "the purple stage")
            await pilot.pause(0.3)
            await _escape_and_wait(pilot, screen)
            _check(home, screen, "console-cancel-purple", "purple")

    with hanging_purple() as url:
        asyncio.run(scenario(url))
    assert spy.boxes == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_escape_during_the_red_search_kills_the_box(tmp_path: Path, spy: BoxSpy, backend: str) -> None:
    home = make_home(tmp_path)
    search = SearchAfterCancel()
    app = ConsoleApp(home, tasks=[load_task_dir(default_tasks_dir() / "lru-cache")],
                     engine=on_backend(backend, search))

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.battle_screen
            screen.query_one("#purple", Select).value = "no-lock"
            screen.query_one("#battle-id", Input).value = "console-cancel-red"
            screen.query_one("#budget", Input).value = "600"
            await pilot.press("ctrl+r")
            tree = screen.query_one(MctsTree)
            await _wait(pilot, lambda: len(tree.stats) > 1, "the red search")
            await _escape_and_wait(pilot, screen)
            _check(home, screen, "console-cancel-red", "red")
            assert search.nodes <= 1  # the search stopped at the Esc

    asyncio.run(scenario())
    assert len(spy.boxes) == 1 and box_gone(*spy.boxes[0])
