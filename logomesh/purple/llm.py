"""A purple agent backed by any OpenAI-compatible chat-completions endpoint.

Temperature 0 and a fixed seed make it as repeatable as the endpoint allows.
The model's answer is checked and re-encoded as a clean submission JSON; an
answer that is not one, or a failing endpoint, ends the A2A task ``failed``
with the reason. The API key comes from ``OPENAI_API_KEY`` and is sent only
in the Authorization header, never logged or echoed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import AgentSkill
from starlette.applications import Starlette

from logomesh import __version__
from logomesh.purple.a2a_errors import one_line
from logomesh.purple.a2a_parse import texts_to_try
from logomesh.purple.server import AppFactory, agent_card, build_app, open_task
from logomesh.submission import Submission, SubmissionError

SYSTEM_PROMPT = (
    "You are a careful senior Python engineer. You answer a coding task with one JSON object "
    'holding exactly the keys "sourceCode" (the complete Python module), "testCode" (a unittest or pytest module '
    'that imports from solution) and "rationale" (why the code meets the contract). No prose outside the JSON.'
)


class ChatError(Exception):
    """The endpoint failed or answered something that is not a submission; one-line reason."""


@dataclass(frozen=True)
class LlmSettings:
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    seed: int = 0
    timeout_s: float = 300.0
    max_tokens: int | None = None

    @property
    def completions_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def request_body(self, prompt: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "temperature": 0,
            "seed": self.seed,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body


def _content(reply: Any) -> str:
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ChatError("endpoint reply has no choices[0].message.content") from None
    if not isinstance(content, str) or not content.strip():
        raise ChatError("endpoint reply content is empty")
    return content


async def chat(settings: LlmSettings, prompt: str) -> str:
    """One chat completion; the assistant's text."""
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    try:
        async with httpx.AsyncClient(timeout=settings.timeout_s, trust_env=False) as http:
            response = await http.post(settings.completions_url, json=settings.request_body(prompt), headers=headers)
    except httpx.TimeoutException:
        raise ChatError(f"{settings.completions_url} did not answer within {settings.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise ChatError(f"cannot reach {settings.completions_url}: {one_line(str(exc))}") from None
    if response.status_code >= 400:
        raise ChatError(f"{settings.completions_url} answered HTTP {response.status_code}")
    try:
        return _content(response.json())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ChatError("endpoint reply is not JSON") from None


def as_submission_json(content: str) -> str:
    """The model's answer as clean submission JSON; ``ChatError`` if it holds none."""
    first: SubmissionError | None = None
    for attempt in texts_to_try(content):
        try:
            return json.dumps(Submission.from_text(attempt).to_json(), indent=2, ensure_ascii=False)
        except SubmissionError as exc:
            first = first or exc
    raise ChatError(f"model answer is not a submission: {one_line(str(first))}")


class LlmExecutor(AgentExecutor):
    """Forwards the task text to the model and returns its submission as the task's artifact."""

    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        prompt = context.get_user_input()
        if not prompt.strip():
            await updater.reject(updater.new_agent_message([new_text_part("the message carries no task text")]))
            return
        await updater.start_work()
        try:
            answer = as_submission_json(await chat(self.settings, prompt))
        except ChatError as exc:
            await updater.failed(updater.new_agent_message([new_text_part(str(exc))]))
            return
        await updater.add_artifact([new_text_part(answer, media_type="application/json")], name="submission")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await open_task(context, event_queue)
        await updater.cancel()


LLM_SKILL = AgentSkill(
    id="logomesh-llm-submission",
    name="Code submission from a language model",
    description="Writes a Python module, its unittest tests and a rationale for a coding task.",
    tags=["logomesh", "llm", "code"],
)


def llm_app_factory(settings: LlmSettings) -> AppFactory:
    executor = LlmExecutor(settings)

    def make(url: str) -> Starlette:
        card = agent_card(f"LogoMesh LLM purple agent ({settings.model})", "Code submissions written by an LLM.",
                          url, [LLM_SKILL], version=__version__)
        return build_app(card, executor)

    return make
