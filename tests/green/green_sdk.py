"""Driving our servers with the a2a-sdk client, under a chosen protocol version."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse
from google.protobuf.struct_pb2 import Struct  # type: ignore[import-untyped]


async def _send(url: str, protocol: str, parts: list[Part], metadata: dict[str, Any], streaming: bool,
                timeout_s: float) -> list[StreamResponse]:
    headers = {"A2A-Version": "1.0"} if protocol == "1.0" else {}
    async with httpx.AsyncClient(timeout=timeout_s, headers=headers) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        keep = [i for i in card.supported_interfaces if i.protocol_version == protocol]
        assert keep, f"the card offers no {protocol} interface"
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        meta = Struct()
        meta.update(metadata)
        message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=parts, metadata=meta)
        return [event async for event in client.send_message(SendMessageRequest(message=message))]


def sdk_send(url: str, protocol: str, parts: list[Part], metadata: dict[str, Any] | None = None, *,
             streaming: bool = True, timeout_s: float = 60.0) -> list[StreamResponse]:
    """Every stream response the a2a-sdk client yields for one message."""
    return asyncio.run(_send(url, protocol, parts, metadata or {}, streaming, timeout_s))
