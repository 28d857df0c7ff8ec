"""The green agent's A2A executor: one assessment request in, one battle run, its result out.

The battle runs on a worker thread (``run_battle`` is synchronous); its events
cross to the event loop through an asyncio queue and go out, in order, as
``working`` status updates. Each assessment owns its request, queue and
updater; besides its read-only settings the executor holds only the cancel
token and future of each running battle, by A2A task id, touched on the event
loop alone.

``tasks/cancel`` cancels that token and waits for the battle thread to return
(within about a second: it is recorded as ``cancelled`` with its stage) before
it closes the task as canceled, so when the caller hears back nothing keeps
running and nothing was recorded as scored. ``execute`` then ends its progress
relay and adds no result. If ``execute`` itself is cancelled (the SDK does so
after a cancel, and at shutdown) it stops the battle the same way and waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import TaskState

from logomesh.battle.request import BattleRequest, BattleSetupError
from logomesh.battle.spine import BattleOutcome, run_battle
from logomesh.cancel import CancelToken
from logomesh.events import EventSink
from logomesh.green.assessment import Assessment, AssessmentError, parse_assessment
from logomesh.progress import describe
from logomesh.purple.a2a_errors import one_line
from logomesh.purple.server import open_task

Runner = Callable[[BattleRequest, EventSink], BattleOutcome]
_DONE = None


@dataclass(frozen=True)
class GreenSettings:
    home: Path
    tasks_dir: Path | None = None
    runner: Runner = run_battle


def summary_line(outcome: BattleOutcome) -> str:
    """One line for humans: the battle, its CIS and status, and where it was recorded."""
    result = outcome.result
    line = f"battle {result.battle_id} on task {result.task_id}: CIS {result.cis_score:.3f} ({result.status})"
    if not result.ending.scored and result.ending.reason:
        line += f": {one_line(result.ending.reason, 160)}"
    if outcome.sequence is not None:
        line += f"; ledger entry #{outcome.sequence}"
    return line


def battle_request(assessment: Assessment, a2a_task_id: str, settings: GreenSettings) -> BattleRequest:
    battle_id = assessment.battle_id or f"{assessment.task_id}-{a2a_task_id}"
    return BattleRequest(task_id=assessment.task_id, battle_id=battle_id, seed=assessment.seed, home=settings.home,
                         purple_url=assessment.purple_url, protocol=assessment.protocol, sandbox=assessment.sandbox,
                         red_budget_s=assessment.red_budget_s, red=assessment.red,
                         review_llm=assessment.review_llm)


def _say(updater: TaskUpdater, text: str) -> Any:
    return updater.new_agent_message([new_text_part(text)])


async def _relay(updater: TaskUpdater, lines: asyncio.Queue[str | None]) -> None:
    """Forward progress lines as working status updates until the end marker."""
    while (line := await lines.get()) is not _DONE:
        await updater.update_status(TaskState.TASK_STATE_WORKING, _say(updater, line))


async def _stop(relay: asyncio.Task[None]) -> None:
    """End a progress relay at once, dropping the lines it has not sent."""
    relay.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await relay


class GreenExecutor(AgentExecutor):
    def __init__(self, settings: GreenSettings) -> None:
        self.settings = settings
        self._running: dict[str, tuple[CancelToken, asyncio.Future[BattleOutcome]]] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        parts = list(context.message.parts) if context.message is not None else []
        try:
            assessment = parse_assessment(get_text_parts(parts), get_data_parts(parts), self.settings.tasks_dir)
        except AssessmentError as exc:
            await updater.reject(_say(updater, f"rejected: {exc}"))
            return
        request = battle_request(assessment, context.task_id or "", self.settings)
        await updater.start_work(_say(updater, f"battle {request.battle_id}: task {request.task_id} against "
                                               f"{request.purple_url}"))
        outcome = await self._run(request, context.task_id or "", updater)
        if outcome is None:
            return
        summary = summary_line(outcome)
        await updater.add_artifact([new_data_part(outcome.result.to_json(), media_type="application/json"),
                                    new_text_part(summary)], name="assessment-result")
        await updater.complete(_say(updater, summary))

    async def _run(self, request: BattleRequest, task_id: str, updater: TaskUpdater) -> BattleOutcome | None:
        """Run the battle off the loop, streaming its progress; ``None`` once the task is closed as failed."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def emit(event: Any) -> None:
            line = describe(event)  # the CLI's wording: one renderer for every consumer of the stream
            if line is not None:
                loop.call_soon_threadsafe(lines.put_nowait, line.strip())

        token = CancelToken()
        relay = asyncio.create_task(_relay(updater, lines))
        cancellable = dataclasses.replace(request, cancel=token)
        battle = asyncio.ensure_future(asyncio.to_thread(self.settings.runner, cancellable, emit))
        self._running[task_id] = (token, battle)
        try:
            outcome = await asyncio.shield(battle)
        except asyncio.CancelledError:  # the SDK cancelled execute (after tasks/cancel, or at shutdown)
            token.cancel()
            try:
                with contextlib.suppress(Exception):
                    await battle  # it stops within about a second and is recorded as cancelled
            finally:
                await _stop(relay)
            raise
        except BattleSetupError as exc:
            await self._finish_relay(relay, lines)
            await updater.reject(_say(updater, f"rejected: {exc}"))
            return None
        except Exception as exc:  # the runner should not raise; if it does, the caller still gets a reason
            await self._finish_relay(relay, lines)
            await updater.failed(_say(updater, f"battle crashed: {type(exc).__name__}: {one_line(str(exc))}"))
            return None
        finally:
            self._running.pop(task_id, None)
        if token.cancelled:  # tasks/cancel closes the task as canceled: no progress or result after it
            await _stop(relay)
            return None
        await self._finish_relay(relay, lines)
        return outcome

    @staticmethod
    async def _finish_relay(relay: asyncio.Task[None], lines: asyncio.Queue[str | None]) -> None:
        lines.put_nowait(_DONE)
        await relay

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """``tasks/cancel``: stop the task's battle and wait until it is recorded, then close the task."""
        running = self._running.get(context.task_id or "")
        if running is not None:
            token, battle = running
            token.cancel()
            with contextlib.suppress(Exception):
                await asyncio.shield(battle)
        updater = await open_task(context, event_queue)
        await updater.cancel()
