"""The JSON-RPC request LogoMesh sends a purple agent, for A2A protocol 0.3 and 1.0.

The body is a deterministic function of the task and the battle_id (ids are
UUIDv5 of the battle_id), so a replayed battle sends the same bytes.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from logomesh.purple.a2a_errors import PurpleUsageError
from logomesh.sandbox.image import PYTHON_VERSION
from logomesh.tasks import TaskSpec

Protocol = Literal["0.3", "1.0"]
PROTOCOLS: tuple[Protocol, ...] = ("0.3", "1.0")
VERSION_HEADER = "A2A-Version"
_NAMESPACE = uuid.UUID("6d1f3b0e-4c1a-5b7e-9a63-2f0c8e5d4a10")

METHODS: dict[Protocol, dict[str, str]] = {
    "0.3": {"send": "message/send", "stream": "message/stream", "get": "tasks/get"},
    "1.0": {"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask"},
}
ACCEPTED_OUTPUT_MODES = ["text/plain", "application/json", "text"]


def check_protocol(protocol: str) -> Protocol:
    """``protocol`` as a known version; ``PurpleUsageError`` naming the known ones otherwise."""
    for known in PROTOCOLS:
        if protocol == known:
            return known
    raise PurpleUsageError(f"unknown A2A protocol {protocol!r} (use one of: {', '.join(PROTOCOLS)})")


DEADLINE_KEY = "timeout_s"


def context_id(battle_id: str) -> str:
    """One A2A ``contextId`` per battle, stable across replays."""
    return str(uuid.uuid5(_NAMESPACE, f"context:{battle_id}"))


def message_id(battle_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"message:{battle_id}"))


def task_prompt(task: TaskSpec) -> str:
    """The coding task as the original LogoMesh green agent phrased it."""
    return (
        f"CODING TASK: {task.title}\n\n"
        f"{task.description.strip()}\n\n"
        f"Write one Python module (it is saved as solution.py) whose public name is `{task.entry_point}`, "
        f"plus tests for it. Both run on Python {PYTHON_VERSION}: the module may use the standard library only; "
        "tests may use unittest or pytest.\n"
        "Respond with a single JSON object and nothing else:\n"
        '{"sourceCode": "<the module>", "testCode": "<the test module>", '
        '"rationale": "<why this code meets the contract>"}'
    )


@dataclass(frozen=True)
class RpcCall:
    """One JSON-RPC call ready to POST: its body bytes and the headers that go with it."""

    body: bytes
    headers: dict[str, str]


def _headers(protocol: Protocol, streaming: bool) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if streaming else "application/json"}
    if protocol == "1.0":
        headers[VERSION_HEADER] = "1.0"
    return headers


def _encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


@dataclass(frozen=True)
class TextPart:
    """A text part of a message; ``filename`` names the file it carries (an attachment), ``None`` the body."""

    text: str
    filename: str | None = None
    media_type: str = "text/plain"

    def wire(self, protocol: Protocol) -> dict[str, Any]:
        """The part as ``protocol`` spells it: 1.0 has ``filename`` and ``mediaType`` fields; 0.3 keeps them in
        the part's metadata."""
        if protocol == "0.3":
            part: dict[str, Any] = {"kind": "text", "text": self.text}
            if self.filename is not None:
                part["metadata"] = {"filename": self.filename, "mediaType": self.media_type}
            return part
        part = {"text": self.text, "mediaType": self.media_type}
        if self.filename is not None:
            part["filename"] = self.filename
        return part


def message_call(protocol: Protocol, text: str, battle_id: str, metadata: dict[str, str], *, stream: bool) -> RpcCall:
    """``message/send`` (0.3) or ``SendMessage`` (1.0), or their streaming forms, carrying ``text``."""
    return parts_call(protocol, (TextPart(text),), battle_id, metadata, stream=stream)


def parts_call(protocol: Protocol, parts: tuple[TextPart, ...], battle_id: str, metadata: dict[str, str], *,
               stream: bool, number: int = 0) -> RpcCall:
    """``message_call`` carrying ``parts``; ``number`` > 0 is a later message of the same context (its own id)."""
    wired = [part.wire(protocol) for part in parts]
    if protocol == "0.3":
        message: dict[str, Any] = {"kind": "message", "role": "user", "parts": wired}
        configuration: dict[str, Any] = {"acceptedOutputModes": ACCEPTED_OUTPUT_MODES, "blocking": True}
    else:
        message = {"role": "ROLE_USER", "parts": wired}
        configuration = {"acceptedOutputModes": ACCEPTED_OUTPUT_MODES, "returnImmediately": False}
    ident = message_id(battle_id) if number == 0 else message_id(f"{battle_id}#{number}")
    message.update({"messageId": ident, "contextId": context_id(battle_id), "metadata": metadata})
    method = METHODS[protocol]["stream" if stream else "send"]
    payload = {"jsonrpc": "2.0", "id": battle_id, "method": method,
               "params": {"message": message, "configuration": configuration, "metadata": metadata}}
    return RpcCall(_encode(payload), _headers(protocol, stream))


def task_call(protocol: Protocol, task: TaskSpec, battle_id: str, *, stream: bool,
              timeout_s: float | None = None) -> RpcCall:
    """The coding task for ``battle_id``; the battle_id is also the JSON-RPC id and in the metadata, and so is
    ``timeout_s``, the seconds the battle waits for the answer (``DEADLINE_KEY``): an agent that fits its work
    inside it answers, even if only to say it ran out of time, before the battle gives up on it."""
    metadata = {"battle_id": battle_id, "task_id": task.id}
    if timeout_s is not None:
        metadata[DEADLINE_KEY] = f"{timeout_s:g}"
    return message_call(protocol, task_prompt(task), battle_id, metadata, stream=stream)


def get_task_call(protocol: Protocol, task_id: str, battle_id: str) -> RpcCall:
    """``tasks/get`` (0.3) or ``GetTask`` (1.0), used to poll a task answered before it finished."""
    payload = {"jsonrpc": "2.0", "id": battle_id, "method": METHODS[protocol]["get"], "params": {"id": task_id}}
    return RpcCall(_encode(payload), _headers(protocol, False))
