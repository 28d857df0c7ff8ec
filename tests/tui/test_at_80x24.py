"""What a person sees at 80x24, read from the screen: every line of the CIS derivation, ledger ids that differ only
in their tail shown apart, a pair's reason for having no interval, and toasts that leave the status line alone."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pilot_helpers import run, shows, until
from scripted_campaign import ScriptedExecutor, nothing_to_check
from scripted_engine import BANDED_CIS, BATTLE, ScriptedEngine, banded_battle, make_task
from test_campaign_screen import TASKS, open_campaign, score
from textual.widgets import Static

from ledger import Ledger
from ledger.keys import create_key
from tui.app import ConsoleApp
from tui.widgets.battle.score_panel import ScorePanel
from tui.widgets.battle.status_line import StatusLine
from tui.widgets.campaign.comparisons import ComparisonsTable
from tui.widgets.ledger.entries_table import EntriesTable

SIZE = (80, 24)
TWINS = ("task-b:no-lock:c-7721ccb6657a:r1", "task-b:no-lock:c-7721ccb6657a:r2")  # alike but for the last char


def test_every_line_of_the_cis_derivation_is_whole_at_80x24(tmp_path: Path) -> None:
    app = ConsoleApp(tmp_path, tasks=[make_task(tmp_path / "task")],
                     engine=ScriptedEngine(banded_battle(BATTLE, 3), cis=BANDED_CIS))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            score_panel = app.battle_screen.query_one(ScorePanel)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: score_panel.final is not None and not score_panel.revealing)
            text = await shows(pilot, app, ["CIS = 0.5×x = 0.266"], "at 80x24")
            lines = [" ".join(row.split()) for row in text.splitlines()]  # styled runs are joined by a space
            derivation = ["raw = 0.25×(R+A+T+L) = 0.666", "× 0.800 red", "x = 0.666 × 0.800 = 0.533",
                          "not all hidden passed:", "CIS = 0.5×x = 0.266 scored"]
            for line in derivation:  # each whole on one row of the screen, inside the panel's border
                assert any(line in row for row in lines), f"{line!r} not whole on screen:\n" + "\n".join(lines)
            assert "…" not in str(app.battle_screen.query_one("#sum", Static).render())
            panel = score_panel.region
            assert score_panel.max_scroll_y == 0, "the panel scrolls: a line of the derivation is hidden"
            assert panel.bottom <= app.battle_screen.query_one(StatusLine).region.y

    run(scenario)


def fill_twins(home: Path) -> None:
    create_key(home / "keys", seed=hashlib.sha256(b"tui-80x24").digest())
    with Ledger.open(home) as led:
        for battle_id in TWINS:
            result: dict[str, Any] = {"battle_id": battle_id, "task_id": "task-b", "cis_score": 0.5,
                                      "status": "scored", "purple_agent": "mock:no-lock"}
            led.append(battle_id, result, {"task_spec": b"spec"}, {"purple_agent": "mock:no-lock"})


def test_ledger_ids_that_differ_only_in_their_tail_look_different_at_80x24(tmp_path: Path) -> None:
    fill_twins(tmp_path)
    app = ConsoleApp(tmp_path, tasks=[make_task(tmp_path / "task")], engine=ScriptedEngine([]))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+l")
            await until(pilot, lambda: app.ledger_screen.loaded)
            table = app.ledger_screen.query_one(EntriesTable)
            await until(pilot, lambda: table.row_count == 2)
            shown = [str(table.get_cell(str(sequence), "battle_id")) for sequence in (0, 1)]
            assert shown[0] != shown[1], shown
            assert shown[0].endswith("r1") and shown[1].endswith("r2"), shown
            await shows(pilot, app, shown, "in the ledger at 80x24")

    run(scenario)


def test_a_pairs_reason_for_no_interval_is_visible_at_80x24(tmp_path: Path) -> None:
    executor = ScriptedExecutor(score)
    tasks = [make_task(tmp_path / name, name, ("good", "no-lock", "slow")) for name in TASKS]
    app = ConsoleApp(tmp_path / "home", tasks=tasks, executor_factory=executor.factory, campaign_check=nothing_to_check)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_campaign(pilot, app, "good, no-lock", workers=2)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None and screen.settled)
            await pilot.press("v")
            (pair,) = screen.query_one(ComparisonsTable).comparisons
            reason = pair.interval.reason
            assert reason and len(reason) > 30  # longer than what the column has room for at 80 columns
            await shows(pilot, app, [f"why no CI: {reason}"], "under the pairs at 80x24")

    run(scenario)


def test_a_toast_stands_above_the_status_line_at_80x24(tmp_path: Path) -> None:
    fill_twins(tmp_path)
    app = ConsoleApp(tmp_path, tasks=[make_task(tmp_path / "task")], engine=ScriptedEngine([]))

    async def scenario() -> None:
        async with app.run_test(size=SIZE, notifications=True) as pilot:  # off by default under run_test
            for screen, status_of in ((app.battle_screen, lambda: app.battle_screen.query_one(StatusLine)),
                                      (app.ledger_screen, lambda: app.ledger_screen.query_one("#summary"))):
                if app.screen is not screen:
                    await pilot.press("ctrl+l")
                    await until(pilot, lambda: app.ledger_screen.loaded)
                app.notify("a notice long enough to wrap onto a second line of its toast, as a path would", timeout=30)
                await until(pilot, lambda: bool(app.screen.query("Toast")))
                await pilot.pause()
                status = status_of().region
                for toast in app.screen.query("Toast"):
                    assert toast.region.height > 0
                    assert toast.region.bottom <= status.y, (toast.region, status)  # Region.bottom is exclusive
                app.clear_notifications()
                await until(pilot, lambda: not app.screen.query("Toast"))

    run(scenario)
