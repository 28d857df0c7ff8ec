"""Ask a purple agent for a submission over A2A (protocol 0.3 or 1.0), with hard limits.

Reads the agent card to pick the protocol version, sends the coding task as
one JSON-RPC call, follows a task answered before it finished with
``tasks/get`` polls, and turns every failure into a ``PurpleError`` subclass
whose ``str()`` is a one-line reason. The exact request and response bytes
travel with the submission for the ledger.

The exchange runs on an event loop of its own, so a cancel token can abandon it
at any point: the waiting coroutine is cancelled, which closes its connection,
and ``Cancelled`` is raised at once instead of waiting out the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from logomesh.cancel import Cancelled, CancelToken
from logomesh.purple import DEFAULT_PURPLE_TIMEOUT_S
from logomesh.purple.a2a_errors import (
    PurpleHTTPError,
    PurpleMalformed,
    PurpleRPCError,
    PurpleTaskFailed,
    PurpleTimeout,
    PurpleTooLarge,
    PurpleUnreachable,
    PurpleUsageError,
    one_line,
)
from logomesh.purple.a2a_parse import Reply, extract_submission, parse_reply
from logomesh.purple.a2a_request import Protocol, RpcCall, check_protocol, get_task_call, task_call
from logomesh.purple.exchange import PurpleError, PurpleExchange
from logomesh.submission import MAX_SUBMISSION_BYTES
from logomesh.tasks import TaskSpec

__all__ = [
    "ExchangeSettings",
    "PurpleError",
    "PurpleHTTPError",
    "PurpleMalformed",
    "PurpleRPCError",
    "PurpleTaskFailed",
    "PurpleTimeout",
    "PurpleTooLarge",
    "PurpleUnreachable",
    "PurpleUsageError",
    "request_submission",
]

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
_POLL_START_S = 0.2
_POLL_MAX_S = 2.0
T = TypeVar("T")


class Deadline:
    """The total time budget of one exchange, shared by every HTTP call in it."""

    def __init__(self, total_s: float, connect_s: float) -> None:
        self.total_s = total_s
        self.connect_s = connect_s
        self._end = time.monotonic() + total_s

    def remaining(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise PurpleTimeout(f"no complete answer within {self.total_s:g} s")
        return left

    def timeout(self) -> httpx.Timeout:
        left = self.remaining()
        return httpx.Timeout(left, connect=min(self.connect_s, left))


@dataclass(frozen=True)
class Fetched:
    status: int
    reason: str
    content_type: str
    body: bytes


@dataclass(frozen=True)
class Endpoint:
    """Where and how to talk to the agent, as its card (or its absence) says."""

    url: str
    protocol: Protocol
    name: str


def _stream_finished(body: bytes) -> bool:
    """Whether the complete SSE events in ``body`` already end the exchange (a final state or an error)."""
    complete = body[: body.rfind(b"\n\n") + 2]
    try:
        return not parse_reply(complete, sse=True).pending
    except PurpleError:
        return True


async def _fetch(http: httpx.AsyncClient, method: str, url: str, deadline: Deadline, max_bytes: int,
                 call: RpcCall | None = None) -> Fetched:
    """One HTTP exchange, read in chunks under the size cap and the deadline.

    An event stream is cut as soon as it has said its last word, so an agent
    that keeps the stream open after the final event costs no time.
    """
    try:
        async with http.stream(method, url, content=call.body if call else None, headers=call.headers if call else None,
                         timeout=deadline.timeout()) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise PurpleTooLarge(f"response of {int(declared)} bytes exceeds the {max_bytes}-byte cap")
            content_type = response.headers.get("content-type", "")
            sse = response.status_code < 400 and _is_sse_type(content_type)
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise PurpleTooLarge(f"response exceeds the {max_bytes}-byte cap")
                chunks.append(chunk)
                deadline.remaining()
                if sse and b"\n\n" in chunk and _stream_finished(b"".join(chunks)):
                    break
            return Fetched(response.status_code, response.reason_phrase, content_type, b"".join(chunks))
    except httpx.ConnectTimeout:
        raise PurpleTimeout(f"no connection to {url} within {deadline.connect_s:g} s") from None
    except httpx.TimeoutException:
        raise PurpleTimeout(f"no complete answer within {deadline.total_s:g} s") from None
    except httpx.ConnectError as exc:
        raise PurpleUnreachable(f"cannot connect to {url}: {one_line(str(exc)) or 'connection refused'}") from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
        raise PurpleUnreachable(f"{url} closed the connection before the answer was complete") from None
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise PurpleUsageError(f"invalid purple agent URL {url!r}: {one_line(str(exc))}") from None
    except httpx.HTTPError as exc:
        raise PurpleUnreachable(f"HTTP failure talking to {url}: {one_line(str(exc))}") from None


async def _read_card(http: httpx.AsyncClient, base_url: str, deadline: Deadline,
                     max_bytes: int) -> dict[str, Any] | None:
    """The agent card, or ``None`` when the agent publishes none (or an unreadable one).

    Like the a2a-sdk resolver, the well-known path goes under the URL given,
    so an agent served below a path prefix is found too.
    """
    for path in CARD_PATHS:
        fetched = await _fetch(http, "GET", base_url.rstrip("/") + path, deadline, max_bytes)
        if fetched.status != 200:
            continue
        try:
            card = json.loads(fetched.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue
        if isinstance(card, dict):
            return card
    return None


def _major(version: Any) -> str:
    return str(version).strip().split(".")[0] if version is not None else ""


def _card_interface(card: dict[str, Any]) -> tuple[Protocol, str | None]:
    """The protocol the card offers (1.0 preferred) and the URL it names for it."""
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list):
        jsonrpc = [i for i in interfaces if isinstance(i, dict)
                   and str(i.get("protocolBinding", i.get("transport", "JSONRPC"))).upper() == "JSONRPC"]
        for interface in jsonrpc:
            if _major(interface.get("protocolVersion")) == "1":
                url = interface.get("url")
                return "1.0", url if isinstance(url, str) else None
    url = card.get("url")
    protocol: Protocol = "1.0" if _major(card.get("protocolVersion")) == "1" else "0.3"
    return protocol, url if isinstance(url, str) else None


def _same_origin(a: str, b: str) -> bool:
    left, right = urlsplit(a), urlsplit(b)
    return (left.scheme, left.hostname, left.port) == (right.scheme, right.hostname, right.port)


async def discover(http: httpx.AsyncClient, base_url: str, deadline: Deadline, max_bytes: int,
                   protocol: str | None) -> Endpoint:
    """Read the card and settle the endpoint and protocol; ``protocol`` overrides the card.

    An agent with no card speaks 0.3 at ``base_url``. A card URL on another
    origin (an agent advertising its in-container address) is ignored in
    favour of the URL the user gave.
    """
    forced = check_protocol(protocol) if protocol is not None else None
    card = await _read_card(http, base_url, deadline, max_bytes)
    if card is None:
        return Endpoint(base_url, forced or "0.3", base_url)
    offered, card_url = _card_interface(card)
    url = card_url if card_url and _same_origin(card_url, base_url) else base_url
    name = card.get("name")
    return Endpoint(url, forced or offered, one_line(name, 80) if isinstance(name, str) and name.strip() else base_url)


async def _rpc(http: httpx.AsyncClient, endpoint: Endpoint, call: RpcCall, deadline: Deadline,
               max_bytes: int) -> Fetched:
    fetched = await _fetch(http, "POST", endpoint.url, deadline, max_bytes, call)
    if fetched.status >= 400:
        raise PurpleHTTPError(f"HTTP {fetched.status} {one_line(fetched.reason, 60)} from {endpoint.url}".rstrip())
    return fetched


def _is_sse_type(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


def _is_sse(fetched: Fetched) -> bool:
    return _is_sse_type(fetched.content_type)


async def _poll(http: httpx.AsyncClient, endpoint: Endpoint, reply: Reply, battle_id: str, deadline: Deadline,
          max_bytes: int) -> tuple[Reply, bytes]:
    """Follow a task answered before it finished until it does or the deadline passes."""
    if reply.task_id is None:
        raise PurpleMalformed(f"the agent's task is {reply.state} but carries no id to follow")
    call = get_task_call(endpoint.protocol, reply.task_id, battle_id)
    wait = _POLL_START_S
    while True:
        await asyncio.sleep(min(wait, deadline.remaining()))
        fetched = await _rpc(http, endpoint, call, deadline, max_bytes)
        reply = parse_reply(fetched.body, sse=_is_sse(fetched))
        if not reply.pending:
            return reply, fetched.body
        wait = min(wait * 2, _POLL_MAX_S)


@dataclass(frozen=True)
class ExchangeSettings:
    """How ``request_submission`` talks to the agent: the protocol, the limits, send or stream."""

    protocol: str | None = None
    """``"0.3"`` or ``"1.0"`` overrides the agent card; ``None``: as the card says."""
    connect_timeout_s: float = 5.0
    total_timeout_s: float = DEFAULT_PURPLE_TIMEOUT_S
    """The whole exchange: card, call and every ``tasks/get`` poll."""
    max_bytes: int = MAX_SUBMISSION_BYTES
    """The cap on each response."""
    stream: bool = False
    """Ask with ``message/stream`` instead of ``message/send`` (SSE answers to either are read the same way)."""


def request_submission(url: str, task: TaskSpec, battle_id: str, settings: ExchangeSettings = ExchangeSettings(),
                       cancel: CancelToken = CancelToken.never()) -> PurpleExchange:
    """Send ``task`` to the purple agent at ``url`` as ``settings`` say and return its validated submission.

    Raises ``PurpleError`` subclasses only, or ``Cancelled`` once ``cancel`` is cancelled. Call it where no
    event loop runs.
    """

    def calls(protocol: Protocol) -> list[RpcCall]:
        return [task_call(protocol, task, battle_id, stream=settings.stream, timeout_s=settings.total_timeout_s)]

    return request_with_calls(url, calls, battle_id, settings, cancel)


CallsFor = Callable[[Protocol], Sequence[RpcCall]]
"""The calls of one exchange, built once the agent's protocol is known; sent in order in one context."""


def request_with_calls(url: str, calls: CallsFor, battle_id: str, settings: ExchangeSettings = ExchangeSettings(),
                       cancel: CancelToken = CancelToken.never()) -> PurpleExchange:
    """Send ``calls(protocol)`` in order (each answered in full before the next) and return the submission the
    last one's answer holds; the request bytes are every call's body, one a line. Raises as ``request_submission``."""
    deadline = Deadline(settings.total_timeout_s, settings.connect_timeout_s)
    exchange = _exchange(url, calls, battle_id, settings, deadline)
    return asyncio.run(stopped_by_cancel(exchange, cancel))


async def _exchange(url: str, calls_for: CallsFor, battle_id: str, settings: ExchangeSettings,
                    deadline: Deadline) -> PurpleExchange:
    max_bytes = settings.max_bytes
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as http:
        endpoint = await discover(http, url, deadline, max_bytes, settings.protocol)
        calls = list(calls_for(endpoint.protocol))
        for call in calls:
            fetched = await _rpc(http, endpoint, call, deadline, max_bytes)
            reply = parse_reply(fetched.body, sse=_is_sse(fetched))
            body = fetched.body
            if reply.pending:
                reply, body = await _poll(http, endpoint, reply, battle_id, deadline, max_bytes)
        submission = extract_submission(reply, body)
    return PurpleExchange(submission=submission, request_bytes=b"\n".join(call.body for call in calls),
                          response_bytes=body, agent=endpoint.name, protocol=f"a2a-{endpoint.protocol}")


async def stopped_by_cancel(work: Coroutine[Any, Any, T], cancel: CancelToken) -> T:
    """Await ``work`` unless ``cancel`` fires first: then ``work`` is cancelled and ``Cancelled`` raised."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)

    def stop() -> None:  # on the cancel's thread
        with contextlib.suppress(RuntimeError):  # the loop is closed: the work is over anyway
            loop.call_soon_threadsafe(task.cancel)

    with cancel.hook(stop):
        try:
            return await task
        except asyncio.CancelledError:
            if cancel.cancelled:
                raise Cancelled(cancel.reason) from None
            raise
