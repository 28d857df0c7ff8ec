"""Before a battle: does the purple agent answer, and does its card offer the protocol asked for?

One GET of the agent card (the same paths and limits as the battle's own discovery). An agent that
publishes no card still answers (it speaks 0.3 at its URL): it is asked one harmless JSON-RPC call
(``tasks/get`` of a task that does not exist), which any A2A server answers in JSON-RPC, even with an
error. An agent that does not answer at all, a server that answers that call with something else (a plain
web server: 404, 501, an HTML page), or a card that does not offer the protocol forced with ``--protocol``,
is a battle that cannot start. A call that times out or is cut tells nothing and is let through: the battle
records what the agent then does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from logomesh.purple.a2a_errors import PurpleTimeout, PurpleUnreachable, one_line
from logomesh.purple.a2a_request import get_task_call
from logomesh.purple.client import CARD_PATHS, Deadline, Fetched, _fetch, _major, _read_card
from logomesh.purple.exchange import PurpleError

CARD_MAX_BYTES = 256 * 1024


def offered_protocols(card: dict[str, Any]) -> tuple[str, ...]:
    """The A2A protocol versions a card offers over JSON-RPC ("1.0", "0.3"); empty when it names none."""
    found: list[str] = []
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list):
        for interface in interfaces:
            if not isinstance(interface, dict):
                continue
            binding = str(interface.get("protocolBinding", interface.get("transport", "JSONRPC"))).upper()
            version = interface.get("protocolVersion")
            if binding == "JSONRPC" and version is not None:
                found.append("1.0" if _major(version) == "1" else "0.3")
    if card.get("protocolVersion") is not None:
        found.append("1.0" if _major(card.get("protocolVersion")) == "1" else "0.3")
    return tuple(sorted(set(found), reverse=True))


PROBE_ID = "logomesh-preflight"


async def _card(url: str, deadline: Deadline) -> dict[str, Any] | None:
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as http:
        return await _read_card(http, url, deadline, CARD_MAX_BYTES)


async def _rpc_probe(url: str, deadline: Deadline) -> Fetched | None:
    """The answer to one ``tasks/get`` of a task that does not exist; ``None`` when none came in time."""
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as http:
        try:
            return await _fetch(http, "POST", url, deadline, CARD_MAX_BYTES, get_task_call("0.3", PROBE_ID, PROBE_ID))
        except (PurpleTimeout, PurpleUnreachable):
            return None


def _is_json_rpc(body: bytes) -> bool:
    try:
        reply = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(reply, dict) and reply.get("jsonrpc") == "2.0"


def not_an_agent(url: str, timeout_s: float) -> str | None:
    """Why the server at ``url``, which publishes no agent card, is not an A2A agent; ``None`` if it may be."""
    try:
        fetched = asyncio.run(_rpc_probe(url, Deadline(min(timeout_s, 5.0), min(timeout_s, 5.0))))
    except PurpleError as exc:  # too large an answer, say: not one an A2A server gives
        answer = str(exc)
    else:
        if fetched is None or _is_json_rpc(fetched.body):
            return None
        page = ", an HTML page" if "html" in fetched.content_type.lower() else ""
        answer = f"HTTP {fetched.status} {one_line(fetched.reason, 60)}{page}"
    return (f"{url} is not an A2A agent: it publishes no agent card at {CARD_PATHS[0]} and answers a JSON-RPC "
            f"call with {answer}: give the URL of a purple agent (for instance one started with "
            "'logomesh purple serve --mock')")


def agent_problem(url: str, protocol: str | None, timeout_s: float = 10.0) -> str | None:
    """Why the purple agent at ``url`` cannot take a battle (one line), or ``None`` when it can."""
    try:
        card = asyncio.run(_card(url, Deadline(timeout_s, min(5.0, timeout_s))))
    except PurpleError as exc:
        return f"the purple agent at {url} does not answer: {exc} (check the URL and that the agent is running)"
    if card is None:
        return not_an_agent(url, timeout_s)
    if protocol is None:
        return None
    offered = offered_protocols(card)
    if offered and protocol not in offered:
        return (f"the purple agent at {url} offers A2A protocol {' and '.join(offered)} on its card, not "
                f"{protocol}: pass --protocol {offered[0]}, or leave --protocol out to take the card's")
    return None
