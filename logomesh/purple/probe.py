"""Before a battle: does the purple agent answer, and does its card offer the protocol asked for?

One GET of the agent card (the same paths and limits as the battle's own discovery). An agent that
publishes no card still answers (it speaks 0.3 at its URL); an agent that does not answer at all, or whose
card does not offer the protocol forced with ``--protocol``, is a battle that cannot start.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from logomesh.purple.client import Deadline, _major, _read_card
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


async def _card(url: str, deadline: Deadline) -> dict[str, Any] | None:
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as http:
        return await _read_card(http, url, deadline, CARD_MAX_BYTES)


def agent_problem(url: str, protocol: str | None, timeout_s: float = 10.0) -> str | None:
    """Why the purple agent at ``url`` cannot take a battle (one line), or ``None`` when it can."""
    try:
        card = asyncio.run(_card(url, Deadline(timeout_s, min(5.0, timeout_s))))
    except PurpleError as exc:
        return f"the purple agent at {url} does not answer: {exc} (check the URL and that the agent is running)"
    if card is None or protocol is None:
        return None
    offered = offered_protocols(card)
    if offered and protocol not in offered:
        return (f"the purple agent at {url} offers A2A protocol {' and '.join(offered)} on its card, not "
                f"{protocol}: pass --protocol {offered[0]}, or leave --protocol out to take the card's")
    return None
