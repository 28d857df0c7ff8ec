"""The LLM purple agent against a local stand-in that speaks the chat-completions protocol."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from logomesh.purple.client import PurpleTaskFailed, request_submission
from logomesh.purple.llm import LlmSettings, llm_app_factory
from logomesh.purple.server import start_in_thread
from logomesh.tasks import TaskSpec

KEY = "sk-test-not-a-real-key-123"
ANSWER = {"sourceCode": "def add(a, b):\n    return a + b\n", "testCode": "", "rationale": "from the model"}


@dataclass
class StandIn:
    """A chat-completions endpoint whose next answer the test chooses, recording what it was asked."""

    reply: str = "```json\n" + json.dumps(ANSWER) + "\n```"
    status: int = 200
    seen: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def app(self, url: str) -> Starlette:
        async def completions(request: Request) -> Response:
            self.seen.append((await request.json(), request.headers.get("authorization", "")))
            if self.status != 200:
                return JSONResponse({"error": {"message": "overloaded"}}, status_code=self.status)
            return JSONResponse({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": self.reply}, "finish_reason": "stop"}]})

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture
def stand_in() -> Iterator[tuple[StandIn, str]]:
    endpoint = StandIn()
    with start_in_thread(endpoint.app) as server:
        yield endpoint, server.url + "v1"


@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
def test_llm_purple_answers_with_the_models_submission(stand_in: tuple[StandIn, str], adder: TaskSpec,
                                                       protocol: str) -> None:
    endpoint, base_url = stand_in
    settings = LlmSettings(base_url, "tiny-coder", KEY, seed=7)
    with start_in_thread(llm_app_factory(settings)) as purple:
        exchange = request_submission(purple.url, adder, "adder-llm-1", protocol=protocol)
    assert exchange.submission.rationale == "from the model"
    assert exchange.agent == "LogoMesh LLM purple agent (tiny-coder)"
    body, auth = endpoint.seen[-1]
    assert (body["model"], body["temperature"], body["seed"]) == ("tiny-coder", 0, 7)
    assert body["messages"][-1]["content"].startswith("CODING TASK: Add two numbers")
    assert auth == f"Bearer {KEY}"
    assert KEY.encode() not in exchange.response_bytes


@pytest.mark.parametrize(
    ("reply", "status", "reason"),
    [("I cannot help with that.", 200, "model answer is not a submission"),
     (json.dumps({"sourceCode": "x = 1"}), 200, "lacks field"),
     ("unused", 503, "HTTP 503")],
)
def test_llm_failures_end_the_task_failed_with_the_reason(stand_in: tuple[StandIn, str], adder: TaskSpec,
                                                          reply: str, status: int, reason: str) -> None:
    endpoint, base_url = stand_in
    endpoint.reply, endpoint.status = reply, status
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", KEY))) as purple, \
            pytest.raises(PurpleTaskFailed, match=reason) as caught:
        request_submission(purple.url, adder, "adder-llm-2")
    assert KEY not in str(caught.value)


def test_no_key_means_no_authorization_header(stand_in: tuple[StandIn, str], adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        request_submission(purple.url, adder, "adder-llm-3")
    assert endpoint.seen[-1][1] == ""
