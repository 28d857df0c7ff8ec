"""What a person sees: the battle screen mid-battle and finished, and the ledger screen, at 80x24 and 120x40.

Each case renders the real screen to SVG (Textual's screenshot) and checks that the words that matter
are on it, so a layout that pushes a panel off screen or clips it fails here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pilot_helpers import run, run_from_palette, shows, until
from scripted_engine import BATTLE, ScriptedEngine, full_battle, make_task
from textual.widgets import Input

from ledger import Ledger
from ledger.keys import create_key
from tui.app import ConsoleApp

SIZES = [(80, 24), (120, 40)]




def make_app(tmp_path: Path, engine: ScriptedEngine) -> ConsoleApp:
    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    return ConsoleApp(home, tasks=[make_task(tmp_path / "task")], engine=engine)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_battle_screen_mid_battle_and_finished(tmp_path: Path, size: tuple[int, int]) -> None:
    events = full_battle(BATTLE, nodes=6)
    first_score = next(i for i, e in enumerate(events) if type(e).__name__ == "ScoreComponent")
    engine = ScriptedEngine(events, hold_after=first_score + 2)  # R and A shown, T and L not yet
    app = make_app(tmp_path, engine)

    async def scenario() -> None:
        async with app.run_test(size=size) as pilot:
            screen = app.battle_screen
            screen.query_one("#battle-id", Input).value = BATTLE
            await pilot.press("ctrl+r")
            await until(pilot, lambda: "architecture" in screen.query_one("#score").values)  # type: ignore[attr-defined]
            mid = await shows(pilot, app, ("Red agent search", "probe-", "n=", "Contextual Integrity Score", "0.812",
                                           "0.500", "Sandbox output", "scoring", BATTLE), f"mid-battle at {size}")
            assert "0.750" not in mid, "the testing score is shown before the engine computed it"
            engine.release.set()
            await until(pilot, lambda: screen.last_ending is not None)
            await shows(pilot, app, ("0.750", "0.600", "× 0.800", "scored", "⚑ high"), f"when finished at {size}")
    run(scenario)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_ledger_screen(tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(tmp_path, ScriptedEngine([]))
    with Ledger.open(app.home) as led:
        for n in range(3):
            led.append(f"seen-{n}", {"battle_id": f"seen-{n}", "task_id": "lru-cache", "cis_score": 0.25 * n,
                                     "status": "scored", "purple_agent": "mock:good"}, {}, {})

    async def scenario() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            await shows(pilot, app, ("seen-0", "seen-2", "0.500", "scored", "3/3 entries", "Verify", "Export"),
                        f"on the ledger screen at {size}")
    run(scenario)


def test_the_command_palette_reaches_the_ledger(tmp_path: Path) -> None:
    app = make_app(tmp_path, ScriptedEngine([]))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await run_from_palette(pilot, app, "Show ledger screen")
            await until(pilot, lambda: app.screen is app.ledger_screen)
    run(scenario)
