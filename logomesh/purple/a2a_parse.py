"""Reading a purple agent's A2A answer (protocol 0.3 or 1.0, plain JSON or SSE) into a submission.

The input is untrusted bytes. ``parse_reply`` and ``extract_submission`` raise
nothing but ``PurpleError`` subclasses, whatever the bytes are (a Hypothesis
test fuzzes this).

A submission read from an artifact whose metadata carries the LLM purple agent's
report (``logomesh_llm``) with a ``finish_reason`` key gets it as its ``Finish``:
how the model's answer ended, ``"length"`` when it was cut at the token limit.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

from logomesh.purple.a2a_errors import PurpleMalformed, PurpleRPCError, PurpleTaskFailed, one_line
from logomesh.submission import Finish, Submission, SubmissionError, json_error

TERMINAL_FAILURES = ("failed", "rejected", "canceled")
NEEDS_INPUT = ("input-required", "auth-required")
_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n(?P<body>.*?)\r?\n[ \t]*```", re.DOTALL)
AGENT_REPORT_KEY = "logomesh_llm"  # the artifact metadata key the LLM purple agent reports under
_KINDS_1_0 = {
    "task": "task", "message": "message", "statusUpdate": "status-update", "artifactUpdate": "artifact-update",
}


@dataclass
class Reply:
    """A response folded into one view: the task state, its artifacts, and the messages.

    ``state`` is normalised to the 0.3 spelling (``completed``, ``working``, …);
    it is ``None`` for a direct Message answer. ``finishes`` holds, for each artifact,
    how the model's answer in it ended as the agent's metadata reports it (``None``: not reported).
    """

    kind: str = ""
    state: str | None = None
    task_id: str | None = None
    artifacts: list[list[Any]] = field(default_factory=list)
    finishes: list[Finish | None] = field(default_factory=list)
    status_parts: list[Any] = field(default_factory=list)
    message_parts: list[Any] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        """A task that has not reached a final or interrupted state yet."""
        return self.kind == "task" and self.state not in ("completed", *TERMINAL_FAILURES, *NEEDS_INPUT)


def normalise_state(state: Any) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` and ``input-required`` both become ``input-required``."""
    text = str(state).strip().lower().removeprefix("task_state_").replace("_", "-")
    return "canceled" if text == "cancelled" else text


def _decode(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PurpleMalformed(f"response is not UTF-8 (bad byte at offset {exc.start})") from None


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PurpleMalformed(f"{what} is not JSON: {json_error(exc)}") from None
    except RecursionError:
        raise PurpleMalformed(f"{what} is JSON nested too deeply") from None


def sse_payloads(text: str) -> list[str]:
    """The ``data:`` payloads of a Server-Sent Events stream, one string per event."""
    events: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if lines:
                events.append("\n".join(lines))
                lines = []
            continue
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
    if lines:
        events.append("\n".join(lines))
    return events


def _rpc_result(envelope: Any) -> Any:
    if not isinstance(envelope, dict):
        raise PurpleMalformed("response is not a JSON-RPC object")
    error = envelope.get("error")
    if error is not None:
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            raise PurpleRPCError(f"JSON-RPC error {one_line(str(code), 20)}: {one_line(str(message))}")
        raise PurpleRPCError(f"JSON-RPC error: {one_line(str(error))}")
    if "result" not in envelope:
        raise PurpleMalformed("JSON-RPC response has neither 'result' nor 'error'")
    return envelope["result"]


def _classify(result: Any) -> tuple[str, dict[str, Any]]:
    """(kind, payload) of one result; kinds use the 0.3 names."""
    if not isinstance(result, dict):
        raise PurpleMalformed("JSON-RPC result is not an object")
    kind = result.get("kind")
    if isinstance(kind, str) and kind in ("task", "message", "status-update", "artifact-update"):
        return kind, result
    for key, name in _KINDS_1_0.items():
        payload = result.get(key)
        if isinstance(payload, dict):
            return name, payload
    if "status" in result and "id" in result:
        return "task", result
    if "parts" in result:
        return "message", result
    raise PurpleMalformed("JSON-RPC result is neither an A2A Task nor a Message")


def _parts(holder: Any) -> list[Any]:
    if not isinstance(holder, dict):
        return []
    parts = holder.get("parts")
    return parts if isinstance(parts, list) else []


def _apply_status(reply: Reply, status: Any) -> None:
    if not isinstance(status, dict):
        raise PurpleMalformed("task status is not an object")
    if "state" not in status:
        raise PurpleMalformed("task status has no state")
    reply.state = normalise_state(status["state"])
    if "message" in status:
        reply.status_parts = _parts(status.get("message"))


def _apply_artifact(reply: Reply, artifact: Any, ids: list[Any], append: bool) -> None:
    if not isinstance(artifact, dict):
        raise PurpleMalformed("artifact is not an object")
    artifact_id = artifact.get("artifactId")
    parts = _parts(artifact)
    finish = finish_of(artifact.get("metadata"))
    if artifact_id is not None and artifact_id in ids:
        index = ids.index(artifact_id)
        reply.artifacts[index] = reply.artifacts[index] + parts if append else parts
        reply.finishes[index] = finish if finish is not None or not append else reply.finishes[index]
        return
    ids.append(artifact_id)
    reply.artifacts.append(parts)
    reply.finishes.append(finish)


def finish_of(metadata: Any) -> Finish | None:
    """The ``Finish`` the LLM purple agent's report in an artifact's metadata holds; ``None`` if it holds none.

    A report with ``finish_reason`` null (the model endpoint gave none) is kept as a ``Finish`` whose reason
    is unknown: the absence is on the record too.
    """
    report = metadata.get(AGENT_REPORT_KEY) if isinstance(metadata, dict) else None
    return Finish.from_json(report) if isinstance(report, dict) else None


def _apply(reply: Reply, kind: str, payload: dict[str, Any], ids: list[Any]) -> None:
    if kind == "message":
        reply.kind = reply.kind or "message"
        reply.message_parts = _parts(payload)
        return
    reply.kind = "task"
    task_id = payload.get("id") if kind == "task" else payload.get("taskId")
    if isinstance(task_id, str):
        reply.task_id = task_id
    if kind == "task":
        _apply_status(reply, payload.get("status"))
        artifacts = payload.get("artifacts") or []
        if not isinstance(artifacts, list):
            raise PurpleMalformed("task artifacts is not a list")
        reply.artifacts, reply.finishes, ids[:] = [], [], []
        for artifact in artifacts:
            _apply_artifact(reply, artifact, ids, append=False)
    elif kind == "status-update":
        _apply_status(reply, payload.get("status"))
    else:
        _apply_artifact(reply, payload.get("artifact"), ids, append=payload.get("append") is True)


def parse_reply(body: bytes, *, sse: bool) -> Reply:
    """Fold one JSON-RPC response body (or an SSE stream of them) into a ``Reply``."""
    text = _decode(body)
    if sse:
        payloads = sse_payloads(text)
        if not payloads:
            raise PurpleMalformed("event stream carried no data events")
    else:
        payloads = [text]
    reply, ids = Reply(), list[Any]()
    for payload in payloads:
        kind, result = _classify(_rpc_result(_loads(payload, "response")))
        _apply(reply, kind, result, ids)
    return reply


def _part_text(part: Any) -> str | None:
    if isinstance(part, dict) and part.get("kind", "text") == "text" and isinstance(part.get("text"), str):
        return str(part["text"])
    return None


def _candidates(reply: Reply) -> list[tuple[Any, Finish | None]]:
    """What may hold the submission, best first, each with its artifact's ``Finish``: artifacts, then the
    status message, then a Message."""
    found: list[tuple[Any, Finish | None]] = []
    for parts, finish in zip(reply.artifacts, reply.finishes, strict=True):
        found.extend((part, finish) for part in parts)
        texts = [t for t in (_part_text(p) for p in parts) if t is not None]
        if len(texts) > 1:
            found.append(({"text": "".join(texts)}, finish))
    found.extend((part, None) for part in reply.status_parts)
    found.extend((part, None) for part in reply.message_parts)
    return found


def texts_to_try(text: str) -> list[str]:
    """The text itself, then each ```json fenced block in it, then its outermost {...} span."""
    tries = [text]
    tries.extend(m.group("body") for m in _FENCED.finditer(text))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        tries.append(text[start : end + 1])
    return tries


def _from_part(part: Any, raw: bytes) -> Submission:
    if not isinstance(part, dict):
        raise SubmissionError("part is not an object")
    if "data" in part and part.get("kind", "data") == "data":
        return Submission.from_mapping(part["data"], raw)
    text = _part_text(part)
    if text is None:
        raise SubmissionError("part is neither text nor data")
    first: SubmissionError | None = None
    for attempt in texts_to_try(text):
        try:
            return Submission.from_text(attempt, raw)
        except SubmissionError as exc:
            first = first or exc
        except RecursionError:
            first = first or SubmissionError("submission JSON is nested too deeply")
    assert first is not None
    raise first


def extract_submission(reply: Reply, raw: bytes) -> Submission:
    """The submission a finished reply holds; ``raw`` is kept on it for the ledger."""
    if reply.state in TERMINAL_FAILURES or reply.state in NEEDS_INPUT:
        why = " ".join(t for t in (_part_text(p) for p in reply.status_parts) if t)
        detail = f": {one_line(why)}" if why.strip() else ""
        verb = "asked for more input" if reply.state in NEEDS_INPUT else "ended"
        raise PurpleTaskFailed(f"the agent's task {verb} ({reply.state}){detail}")
    if reply.pending:
        raise PurpleMalformed(f"the agent's task is still {reply.state or 'unfinished'}")
    candidates = _candidates(reply)
    if not candidates:
        raise PurpleMalformed("the answer holds no text or data part")
    first: SubmissionError | None = None
    for part, finish in candidates:
        try:
            submission = _from_part(part, raw)
        except SubmissionError as exc:
            first = first or exc
            continue
        return dataclasses.replace(submission, finish=finish) if finish is not None else submission
    raise PurpleMalformed(f"no valid submission in the answer: {one_line(str(first))}")
