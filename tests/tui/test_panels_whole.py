"""Every panel of the battle screen is whole at 80x24 and 120x40: inside the screen, above the status line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scripted_engine import make_task

from tui.app import ConsoleApp
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.battle.output_log import SandboxLog
from tui.widgets.battle.score_panel import ScorePanel
from tui.widgets.battle.setup_form import SetupForm
from tui.widgets.battle.status_line import StatusLine


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_the_idle_battle_screen_shows_every_panel_whole(tmp_path: Path, size: tuple[int, int]) -> None:
    app = ConsoleApp(tmp_path, tasks=[make_task(tmp_path)])

    async def scenario() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            screen = app.battle_screen
            status = screen.query_one(StatusLine).region
            for kind in (SetupForm, MctsTree, ScorePanel, SandboxLog):
                region = screen.query_one(kind).region
                assert region.height >= 3, (kind.__name__, region)  # both borders and a row between them
                assert region.bottom <= status.y, (kind.__name__, region, status)  # nothing cut by the status line
                assert region.right <= size[0], (kind.__name__, region)

    asyncio.run(scenario())
