"""Pilot tests of the injection screen: real mock purples on loopback, the real oracles in the real sandbox, the
real ledger; the form's refusals with an engine that must never be called."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
from pilot_helpers import shows, until
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Select
from typer.testing import CliRunner

from ledger import Ledger
from ledger.keys import create_key
from logomesh.cli import app as cli
from logomesh.inject.record import ATTEMPT_STATUS, RUN_STATUS
from logomesh.inject.report import run_json
from logomesh.inject.run import InjectOutcome, InjectRequest
from logomesh.tasks import default_tasks_dir, load_task_dir
from tui.app import ConsoleApp
from tui.screens.injection import InjectionScreen
from tui.widgets.battle.mcts_tree import MctsTree
from tui.widgets.injection.attempt_view import AttemptView
from tui.widgets.injection.verdict_log import VerdictLog

TASK = "rate-limiter"
RUN_TIMEOUT_S = 240.0


def make_app(tmp_path: Path, **kwargs: object) -> ConsoleApp:
    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    return ConsoleApp(home, tasks=[load_task_dir(default_tasks_dir() / TASK)], **kwargs)  # type: ignore[arg-type]


async def open_screen(pilot: Pilot[None], app: ConsoleApp) -> InjectionScreen:
    await pilot.press("ctrl+y")
    await until(pilot, lambda: isinstance(app.screen, InjectionScreen))
    screen = app.injection_screen
    return screen


def fill(screen: InjectionScreen, kind: str, budget: str, seed: str, kind_seed: str) -> None:
    screen.query_one("#purple", Select).value = kind
    screen.query_one("#budget", Input).value = budget
    screen.query_one("#seed", Input).value = seed
    screen.query_one("#kind-seed", Input).value = kind_seed
    screen.query_one(Checkbox).value = False  # no hidden tests: the CLI's --no-utility


def cli_report(home: Path, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["inject", "run", "--task", TASK, "--home", str(home), "--json", *args])
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(result.stdout)
    return report


@pytest.mark.slow
@pytest.mark.docker
def test_a_run_against_the_obeying_mock_shows_tree_payloads_verdicts_and_the_commands_summary(tmp_path: Path) -> None:
    app = make_app(tmp_path)

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_screen(pilot, app)
            fill(screen, "inject-obeying", "8", "1", "1")
            await pilot.press("ctrl+r")
            tree = screen.query_one(MctsTree)
            await until(pilot, lambda: len(tree.stats) > 1 and bool(screen.attempts), RUN_TIMEOUT_S)
            first = screen.attempts[0]
            await until(pilot, lambda: screen.last_ending is not None, RUN_TIMEOUT_S)
            await pilot.pause()
            ending = screen.last_ending
            assert ending is not None and ending.status == "finished", ending.reason if ending else None
            outcome = ending.outcome
            assert isinstance(outcome, InjectOutcome)

            # the tree: every node added, each leaf's figures as the search left them
            assert len(tree.stats) > outcome.queries
            assert all("n=" in tree.label_of(node) and "v=" in tree.label_of(node) for node in tree.stats)
            assert tree.stats[0].visits == outcome.queries
            met = [r for r in outcome.records if r.met]
            for record in met:
                assert tree.label_of(screen.leaf_ids[record.path]).startswith(f"⚑ {record.severity} ")

            # the latest attempt: its payload and answer digest; every verdict in the log
            view = screen.query_one(AttemptView)
            last = outcome.records[-1]
            assert view.shown == last
            payload_words = last.payload.decode().split()[:6]
            await shows(pilot, app, [f"Attempt q{last.query}", last.answer_sha256[:16], *payload_words], "attempt")
            lines = list(screen.query_one(VerdictLog).plain_lines)
            for record in outcome.records:
                said = "met" if record.met else "not met"
                assert any(line.startswith(f"q{record.query} ") and f"{record.objective}: {said}" in line
                           and record.evidence in line for line in lines), (record, lines)

            # the tree's selection shows the attempt under the node
            tree.focus()
            for _ in range(len(tree.stats)):  # down the tree as a person would, to the first query's leaf
                await pilot.press("down")
                if view.shown == first:
                    break
            assert view.shown == first
            assert view.border_title is not None and "selected" in str(view.border_title)
            await pilot.press("l")
            assert view.shown == last

            # the summary is the command's: same run, same JSON, each objective's line on screen
            report = await asyncio.to_thread(cli_report, tmp_path / "cli", "--purple-kind", "inject-obeying",
                                             "--kind-seed", "1", "--seed", "1", "--budget", "8", "--no-utility")
            assert json.dumps(run_json(outcome), sort_keys=True) == json.dumps(report, sort_keys=True)
            objectives = report["objectives"]
            assert isinstance(objectives, list)
            words = [f"run finished: {report['queries']} queries, {report['successes']} successes"]
            for one in objectives:
                reached = one["queries_to_first_success"]
                words.append(f"{one['objective']}: reached at query {reached}" if reached is not None
                             else f"{one['objective']}: not reached")
            written = "\n".join(screen.query_one(VerdictLog).plain_lines)  # as written: wrapping plays no part
            assert all(word in written for word in words), (words, written)
            assert f"recorded to the ledger: run {report['run_id']}" in written
            await shows(pilot, app, ["run finished", "recorded to the ledger", str(report["run_id"])], "in the log")
            with Ledger.open(app.home) as led:
                stored = led.get(str(report["run_id"]))
                statuses = [e.status for e in led.entries()]
            assert stored is not None and {k: stored.result[k] for k in report} == report
            assert statuses == [ATTEMPT_STATUS] * outcome.queries + [RUN_STATUS]

    asyncio.run(scenario())


@pytest.mark.slow
@pytest.mark.docker
def test_escape_cancels_a_run_which_keeps_every_query_shown_and_is_recorded_cancelled(tmp_path: Path) -> None:
    app = make_app(tmp_path)

    async def scenario() -> None:
        async with app.run_test(size=(90, 30)) as pilot:
            screen = await open_screen(pilot, app)
            fill(screen, "inject-ignoring", "40", "3", "0")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: len(screen.attempts) >= 2, RUN_TIMEOUT_S)
            await pilot.press("escape")
            await until(pilot, lambda: screen.last_ending is not None, 30.0)
            ending = screen.last_ending
            assert ending is not None and ending.status == "cancelled" and ending.outcome is None
            shown = len(screen.attempts)
            assert 2 <= shown < 40
            written = "\n".join(screen.query_one(VerdictLog).plain_lines)
            assert f"run cancelled after {shown} queries" in written and "recorded as cancelled" in written, written
            await shows(pilot, app, ["cancelled", "cancelling"], "in the log and the status line")
            with Ledger.open(app.home) as led:
                entries = list(led.entries())
                run = led.get(entries[-1].battle_id)
            assert [e.status for e in entries] == [ATTEMPT_STATUS] * shown + [RUN_STATUS]
            assert run is not None and run.result["cancelled"] is True and run.result["queries"] == shown
            assert not screen.runner.running

    asyncio.run(scenario())


class NeverCalled:
    def __init__(self) -> None:
        self.requests: list[InjectRequest] = []

    def __call__(self, request: InjectRequest) -> InjectOutcome:
        self.requests.append(request)
        raise AssertionError("the form must not start a run")


@pytest.mark.parametrize(("field", "value", "said"), [
    ("#task", Select.NULL, "no task: pick the task"),
    ("#budget", "0", "budget must be a whole number of queries, at least 1"),
    ("#budget", "", "budget must be a whole number of queries, at least 1"),
    ("#purple-timeout", "0", "answer timeout must be a finite, positive number of seconds"),
    ("#purple-timeout", "soon", "answer timeout must be a number of seconds"),
])
def test_bad_input_gets_one_line_and_no_start(tmp_path: Path, field: str, value: object, said: str) -> None:
    engine = NeverCalled()
    app = make_app(tmp_path, inject_engine=engine)

    async def scenario() -> None:
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            screen = await open_screen(pilot, app)
            screen.query_one(field).value = value  # type: ignore[attr-defined]
            await pilot.pause()
            await pilot.press("ctrl+r")
            await until(pilot, lambda: bool(list(app._notifications)))
            messages = [n.message for n in app._notifications]
            assert len(messages) == 1 and said in messages[0] and "\n" not in messages[0], messages
            await pilot.pause(0.2)
            assert engine.requests == [] and not screen.runner.running
            assert screen.last_ending is None

    asyncio.run(scenario())


class Recording:
    """An engine that keeps the request it is asked to run, then fails it (the form's part is all that is read)."""

    def __init__(self) -> None:
        self.requests: list[InjectRequest] = []

    def __call__(self, request: InjectRequest) -> InjectOutcome:
        self.requests.append(request)
        raise RuntimeError("not run: only the request is read")


def test_the_search_and_the_answer_timeout_reach_the_run_as_the_commands_options(tmp_path: Path) -> None:
    engine = Recording()
    app = make_app(tmp_path, inject_engine=engine)

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_screen(pilot, app)
            fill(screen, "inject-refusing", "5", "3", "0")
            screen.query_one("#search", Select).value = "random"
            screen.query_one("#purple-timeout", Input).value = "30"
            await pilot.pause()
            await pilot.press("ctrl+r")
            await until(pilot, lambda: bool(engine.requests))
            [request] = engine.requests
            assert (request.search, request.purple_timeout_s, request.budget, request.seed) == ("random", 30.0, 5, 3)
            assert request.target.kind == "inject-refusing" and request.utility is False

    asyncio.run(scenario())
