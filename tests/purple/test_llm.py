"""The LLM purple agent against a local stand-in that speaks the chat-completions protocol."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from logomesh.cancel import Cancelled, CancelToken
from logomesh.purple.a2a_errors import PurpleTimeout
from logomesh.purple.client import ExchangeSettings, PurpleTaskFailed, request_submission
from logomesh.purple.endpoints import EndpointMemory
from logomesh.purple.llm import (
    DEFAULT_ANSWER_TOKENS,
    MIN_ANSWER_TOKENS,
    PROBE_TOKENS,
    SUBMISSION_SCHEMA,
    LlmSettings,
    TemplateError,
    check_template,
    llm_app_factory,
)
from logomesh.purple.server import start_in_thread
from logomesh.tasks import TaskSpec

KEY = "sk-test-not-a-real-key-123"
ANSWER = {"sourceCode": "def add(a, b):\n    return a + b\n", "testCode": "", "rationale": "from the model"}


@dataclass
class StandIn:
    """A chat-completions endpoint whose next answer the test chooses, recording what it was asked."""

    reply: str = "```json\n" + json.dumps(ANSWER) + "\n```"
    status: int = 200
    refuse_schema: bool = False  # answer HTTP 400 to a request that carries a response_format
    seen: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    later: list[str] = field(default_factory=list)  # replies after the first, in order
    models: Any = None  # what GET /v1/models answers (None: 404, as many endpoints)
    listed: int = 0  # how often /v1/models was asked
    delay_s: float = 0.0  # how long each completion takes (a CPU model)
    abandoned: int = 0  # completions whose caller (the agent) hung up while they were being worked on

    def app(self, url: str) -> Starlette:
        async def completions(request: Request) -> Response:
            self.seen.append((await request.json(), request.headers.get("authorization", "")))
            waited = 0.0
            while waited < self.delay_s:  # a model thinking, that notices its caller hang up
                if await request.is_disconnected():
                    self.abandoned += 1
                    return Response(status_code=499)
                await asyncio.sleep(0.05)
                waited += 0.05
            if self.refuse_schema and "response_format" in self.seen[-1][0]:
                return JSONResponse({"error": {"message": "response_format: unsupported"}}, status_code=400)
            if self.status != 200:
                return JSONResponse({"error": {"message": "overloaded"}}, status_code=self.status)
            reply = self.later[len(self.seen) - 2] if 1 < len(self.seen) <= len(self.later) + 1 else self.reply
            return JSONResponse({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]})

        async def models(request: Request) -> Response:
            self.listed += 1
            if self.models is None:
                return JSONResponse({"error": {"message": "not found"}}, status_code=404)
            return JSONResponse(self.models)

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                                 Route("/v1/models", models, methods=["GET"])])


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
        exchange = request_submission(purple.url, adder, "adder-llm-1", ExchangeSettings(protocol=protocol))
    assert exchange.submission.rationale == "from the model"
    assert exchange.agent == "LogoMesh LLM purple agent (tiny-coder)"
    body, auth = endpoint.seen[-1]
    assert (body["model"], body["temperature"], body["seed"]) == ("tiny-coder", 0, 7)
    assert body["messages"][-1]["content"].startswith("CODING TASK: Add two numbers")
    assert auth == f"Bearer {KEY}"
    assert KEY.encode() not in exchange.response_bytes


@pytest.mark.parametrize(
    ("reply", "status", "reason"),
    [("I cannot help with that.", 200, "model answer holds no code after one repair round: the answer holds no "
                                       "```python code block"),
     (json.dumps({"sourceCode": ""}), 200, "sourceCode is empty or missing"),
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


def test_the_prompt_asks_for_fenced_blocks_and_a_module_that_imports_cleanly(stand_in: tuple[StandIn, str],
                                                                            adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.reply = f"Sure.\n\n```python\n{ANSWER['sourceCode']}```\n\nIt adds."
    settings = LlmSettings(base_url, "m", None, seed=3, max_tokens=700, temperature=0.4, timeout_s=12,
                           response_format="fenced")
    with start_in_thread(llm_app_factory(settings)) as purple:
        exchange = request_submission(purple.url, adder, "adder-llm-4")
    body = endpoint.seen[-1][0]
    assert len(endpoint.seen) == 1 and "response_format" not in body  # fenced: the schema is never offered
    prompt = body["messages"][-1]["content"]
    assert "```python" in prompt and "define `add`" in prompt and "import cleanly" in prompt
    assert "Respond with a single JSON object" not in prompt  # the task's own JSON format is not asked for
    assert (body["max_tokens"], body["temperature"], body["seed"]) == (700, 0.4, 3)
    assert exchange.submission.source == ANSWER["sourceCode"]
    assert b'"logomesh_llm"' in exchange.response_bytes and b'"form":"fenced"' in exchange.response_bytes.replace(
        b" ", b"")


def test_one_repair_message_says_what_was_wrong(stand_in: tuple[StandIn, str], adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.reply = json.dumps({"sourceCode": "solution.py", "testCode": "", "rationale": "see the file"})
    endpoint.later = [f"```python\n{ANSWER['sourceCode']}```"]
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        exchange = request_submission(purple.url, adder, "adder-llm-5")
    assert len(endpoint.seen) == 2
    repair = endpoint.seen[1][0]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == endpoint.reply
    assert "sourceCode holds a file name ('solution.py') instead of a module defining `add`" in repair[3]["content"]
    assert exchange.submission.source == ANSWER["sourceCode"]
    assert b'"repaired": true' in exchange.response_bytes or b'"repaired":true' in exchange.response_bytes
    assert b"see the file" in exchange.response_bytes  # both replies, verbatim, in the artifact's metadata


def test_code_that_stays_unusable_is_sent_for_the_judge_to_reject(stand_in: tuple[StandIn, str],
                                                                   adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.reply = "```python\ndef plus(a, b):\n    return a + b\n```"
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        exchange = request_submission(purple.url, adder, "adder-llm-6")
    assert len(endpoint.seen) == 2  # asked once more, got the same
    assert "def plus" in exchange.submission.source
    assert b"unusable" in exchange.response_bytes


def test_a_prompt_template_replaces_the_prompt(stand_in: tuple[StandIn, str], adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    settings = LlmSettings(base_url, "m", None, prompt_template=check_template("Solve: {task}\nName: {entry_point}"))
    with start_in_thread(llm_app_factory(settings)) as purple:
        request_submission(purple.url, adder, "adder-llm-7")
    prompt = endpoint.seen[-1][0]["messages"][-1]["content"]
    assert prompt.startswith("Solve: CODING TASK: Add two numbers") and prompt.endswith("Name: add")
    with pytest.raises(TemplateError, match=r"no \{task\} placeholder"):
        check_template("no placeholder")


def _report(exchange_bytes: bytes) -> dict[str, Any]:
    """The agent's ``logomesh_llm`` report from the A2A response."""
    found: list[dict[str, Any]] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if "logomesh_llm" in value:
                found.append(value["logomesh_llm"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(exchange_bytes))
    assert len(found) == 1
    return found[0]


def test_auto_asks_for_the_json_schema_where_the_endpoint_follows_it(stand_in: tuple[StandIn, str],
                                                                      adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.reply = json.dumps(ANSWER)  # what a server holding its output to the schema answers
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        first = request_submission(purple.url, adder, "adder-llm-8")
        second = request_submission(purple.url, adder, "adder-llm-9")
    assert len(endpoint.seen) == 2
    for body, _ in endpoint.seen:
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == SUBMISSION_SCHEMA
        prompt = body["messages"][-1]["content"]
        assert "Reply with one JSON object" in prompt and "define `add`" in prompt and "```" not in prompt
    for exchange in (first, second):
        assert exchange.submission.source == ANSWER["sourceCode"]
        report = _report(exchange.response_bytes)
        assert (report["response_format"], report["form"]) == ("json-schema", "json")


def test_auto_falls_back_to_fenced_blocks_where_the_endpoint_refuses_the_schema(stand_in: tuple[StandIn, str],
                                                                                 adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.refuse_schema = True
    endpoint.reply = f"```python\n{ANSWER['sourceCode']}```"
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        first = request_submission(purple.url, adder, "adder-llm-10")
        second = request_submission(purple.url, adder, "adder-llm-11")
    offered = ["response_format" in body for body, _ in endpoint.seen]
    assert offered == [True, False, False]  # refused once, then never offered again
    assert "```python" in endpoint.seen[1][0]["messages"][-1]["content"]
    for exchange in (first, second):
        assert exchange.submission.source == ANSWER["sourceCode"]
        assert _report(exchange.response_bytes)["response_format"] == "fenced"


def test_auto_stops_offering_the_schema_to_an_endpoint_that_ignores_it(stand_in: tuple[StandIn, str],
                                                                        adder: TaskSpec) -> None:
    endpoint, base_url = stand_in  # the stand-in's default reply: a ```json fence, not the bare object
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        first = request_submission(purple.url, adder, "adder-llm-12")
        request_submission(purple.url, adder, "adder-llm-13")
    assert ["response_format" in body for body, _ in endpoint.seen] == [True, False]
    assert first.submission.source == ANSWER["sourceCode"]  # the answer it gave is still read


def test_json_schema_insisted_on_and_refused_fails_the_task_with_the_reason(stand_in: tuple[StandIn, str],
                                                                             adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.refuse_schema = True
    settings = LlmSettings(base_url, "m", None, response_format="json-schema")
    with start_in_thread(llm_app_factory(settings)) as purple, pytest.raises(PurpleTaskFailed) as failed:
        request_submission(purple.url, adder, "adder-llm-14")
    assert "refused the JSON-schema response format (HTTP 400)" in str(failed.value)
    assert len(endpoint.seen) == 1


def test_the_model_server_refuses_a_response_format_it_cannot_hold_to() -> None:
    import threading

    from starlette.testclient import TestClient

    from logomesh.purple.model_server import LoadedModel, app

    unused = LoadedModel(None, None, "SmolLM2-135M-Instruct", 0.0, threading.Lock())  # refused before generating
    with TestClient(app(unused)) as client:
        reply = client.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": SUBMISSION_SCHEMA}}})
    assert reply.status_code == 400 and "free text only" in reply.json()["error"]["message"]

    class Canned(LoadedModel):
        def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
                     seed: int) -> tuple[str, str]:
            return "free text, whatever the schema", "stop"

    ignoring = Canned(None, None, "SmolLM2-135M-Instruct", 0.0, threading.Lock())  # as many servers do
    with TestClient(app(ignoring, ignore_response_format=True)) as client:
        reply = client.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": SUBMISSION_SCHEMA}}})
    assert reply.status_code == 200
    assert reply.json()["choices"][0]["message"]["content"] == "free text, whatever the schema"


@pytest.mark.parametrize(("behaviour", "offered_next"), [("ignored", False), ("refused", False), ("followed", True)])
def test_what_auto_learns_of_an_endpoint_is_kept_for_the_next_run(stand_in: tuple[StandIn, str], adder: TaskSpec,
                                                                   tmp_path: Path, behaviour: str,
                                                                   offered_next: bool) -> None:
    """Issue 34, point 2: an agent started again asks its first question in the form that worked, rather than
    spending a battle finding out again; another model on the same server is still asked afresh."""
    endpoint, base_url = stand_in
    endpoint.refuse_schema = behaviour == "refused"
    endpoint.reply = json.dumps(ANSWER) if behaviour == "followed" else f"```python\n{ANSWER['sourceCode']}```"
    memory = EndpointMemory(tmp_path / "state" / "endpoints.json")
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None), memory)) as purple:
        request_submission(purple.url, adder, "adder-llm-20")
    first_run = ["response_format" in body for body, _ in endpoint.seen]
    assert first_run == ([True, False] if behaviour == "refused" else [True])
    assert json.loads(memory.path.read_text()) == {f"{base_url}/chat/completions m": behaviour}  # type: ignore[union-attr]
    endpoint.seen.clear()
    for model in ("m", "other"):
        with start_in_thread(llm_app_factory(LlmSettings(base_url, model, None), memory)) as purple:
            exchange = request_submission(purple.url, adder, f"adder-llm-21-{model}")
        assert exchange.submission.source == ANSWER["sourceCode"]
    assert "response_format" in endpoint.seen[0][0] if offered_next else "response_format" not in endpoint.seen[0][0]
    assert "response_format" in endpoint.seen[-2 if behaviour == "refused" else -1][0]  # "other": not known yet


@pytest.mark.parametrize("kept", ["not json", "[1, 2]", '{"x": 3}'])
def test_a_memory_that_cannot_be_read_is_empty_and_fails_nothing(stand_in: tuple[StandIn, str], adder: TaskSpec,
                                                                  tmp_path: Path, kept: str) -> None:
    endpoint, base_url = stand_in
    path = tmp_path / "endpoints.json"
    path.write_text(kept)
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None), EndpointMemory(path))) as purple:
        exchange = request_submission(purple.url, adder, "adder-llm-22")
    assert exchange.submission.source == ANSWER["sourceCode"]
    assert "response_format" in endpoint.seen[0][0]  # nothing recalled: the schema is offered
    assert json.loads(path.read_text())[f"{base_url}/chat/completions m"] == "ignored"
    unwritable = EndpointMemory(tmp_path / "a-file" / "endpoints.json")
    (tmp_path / "a-file").write_text("")
    unwritable.remember("x", "followed")  # cannot be written: forgotten, no exception
    assert unwritable.recall("x") is None


@pytest.mark.parametrize(("models", "max_tokens", "expected"), [
    (None, None, DEFAULT_ANSWER_TOKENS),  # no context said: the default
    ({"data": [{"id": "m", "context_length": 100_000}]}, None, DEFAULT_ANSWER_TOKENS),  # room to spare
    ({"data": [{"id": "other", "max_model_len": 64}, {"id": "m", "max_model_len": 1200}]}, None, "fits"),
    ({"data": [{"id": "m", "meta": {"n_ctx_train": 1200}}]}, None, "fits"),  # llama.cpp's shape
    ({"data": [{"id": "m", "context_length": 300}]}, None, MIN_ANSWER_TOKENS),  # never below the floor
    ({"data": [{"id": "m", "context_length": 1200}]}, 77, 77),  # --max-tokens wins, /models is not asked
    ({"data": "junk"}, None, DEFAULT_ANSWER_TOKENS),
])
def test_the_answer_gets_tokens_that_fit_the_prompt_and_the_models_context(
        stand_in: tuple[StandIn, str], adder: TaskSpec, models: Any, max_tokens: int | None, expected: Any) -> None:
    """Issue 34, point 2: without --max-tokens the agent asks for DEFAULT_ANSWER_TOKENS, or what the model's
    context (read once from GET /models) leaves after the prompt."""
    endpoint, base_url = stand_in
    endpoint.models = models
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None, max_tokens=max_tokens))) as purple:
        request_submission(purple.url, adder, "adder-llm-30")
        request_submission(purple.url, adder, "adder-llm-31")
    asked = [body["max_tokens"] for body, _ in endpoint.seen]
    assert endpoint.listed == (0 if max_tokens else 1)  # once per agent
    if expected == "fits":
        prompt = sum(len(m["content"]) for m in endpoint.seen[0][0]["messages"])
        assert MIN_ANSWER_TOKENS < asked[0] < 1200 - prompt // 4 and asked[0] + prompt // 3 <= 1200
    else:
        assert asked[0] == expected


def test_the_model_server_says_its_context_length() -> None:
    from types import SimpleNamespace

    from logomesh.purple.model_server import LoadedModel

    config = SimpleNamespace(max_position_embeddings=8192)
    assert LoadedModel(None, SimpleNamespace(config=config), "m", 0.0, threading.Lock()).context_length == 8192
    assert LoadedModel(None, object(), "m", 0.0, threading.Lock()).context_length is None


def test_the_agent_fits_its_model_call_inside_the_battles_deadline(stand_in: tuple[StandIn, str],
                                                                    adder: TaskSpec) -> None:
    """Issue 34, point 3: the battle sends how long it waits (``timeout_s`` in the request's metadata); the
    agent's own --timeout is 300 s, its slow model takes 30, and the battle waits 6: the agent gives up on the
    model in time to say so, and the battle records the agent's reason instead of a timeout of its own."""
    endpoint, base_url = stand_in
    endpoint.delay_s = 30.0
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None, timeout_s=300.0))) as purple:
        started = time.monotonic()
        with pytest.raises(PurpleTaskFailed) as failed:
            request_submission(purple.url, adder, "adder-llm-40", ExchangeSettings(total_timeout_s=6.0))
        took = time.monotonic() - started
    assert "did not answer within" in str(failed.value) and "the battle's deadline" in str(failed.value)
    assert took < 6.0
    assert endpoint.seen[0][0]["max_tokens"] > 0
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None, timeout_s=300.0))) as purple, \
            pytest.raises(PurpleTimeout):  # the control: told nothing, the agent waits for its model past the battle
        _send_without_deadline(purple.url, adder)


def _send_without_deadline(url: str, adder: TaskSpec) -> None:
    """The exchange as a client that sends no ``timeout_s`` makes it (an older battle)."""
    from unittest import mock

    import logomesh.purple.client as client

    original = client.task_call
    with mock.patch.object(client, "task_call", lambda *a, **k: original(*a, **{**k, "timeout_s": None})):
        request_submission(url, adder, "adder-llm-41", ExchangeSettings(total_timeout_s=2.5))


def test_no_repair_round_is_asked_when_the_deadline_leaves_no_room(stand_in: tuple[StandIn, str],
                                                                    adder: TaskSpec) -> None:
    endpoint, base_url = stand_in
    endpoint.reply = json.dumps({"sourceCode": "def other():\n    return 1\n", "testCode": "", "rationale": "r"})
    endpoint.later = [f"```python\n{ANSWER['sourceCode']}```"]
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        roomy = request_submission(purple.url, adder, "adder-llm-43", ExchangeSettings(total_timeout_s=60.0))
        tight = request_submission(purple.url, adder, "adder-llm-42", ExchangeSettings(total_timeout_s=6.0))
    assert len(endpoint.seen) == 3  # the roomy battle: a call and a repair; the tight one: one call, no repair
    assert b'"repaired": false' in tight.response_bytes or b'"repaired":false' in tight.response_bytes
    assert roomy.submission.source == ANSWER["sourceCode"]


def test_a_cancelled_battle_stops_the_model_call(stand_in: tuple[StandIn, str], adder: TaskSpec) -> None:
    """Issue 34, point 3: the battle hangs up (Ctrl-C, a cancel in the console) while the model thinks; the agent
    sees its caller gone and closes the model's connection, rather than letting it run its 30 s for no one."""
    endpoint, base_url = stand_in
    endpoint.delay_s = 30.0
    token = CancelToken()
    with start_in_thread(llm_app_factory(LlmSettings(base_url, "m", None))) as purple:
        threading.Timer(1.0, token.cancel).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            request_submission(purple.url, adder, "adder-llm-50", cancel=token)
        deadline = time.monotonic() + 10.0
        while endpoint.abandoned == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        stopped_after = time.monotonic() - started
    assert endpoint.abandoned == 1 and stopped_after < 10.0


@pytest.mark.parametrize(("behaviour", "first_task_offered"),
                         [("ignored", False), ("refused", False), ("followed", True), ("down", True)])
def test_the_agent_learns_its_endpoint_before_the_first_battle(stand_in: tuple[StandIn, str], adder: TaskSpec,
                                                               tmp_path: Path, behaviour: str,
                                                               first_task_offered: bool) -> None:
    """Issue 34, point 2: ``purple serve --llm`` asks one short question under the JSON schema before it serves, so
    even the first battle against an endpoint that ignores (or refuses) the schema is asked with fenced blocks; an
    endpoint that does not answer leaves it to the first battle, as before."""
    endpoint, base_url = stand_in
    endpoint.refuse_schema = behaviour == "refused"
    endpoint.status = 503 if behaviour == "down" else 200
    endpoint.reply = json.dumps(ANSWER) if behaviour == "followed" else f"```python\n{ANSWER['sourceCode']}```"
    memory = EndpointMemory(tmp_path / "endpoints.json")
    factory = llm_app_factory(LlmSettings(base_url, "m", None), memory, learn_first=True)
    probe = endpoint.seen[0][0]
    assert len(endpoint.seen) == 1 and "response_format" in probe and probe["max_tokens"] == PROBE_TOKENS
    assert memory.recall(f"{base_url}/chat/completions m") == (None if behaviour == "down" else behaviour)
    endpoint.status = 200
    with start_in_thread(factory) as purple:
        exchange = request_submission(purple.url, adder, "adder-llm-60")
    assert exchange.submission.source == ANSWER["sourceCode"]
    assert ("response_format" in endpoint.seen[1][0]) is first_task_offered
