"""The injection adapter without Docker: its batching rule, and a run that cannot start shown in one line."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from pilot_helpers import until

from ledger.keys import create_key
from logomesh.inject.run import InjectOutcome, InjectRequest
from logomesh.tasks import default_tasks_dir, load_task_dir
from tui.app import ConsoleApp
from tui.inject_runner import AddedNode, InjectSetupError, Item, VisitedNode, coalesce
from tui.screens.injection import InjectionScreen
from tui.widgets.injection.verdict_log import VerdictLog

NO_SANDBOX = "the run cannot start: no sandbox works here (start Docker)"


def test_coalescing_keeps_every_node_added_and_the_last_update_per_node_in_order() -> None:
    readme = AddedNode(1, 0, "placement:readme", ("readme",))
    items: list[Item] = [AddedNode(0, None, "root", ()), VisitedNode(0, 1, 0.0), readme, VisitedNode(1, 1, 1.0),
                         VisitedNode(0, 2, 0.5)]
    assert coalesce(items) == [AddedNode(0, None, "root", ()), readme,
                               VisitedNode(1, 1, 1.0), VisitedNode(0, 2, 0.5)]


def test_a_run_that_cannot_start_says_why_in_one_line_and_the_form_can_start_again(tmp_path: Path) -> None:
    requests: list[InjectRequest] = []

    def engine(request: InjectRequest) -> InjectOutcome:
        requests.append(request)
        raise InjectSetupError(NO_SANDBOX)

    home = tmp_path / "home"
    create_key(home / "keys", seed=hashlib.sha256(b"tui-test-0").digest())
    app = ConsoleApp(home, tasks=[load_task_dir(default_tasks_dir() / "rate-limiter")], inject_engine=engine)

    async def scenario() -> None:
        async with app.run_test(size=(90, 30), notifications=True) as pilot:
            await pilot.press("ctrl+y")
            await until(pilot, lambda: isinstance(app.screen, InjectionScreen))
            screen = app.injection_screen
            await pilot.press("ctrl+r")
            await until(pilot, lambda: screen.last_ending is not None)
            ending = screen.last_ending
            assert ending is not None and (ending.status, ending.reason) == ("error", NO_SANDBOX)
            assert [(r.task_id, r.budget, r.seed, r.target.kind) for r in requests] == [
                ("rate-limiter", 40, 0, "inject-obeying")]
            assert requests[0].home == home and requests[0].observer is not None
            assert list(screen.query_one(VerdictLog).plain_lines) == [f"injection run error: {NO_SANDBOX}"]
            assert [n.message for n in app._notifications] == [f"injection run error: {NO_SANDBOX}"]
            assert not screen.runner.running and screen.check_action("start", ())

    asyncio.run(scenario())
