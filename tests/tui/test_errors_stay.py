"""An error in the console stays on screen until dismissed; other notices still time out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pilot_helpers import until

from logomesh.battle.request import BattleRequest, BattleSetupError
from logomesh.battle.spine import BattleOutcome
from logomesh.events import EventSink
from logomesh.tasks import default_tasks_dir, load_task_dir
from tui.app import ERROR_TIMEOUT_S, ConsoleApp


def test_an_error_toast_stays_until_dismissed_and_a_notice_does_not(tmp_path: Path) -> None:
    app = ConsoleApp(tmp_path, tasks=[load_task_dir(default_tasks_dir() / "rate-limiter")])

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            app.notify("export failed: disk full", severity="error", timeout=2)  # a caller's short timeout
            app.battle_screen.notify("exported 3 entries", timeout=2)
            await pilot.pause()
            by_text = {n.message: n for n in app._notifications}
            assert by_text["export failed: disk full"].timeout == ERROR_TIMEOUT_S
            assert by_text["exported 3 entries"].timeout == 2

    asyncio.run(scenario())


def test_a_battle_that_cannot_start_leaves_its_reason_on_screen_until_dismissed(tmp_path: Path) -> None:
    def refused(request: BattleRequest, emit: EventSink) -> BattleOutcome:
        raise BattleSetupError("no sandbox works here: start Docker (see 'logomesh sandbox doctor')")

    app = ConsoleApp(tmp_path, tasks=[load_task_dir(default_tasks_dir() / "rate-limiter")], engine=refused)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+r")
            await until(pilot, lambda: app.battle_screen.last_ending is not None)
            await pilot.pause()
            (shown,) = [n for n in app._notifications if "no sandbox works here" in n.message]
            assert shown.severity == "error" and shown.timeout == ERROR_TIMEOUT_S

    asyncio.run(scenario())
