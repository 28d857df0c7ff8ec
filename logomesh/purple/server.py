"""Shared A2A server plumbing (a2a-sdk + Starlette + uvicorn) for the mock, LLM and green agents.

Every server speaks protocol 1.0 and 0.3 on the same JSON-RPC endpoint, serves
its card at both well-known paths, and binds its socket before the card is
built so that port 0 (any free port) still yields a correct card URL.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from starlette.applications import Starlette
from starlette.requests import Request

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
RPC_PATH = "/"

Screen = Callable[[Message], None]
"""Checks an incoming message before any task exists; raises an a2a ``A2AError`` to refuse it."""


def agent_card(name: str, description: str, url: str, skills: Sequence[AgentSkill], *, version: str) -> AgentCard:
    """A card offering JSON-RPC at ``url`` under protocol 1.0 and 0.3, with streaming."""
    return AgentCard(
        name=name,
        description=description,
        version=version,
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        capabilities=AgentCapabilities(streaming=True),
        skills=list(skills),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
    )


def metadata_of(message: Message) -> dict[str, Any]:
    """A message's metadata as plain JSON values."""
    if not message.HasField("metadata"):
        return {}
    converted: dict[str, Any] = MessageToDict(message.metadata)
    return converted


@dataclass(frozen=True)
class ReadPart:
    """A text part of a received message: its text and the file it carries (``None``: the message's own text)."""

    text: str
    filename: str | None = None


def read_parts(message: Message) -> list[ReadPart]:
    """The text parts of ``message``, in order, each with its file name: 1.0's ``filename`` field, or 0.3's
    ``filename`` in the part's metadata."""
    out: list[ReadPart] = []
    for part in message.parts:
        if not part.HasField("text"):
            continue
        filename = part.filename or None
        if filename is None and part.HasField("metadata"):
            named = part.metadata.fields.get("filename")
            filename = named.string_value if named is not None and named.string_value else None
        out.append(ReadPart(part.text, filename))
    return out


MAX_CONVERSATIONS = 256  # contexts an agent remembers (a later message sees the earlier ones)


class Conversations:
    """The messages each A2A context has sent so far, for agents that read a conversation as a whole; the
    oldest contexts are forgotten past ``MAX_CONVERSATIONS``."""

    def __init__(self) -> None:
        self.contexts: OrderedDict[str, list[Message]] = OrderedDict()

    def add(self, context_id: str, message: Message) -> list[Message]:
        """The context's messages so far, ``message`` last."""
        history = self.contexts.setdefault(context_id, [])
        history.append(message)
        self.contexts.move_to_end(context_id)
        while len(self.contexts) > MAX_CONVERSATIONS:
            self.contexts.popitem(last=False)
        return list(history)


async def open_task(context: RequestContext, queue: EventQueue) -> TaskUpdater:
    """Publish the task this request works on (new, or the one it continues) and an updater for it."""
    task = context.current_task
    if task is None:
        history = [context.message] if context.message is not None else []
        task = Task(id=context.task_id or "", context_id=context.context_id or "",
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=history)
        await queue.enqueue_event(task)
    return TaskUpdater(queue, task.id, task.context_id)


class ScreenedRequestHandler(DefaultRequestHandler):
    """The SDK's handler with a check run on each new message before a task is created.

    A refusal then reaches the caller as a JSON-RPC error instead of a task
    that failed inside the executor.
    """

    def __init__(self, executor: AgentExecutor, card: AgentCard, screen: Screen | None) -> None:
        super().__init__(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
        self._screen = screen

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        if self._screen is not None:
            self._screen(params.message)
        result: Task | Message = await super().on_message_send(params, context)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        if self._screen is not None:
            self._screen(params.message)
        async for event in super().on_message_send_stream(params, context):
            yield event


REQUEST_KEY = "logomesh_request"  # the Starlette request, in the call context's state (``caller_gone``)
HANG_UP_POLL_S = 0.25


class _KeepsRequest(DefaultServerCallContextBuilder):
    """The SDK's call context, with the HTTP request kept so an executor can see the caller hang up."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[REQUEST_KEY] = request
        return context


async def caller_gone(context: RequestContext) -> None:
    """Returns once the client that sent this request has closed its connection (a battle cancelled or given
    up); never where the request is not known, or where the client asked to be answered at once and to poll
    for the result (its connection closes by design)."""
    request = context.call_context.state.get(REQUEST_KEY) if context.call_context is not None else None
    polls = context.configuration is not None and context.configuration.return_immediately
    if not isinstance(request, Request) or polls:
        await asyncio.Event().wait()
        return
    while not await request.is_disconnected():
        await asyncio.sleep(HANG_UP_POLL_S)


def build_app(card: AgentCard, executor: AgentExecutor, screen: Screen | None = None) -> Starlette:
    """The ASGI app: the card at both well-known paths, JSON-RPC (1.0 and 0.3) at ``/``."""
    handler = ScreenedRequestHandler(executor, card, screen)
    routes = [route for path in CARD_PATHS for route in create_agent_card_routes(card, card_url=path)]
    routes += create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=True, context_builder=_KeepsRequest())
    return Starlette(routes=routes)


AppFactory = Callable[[str], Starlette]
"""Builds the app once the advertised URL is known."""


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket; port 0 picks a free port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def advertised_url(sock: socket.socket, host: str) -> str:
    """``http://HOST:PORT/`` for the bound socket; a wildcard host advertises 127.0.0.1."""
    port = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    return f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"


def _quiet_sdk_logs() -> None:
    # The SDK logs a refused request at WARNING with a traceback; the caller already gets the reason.
    logging.getLogger("a2a").setLevel(logging.ERROR)


def _server(app: Starlette) -> uvicorn.Server:
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2)
    return uvicorn.Server(config)


@dataclass
class RunningServer:
    """A server running on a background thread; ``close()`` stops it."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def start_in_thread(make_app: AppFactory, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Start a server on a daemon thread and return once it accepts connections."""
    _quiet_sdk_logs()
    sock = bind(host, port)
    url = advertised_url(sock, host)
    server = _server(make_app(url))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"a2a:{url}")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"A2A server at {url} did not start")
        time.sleep(0.01)
    return RunningServer(url, server, thread, sock)


def serve_forever(make_app: AppFactory, host: str, port: int, card_url: str | None, what: str) -> None:
    """Serve in the foreground until interrupted; says where on stderr."""
    _quiet_sdk_logs()
    sock = bind(host, port)
    url = card_url or advertised_url(sock, host)
    app = make_app(url)
    print(f"logomesh: serving {what} at {url} (card: {url.rstrip('/')}{CARD_PATHS[0]}); Ctrl-C stops",
          file=sys.stderr)
    try:
        _server(app).run(sockets=[sock])
    finally:
        sock.close()
