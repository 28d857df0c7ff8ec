"""Pilot tests of the battle screen, fed by a scripted engine through the real adapter."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from pilot_helpers import run, until
from scripted_engine import BATTLE, ScriptedEngine, endless_search, full_battle, make_task, search_events
from textual.widgets import Digits, Input, Select, Static

from logomesh.events import Event, FindingConfirmed, MctsNodeAdded, MctsNodeUpdated
from tui.app import ConsoleApp
from tui.screens.battle import BattleScreen
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.battle.output_log import MAX_LINE_CHARS, SandboxLog
from tui.widgets.battle.score_panel import REVEAL_S, ScorePanel
from tui.widgets.battle.setup_form import SetupForm
from tui.widgets.battle.status_line import StatusLine
from tui.widgets.form_values import FormError


def make_app(tmp_path: Path, engine: ScriptedEngine) -> ConsoleApp:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return ConsoleApp(home, tasks=[make_task(tmp_path / "task")], engine=engine)


def battle_screen(app: ConsoleApp) -> BattleScreen:
    return app.battle_screen


def test_a_battle_started_with_the_keyboard_fills_every_panel(tmp_path: Path) -> None:
    events = full_battle(BATTLE, nodes=12)
    engine = ScriptedEngine(events)
    app = make_app(tmp_path, engine)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.click("#battle-id")
            await pilot.press(*BATTLE, "ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            await pilot.pause()

            assert [r.battle_id for r in engine.requests] == [BATTLE]
            assert engine.requests[0].mock_variant == "good"
            tree = screen.query_one(MctsTree)
            added = [e for e in events if isinstance(e, MctsNodeAdded)]
            assert sorted(tree.stats) == [e.node_id for e in added]
            for event in added:
                assert tree.stats[event.node_id].parent_id == event.parent_id
            last_update = {e.node_id: e for e in events if isinstance(e, MctsNodeUpdated)}
            for node_id, update in last_update.items():
                assert tree.stats[node_id].visits == update.visits
                assert f"n={update.visits} v={update.mean_value:.2f}" in tree.label_of(node_id)
            assert tree.label_of(3).startswith("⚑ high ")
            best_id = min(last_update, key=lambda n: (-last_update[n].mean_value, n))
            best_seen = last_update[best_id].mean_value
            assert tree.best_value == best_seen
            assert tree.best_path == tree.path_to(best_id) and tree.best_path[0] == 0

            score = screen.query_one(ScorePanel)
            assert score.values == {"rationale": 0.8125, "architecture": 0.5, "testing": 0.75, "logic": 0.6}
            assert score.penalties == [("red", 0.8)]
            assert score.final == 0.4321
            await until(pilot, lambda: not score.revealing)
            assert str(screen.query_one("#cis", Digits).value) == "0.432"
            assert str(screen.query_one("#raw", Static).render()) == "raw = 0.25×(R+A+T+L) = 0.666"
            assert str(screen.query_one("#sum", Static).render()) == (
                "CIS = 0.666 × 0.800 = 0.533\nCIS 0.432 as recorded  scored")
            assert score.history and score.history[-1] == best_seen

            status = screen.query_one(StatusLine)
            assert status.stage == "scored" and status.nodes == 12
            assert screen.last_ending is not None and screen.last_ending.sequence == 1
    run(scenario)


def test_sandbox_output_is_tagged_marked_and_truncated(tmp_path: Path) -> None:
    app = make_app(tmp_path, ScriptedEngine(full_battle(BATTLE, nodes=2)))

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            lines = list(screen.query_one(SandboxLog).plain_lines)
            assert "hidden:test_basic ran 3 tests" in lines
            stderr = next(line for line in lines if line.startswith("hidden:test_edge !"))
            assert stderr.endswith("…") and len(stderr) <= len("hidden:test_edge !") + MAX_LINE_CHARS
            assert "✗ hidden test_edge AssertionError: 2 != 1" in lines
            assert "✓ hidden test_basic" in lines
            assert any(line.startswith("⚑ red finding [high] concurrency CWE-362") for line in lines)
    run(scenario)


def test_cancel_stops_the_engine_and_reports_cancelled(tmp_path: Path) -> None:
    engine = ScriptedEngine(endless_search(BATTLE), pause_s=0.002)
    app = make_app(tmp_path, engine)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: len(screen.query_one(MctsTree).stats) > 20)
            await pilot.press("escape")
            await until(pilot, lambda: screen.last_ending is not None)
            assert engine.done.wait(60)
            stopped_at = engine.emitted
            await pilot.pause(0.2)
            assert engine.emitted == stopped_at, "the engine kept running after cancel"
            assert screen.last_ending is not None
            assert screen.last_ending.status == "cancelled"
            assert "cancelled by the user" in screen.last_ending.reason
            assert screen.query_one(StatusLine).stage == "cancelled"
            assert not screen.runner.running
            # the tree shows every node the engine emitted before it stopped
            assert len(screen.query_one(MctsTree).stats) == stopped_at
    run(scenario)


def test_a_bad_url_is_refused_and_a_good_one_is_remembered(tmp_path: Path) -> None:
    engine = ScriptedEngine(full_battle(BATTLE, nodes=1))
    app = make_app(tmp_path, engine)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            screen.query_one("#purple", Select).value = "url"
            await pilot.pause()
            url = screen.query_one("#url", Input)
            assert not url.disabled
            url.value = "ftp://nowhere"
            await pilot.press("ctrl+r")
            await pilot.pause(0.1)
            assert engine.requests == []
            assert not screen.runner.running
            url.value = "http://127.0.0.1:9"
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            assert engine.requests[0].purple_url == "http://127.0.0.1:9"
            assert engine.requests[0].mock_variant is None
    run(scenario)
    saved = json.loads((tmp_path / "home" / "console.json").read_text())
    assert saved["recent_purple_urls"] == ["http://127.0.0.1:9"]


def test_thousands_of_events_arrive_in_batches_without_loss(tmp_path: Path) -> None:
    events = search_events(BATTLE, 1500)
    app = make_app(tmp_path, ScriptedEngine(events))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            tree = screen.query_one(MctsTree)
            assert len(tree.stats) == 1500
            assert screen.runner.events_seen == len(events)
    run(scenario)


def test_help_lists_the_battle_keys_and_the_palette_offers_every_action(tmp_path: Path) -> None:
    app = make_app(tmp_path, ScriptedEngine([]))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f1")
            await pilot.pause()
            from tui.screens.help import HelpScreen

            assert isinstance(app.screen, HelpScreen)
            described = {description for _, description in app.screen.rows}
            assert {"Start", "Form", "Ledger", "Help", "Quit", "Focus the search tree"} <= described
            assert "Cursor down" not in described
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, BattleScreen)
            titles = {command.title for command in app.get_system_commands(app.screen)}
            assert {"Battle: start", "Battle: cancel", "Ledger: verify", "Ledger: export",
                    "Show ledger screen"} <= titles
    run(scenario)


def test_a_battle_id_already_in_the_ledger_is_refused_and_derived_ids_stay_unique(tmp_path: Path) -> None:
    engine = ScriptedEngine([])
    app = make_app(tmp_path, engine)
    taken = ["mine", "demo-task-x"]

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            screen.ledger_ids = lambda: taken  # type: ignore[method-assign]
            screen.query_one("#battle-id", Input).value = "mine"
            await pilot.press("ctrl+r")
            await pilot.pause(0.1)
            assert engine.requests == [] and not screen.runner.running
            screen.query_one("#battle-id", Input).value = ""
            first = screen.battle_id_for(screen.query_one(SetupForm).choice())
            assert first is not None and first not in taken
            taken.append(first)
            second = screen.battle_id_for(screen.query_one(SetupForm).choice())
            assert second == f"{first}-2"
    run(scenario)


def test_a_finding_confirmed_before_its_node_arrives_still_flags_it(tmp_path: Path) -> None:
    events: list[Event] = [
        MctsNodeAdded(BATTLE, 0, None, "root"),
        FindingConfirmed(BATTLE, "race", "critical", "CWE-362", "lost update", node_id=1),
        MctsNodeAdded(BATTLE, 1, 0, "family:race"),
        MctsNodeAdded(BATTLE, 2, 0, "family:boundary"),
    ]
    app = make_app(tmp_path, ScriptedEngine(events))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            tree = screen.query_one(MctsTree)
            assert tree.label_of(1).startswith("⚑ critical family:race")
            assert "⚑" not in tree.label_of(2) and "⚑" not in tree.label_of(0)
    run(scenario)


def test_a_confirmed_finding_is_scrolled_into_view_and_stays_there_as_nodes_arrive(tmp_path: Path) -> None:
    events: list[Event] = [MctsNodeAdded(BATTLE, 0, None, "root"), MctsNodeAdded(BATTLE, 1, 0, "family:race"),
                           FindingConfirmed(BATTLE, "race", "high", "CWE-362", "lost update", node_id=1),
                           *(MctsNodeAdded(BATTLE, n, 0, f"family:f{n}") for n in range(2, 40))]
    app = make_app(tmp_path, ScriptedEngine(events))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            tree = screen.query_one(MctsTree)
            await pilot.pause(0.1)
            finding = tree.root.children[0].children[0]
            assert finding.data == 1
            line, top, rows = finding.line, tree.scroll_offset.y, tree.size.height
            assert tree.finding_in_view == 1 and not tree.follow
            assert top <= line < top + rows, (line, top, rows)  # followed to the newest, line 39 would show
            assert "⚑ in view" in str(tree.border_subtitle)
    run(scenario)


def test_a_battle_keeps_running_while_the_ledger_screen_is_shown(tmp_path: Path) -> None:
    events = full_battle(BATTLE, nodes=30)
    engine = ScriptedEngine(events, hold_after=10)
    app = make_app(tmp_path, engine)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: engine.emitted == 10)
            await pilot.press("ctrl+l")
            await pilot.pause()
            assert app.screen is app.ledger_screen
            engine.release.set()
            assert engine.done.wait(60)
            await pilot.pause(0.3)
            await pilot.press("ctrl+b")
            await until(pilot, lambda: screen.last_ending is not None)
            assert len(screen.query_one(MctsTree).stats) == 30
            assert screen.query_one(ScorePanel).final == 0.4321
    run(scenario)


def test_the_best_value_sparkline_is_on_an_absolute_scale() -> None:
    from tui.widgets.battle.score_panel import sparkline

    assert sparkline([0.0, 0.5, 1.0], 10) == "▁▅█"
    assert sparkline([0.33] * 4, 10) == "▃▃▃▃"  # flat stays flat, not full bars
    assert sparkline([0.1, 0.2, 0.9], 2) == "▂▇"
    assert sparkline([-1.0, 2.0], 5) == "▁█"


def test_the_tree_follows_the_newest_node_until_the_user_moves_in_it(tmp_path: Path) -> None:
    chain: list[Event] = [MctsNodeAdded(BATTLE, n, n - 1 if n else None, f"step-{n}") for n in range(120)]
    engine = ScriptedEngine(chain, hold_after=60)
    app = make_app(tmp_path, engine)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            tree = screen.query_one(MctsTree)
            await until(pilot, lambda: len(tree.stats) == 60)
            await until(pilot, lambda: tree.follow and tree.scroll_y > 0)  # the newest node is brought into view
            await pilot.press("ctrl+t", "home")
            await until(pilot, lambda: not tree.follow and tree.scroll_y == 0)
            engine.release.set()
            await until(pilot, lambda: screen.last_ending is not None and len(tree.stats) == 120)
            await pilot.pause(0.2)
            assert tree.scroll_y == 0, "the tree scrolled away from where the user put it"
            await pilot.press("f")
            await until(pilot, lambda: tree.follow and tree.scroll_y > 0)
    run(scenario)


def test_labels_drawn_and_measured_agree_with_the_figures(tmp_path: Path) -> None:
    events: list[Event] = [
        MctsNodeAdded(BATTLE, 0, None, "root"),
        MctsNodeAdded(BATTLE, 1, 0, "family:race"),
        MctsNodeUpdated(BATTLE, 1, 4, 0.25),
        MctsNodeUpdated(BATTLE, 0, 4, 0.125),
    ]
    app = make_app(tmp_path, ScriptedEngine(events))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            await pilot.pause(0.1)
            tree = screen.query_one(MctsTree)
            lines = [tree.render_line(y).text.rstrip() for y in range(2)]
            assert lines[0].endswith("root  n=4 v=0.12") and "▼" in lines[0]
            assert lines[1].endswith("family:race  n=4 v=0.25") and "▼" not in lines[1]
            assert tree.virtual_size.width == max(len(line.rstrip()) for line in lines)
            assert tree.best_path == (0, 1)
    run(scenario)


def test_the_form_refuses_a_seed_or_budget_the_engine_cannot_use(tmp_path: Path) -> None:
    app = make_app(tmp_path, ScriptedEngine([]))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)):
            screen = battle_screen(app)
            form = screen.query_one(SetupForm)
            seed = screen.query_one("#seed", Input)
            seed.value = str(2**53)  # not exact in canonical JSON: the ledger would refuse the result
            with pytest.raises(FormError, match="seed must lie between"):
                form.choice()
            seed.value = str(-(2**53) + 1)
            assert form.choice().seed == -(2**53) + 1
            screen.query_one("#budget", Input).value = "-1"
            with pytest.raises(FormError, match="red budget must be 0"):
                form.choice()
    run(scenario)


def test_score_events_sent_in_one_burst_are_revealed_one_step_at_a_time(tmp_path: Path) -> None:
    events = full_battle(BATTLE, nodes=3)  # every score event reaches the screen in one batch
    app = make_app(tmp_path, ScriptedEngine(events))

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = battle_screen(app)
            score = screen.query_one(ScorePanel)
            await pilot.press("ctrl+r")
            seen: list[list[str]] = []
            waiting = 0  # observations with all four components received but not all shown
            while score.final is None or score.revealing or len(score.shown) < 4:
                if not seen or seen[-1] != score.shown:
                    seen.append(score.shown)
                waiting += len(score.values) == 4 and len(score.shown) < 4
                await pilot.pause(0.02)
            assert waiting > 0, "the burst was shown at once: no component waited its turn"
            steps = [step for step, _ in score.reveals]
            assert steps == ["rationale", "architecture", "testing", "logic", "red", "CIS"]
            times = [at for _, at in score.reveals]
            gaps = [later - earlier for earlier, later in pairwise(times)]
            assert min(gaps) >= REVEAL_S * 0.9, f"steps shown closer together than the pacing allows: {gaps}"
            await until(pilot, lambda: str(screen.query_one("#cis", Digits).value) == "0.432")
    run(scenario)


def test_the_score_panel_shows_the_correctness_band_step(tmp_path: Path) -> None:
    """With a CorrectnessBand event the product is x, and a second line places it in its band as the engine did."""
    from logomesh.events import BattleFinished, CorrectnessBand

    ending = [e for e in full_battle(BATTLE, nodes=3) if not isinstance(e, BattleFinished)]
    x = 0.666 * 0.8  # raw 0.666 (the scripted components) times the red factor
    events = [*ending, CorrectnessBand(BATTLE, False, 0.5, x, 0.5 * x, "not every hidden test passed"),
              BattleFinished(BATTLE, round(0.5 * x, 4), "scored")]
    app = make_app(tmp_path, ScriptedEngine(events, cis=round(0.5 * x, 4)))

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = battle_screen(app)
            score = screen.query_one(ScorePanel)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: score.final is not None and not score.revealing)
            assert score.band == (False, 0.5)
            first, *band_line = str(screen.query_one("#sum", Static).render()).splitlines()
            assert first == "x = 0.666 × 0.800 = 0.533"
            # the band's line may take two rows when a scroll bar narrows the panel: the words, not the wrap
            assert " ".join(band_line) == "not all hidden passed: CIS = 0.5×x = 0.266  scored"
            assert str(screen.query_one("#cis", Digits).value) == "0.266"
    run(scenario)


def test_final_lines_place_x_in_its_band_and_flag_a_cis_that_differs() -> None:
    from tui.widgets.battle.score_panel import final_lines

    assert final_lines(0.8, [0.5], 0.7, (True, 0.5)) == [
        "x = 0.800 × 0.500 = 0.400", "all hidden passed: CIS = 0.5 + 0.5×x = 0.700"]
    assert final_lines(0.8, [], 0.4, (False, 0.5)) == ["x = raw = 0.800", "not all hidden passed: CIS = 0.5×x = 0.400"]
    assert final_lines(0.8, [], 0.8, (False, 0.5))[-1] == "CIS 0.800 as recorded"  # the band not applied: flagged
    assert final_lines(0.8, [0.5], 0.4) == ["CIS = 0.800 × 0.500 = 0.400"]  # a stream without the band, as before


def test_the_log_says_when_the_purple_answer_was_cut_at_the_token_limit(tmp_path: Path) -> None:
    """A ``PurpleFinishReported`` after the purple answered: the sandbox log says the answer was truncated."""
    from logomesh.events import PurpleFinishReported, PurpleResponded
    from logomesh.submission import Finish

    events = full_battle(BATTLE, nodes=2)  # the purple answered after the battle started, as the engine says it
    events = [events[0], PurpleResponded(BATTLE, 30, 0, 10, "ab" * 32),
              PurpleFinishReported(BATTLE, Finish("length")), *events[1:]]
    app = make_app(tmp_path, ScriptedEngine(events))

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = battle_screen(app)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            lines = list(screen.query_one(SandboxLog).plain_lines)
            cut = "purple answer: TRUNCATED: the model's answer was cut at the token limit (finish_reason length)"
            assert lines[[line.startswith("purple answered") for line in lines].index(True) + 1] == cut
    run(scenario)
