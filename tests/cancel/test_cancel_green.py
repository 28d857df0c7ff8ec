"""``tasks/cancel`` on the green agent stops its battle: nothing keeps running and nothing is recorded as scored.

The green agent runs as a real server on loopback; the a2a-sdk client (a library none of us wrote)
starts an assessment over a stream, waits until the battle is in the stage under test, and cancels
the task. By the time ``tasks/cancel`` answers, the battle thread has returned and the ledger holds
the battle as cancelled, with that stage. The purple agent that hangs would hold its battle for an hour
(``PURPLE_WAIT_S``), so the generous ``HANG_GUARD_S`` only catches a cancel that does not work.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import threading
import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_text_parts, new_data_part
from a2a.types import CancelTaskRequest, Message, Role, SendMessageRequest, StreamResponse, Task, TaskState
from cancel_helpers import (
    HANG_GUARD_S,
    PURPLE_WAIT_S,
    SearchAfterCancel,
    bwrap_children,
    hanging_purple,
    make_home,
)

from ledger import Ledger
from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import BattleOutcome, run_battle
from logomesh.events import EventSink
from logomesh.green.app import green_app_factory
from logomesh.green.executor import GreenSettings
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import start_in_thread


@dataclass
class RunnerSpy:
    """The green's battle runner (the real ``run_battle``), noting when each battle returns."""

    returned: threading.Event = field(default_factory=threading.Event)
    outcomes: list[BattleOutcome] = field(default_factory=list)
    search: SearchAfterCancel = field(default_factory=SearchAfterCancel)

    def __call__(self, request: BattleRequest, emit: EventSink) -> BattleOutcome:
        try:  # a purple agent that hangs holds the battle for an hour: only the cancel ends it
            outcome = run_battle(dataclasses.replace(request, purple_timeout_s=PURPLE_WAIT_S),
                                 self.search.wrap(request.cancel, emit))
            self.outcomes.append(outcome)
            return outcome
        finally:
            self.returned.set()


def _status_text(event: StreamResponse) -> str:
    if event.HasField("status_update"):
        return " ".join(get_text_parts(event.status_update.status.message.parts))
    return ""


def _task_id(event: StreamResponse) -> str:
    if event.HasField("task"):
        return str(event.task.id)
    if event.HasField("status_update"):
        return str(event.status_update.task_id)
    return ""


async def _assess_then_cancel(green_url: str, request: dict[str, Any], when: str) -> tuple[Task, float]:
    """Start the assessment, cancel its task once a status says ``when``; the cancelled task and the wait."""
    async with httpx.AsyncClient(timeout=120) as http:
        card = await A2ACardResolver(http, green_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[new_data_part(request)])
        stream = cast(AsyncGenerator[StreamResponse, None], client.send_message(SendMessageRequest(message=message)))
        task_id = ""
        async for event in stream:
            task_id = task_id or _task_id(event)
            if when in _status_text(event):
                break
        else:
            raise AssertionError(f"the assessment ended before any status said {when!r}")
        started = time.monotonic()
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
        waited = time.monotonic() - started
        await stream.aclose()
        return cancelled, waited


def _assert_cancelled(home: Path, battle_id: str, stage: str, spy: RunnerSpy, cancelled: Task, waited: float) -> None:
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert waited < HANG_GUARD_S
    assert spy.returned.is_set(), "the battle was still running when tasks/cancel answered"
    with Ledger.open(home) as led:
        entries = list(led.entries())
        stored = led.get(battle_id)
    assert stored is not None
    assert (stored.result["status"], stored.result["stage"]) == ("cancelled", stage)
    assert spy.search.nodes <= 1  # the search, if any, stopped at the cancel
    assert [(e.battle_id, e.status) for e in entries] == [(battle_id, "cancelled")]  # nothing marked scored


def _no_pending_task_destroyed(caplog: pytest.LogCaptureFixture) -> None:
    """The green's server stopped without asyncio reporting a task destroyed while pending."""
    gc.collect()
    destroyed = [r.getMessage() for r in caplog.records if "Task was destroyed but it is pending" in r.getMessage()]
    assert destroyed == []


def test_tasks_cancel_while_the_purple_agent_is_answering(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    home = make_home(tmp_path)
    spy = RunnerSpy()
    battle_id = "green-cancel-purple"
    with hanging_purple() as purple_url, \
            start_in_thread(green_app_factory(GreenSettings(home=home, runner=spy))) as green:
        request = {"participants": {"purple": purple_url},
                   "config": {"task_id": "rate-limiter", "battle_id": battle_id, "red": False}}
        cancelled, waited = asyncio.run(_assess_then_cancel(green.url, request, "stage: purple"))
        _assert_cancelled(home, battle_id, "purple", spy, cancelled, waited)
    _no_pending_task_destroyed(caplog)


@pytest.mark.bwrap
def test_tasks_cancel_during_the_red_search_kills_the_box(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    home = make_home(tmp_path)
    spy = RunnerSpy()
    battle_id = "lru-cache:no-lock:green-cancel"
    with start_in_thread(mock_app_factory(MockResponses())) as purple, \
            start_in_thread(green_app_factory(GreenSettings(home=home, runner=spy))) as green:
        request = {"participants": {"purple": purple.url},
                   "config": {"task_id": "lru-cache", "battle_id": battle_id, "sandbox": "bwrap",
                              "red_budget_s": 600}}
        cancelled, waited = asyncio.run(_assess_then_cancel(green.url, request, "stage: red"))
        _assert_cancelled(home, battle_id, "red", spy, cancelled, waited)
        assert bwrap_children() == []
    _no_pending_task_destroyed(caplog)
