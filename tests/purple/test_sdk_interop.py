"""Interoperation with code none of us wrote: the a2a-sdk client and an a2a-sdk server."""

from __future__ import annotations

import json

import pytest
from a2a.helpers.proto_helpers import get_artifact_text, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import AgentSkill, InvalidParamsError, Part, TaskState
from sdk import sdk_send
from starlette.applications import Starlette

from logomesh.purple.client import ExchangeSettings, PurpleTaskFailed, request_submission
from logomesh.purple.server import RunningServer, agent_card, build_app, open_task, start_in_thread
from logomesh.submission import Submission
from logomesh.tasks import TaskSpec

SUBMISSION = {"sourceCode": "def add(a, b):\n    return a + b\n", "testCode": "", "rationale": "chunked answer"}


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
@pytest.mark.parametrize("streaming", [False, True])
def test_sdk_client_gets_the_canned_submission_from_our_mock(mock_server: RunningServer, adder: TaskSpec,
                                                             protocol: str, streaming: bool) -> None:
    events = sdk_send(mock_server.url, protocol, [Part(text="write it")], {"battle_id": "adder:good"},
                      streaming=streaming)
    final = events[-1]
    task = final.task if final.HasField("task") else None
    if streaming:
        assert final.HasField("status_update")
        assert final.status_update.status.state == TaskState.TASK_STATE_COMPLETED
        texts = [get_artifact_text(e.artifact_update.artifact) for e in events if e.HasField("artifact_update")]
    else:
        assert task is not None and task.status.state == TaskState.TASK_STATE_COMPLETED
        texts = [get_artifact_text(a) for a in task.artifacts]
    assert Submission.from_text(texts[0]).source == adder.labelled_submission("good").submission.source


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
def test_sdk_client_sees_unknown_battle_as_an_error(mock_server: RunningServer, protocol: str) -> None:
    with pytest.raises(InvalidParamsError, match="unknown battle_id"):
        sdk_send(mock_server.url, protocol, [Part(text="x")], {"battle_id": "adder:missing"}, streaming=False)


class ChunkingExecutor(AgentExecutor):
    """An SDK agent of the test's own: progress, then the answer as a data part or in two text chunks."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        await updater.start_work(updater.new_agent_message([new_text_part("thinking")]))
        mode = context.get_user_input()
        if "FAIL" in mode:
            await updater.failed(updater.new_agent_message([new_text_part("no GPU today")]))
            return
        if "DATA" in mode:
            await updater.add_artifact([new_data_part(SUBMISSION)], artifact_id="a", name="answer")
        else:
            text = json.dumps(SUBMISSION)
            await updater.add_artifact([new_text_part(text[:25])], artifact_id="a", name="answer", last_chunk=False)
            await updater.add_artifact([new_text_part(text[25:])], artifact_id="a", name="answer", append=True,
                                       last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _sdk_server_app(url: str) -> Starlette:
    skill = AgentSkill(id="s", name="s", description="test agent", tags=["test"])
    return build_app(agent_card("chunker", "an a2a-sdk agent built in the test", url, [skill], version="0"),
                     ChunkingExecutor())


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
@pytest.mark.parametrize("stream", [False, True])
def test_our_client_against_an_sdk_server(adder: TaskSpec, protocol: str, stream: bool) -> None:
    # The prompt text decides the executor's mode; patch the task title to steer it.
    data_task = type(adder)(**{**adder.__dict__, "title": "DATA please"})
    settings = ExchangeSettings(protocol=protocol, stream=stream)
    with start_in_thread(_sdk_server_app) as server:
        chunked = request_submission(server.url, adder, "b1", settings)
        as_data = request_submission(server.url, data_task, "b2", settings)
        failing = type(adder)(**{**adder.__dict__, "title": "FAIL"})
        with pytest.raises(PurpleTaskFailed, match=r"ended \(failed\): no GPU today"):
            request_submission(server.url, failing, "b3", settings)
    assert chunked.submission.rationale == "chunked answer"
    assert as_data.submission.source == SUBMISSION["sourceCode"]
    assert chunked.agent == "chunker"
