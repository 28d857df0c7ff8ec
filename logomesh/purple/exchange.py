"""One request/response with a purple agent, kept byte for byte for the ledger."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from logomesh.submission import Submission
from logomesh.tasks import TaskSpec


class PurpleError(Exception):
    """Getting a submission from a purple agent failed; ``str()`` is a one-line reason."""


@dataclass(frozen=True)
class PurpleExchange:
    """The submission plus the exact bytes sent and received (input entanglement)."""

    submission: Submission
    request_bytes: bytes
    response_bytes: bytes
    agent: str
    protocol: str

    @property
    def response_sha256(self) -> str:
        return hashlib.sha256(self.response_bytes).hexdigest()


def canned_exchange(task: TaskSpec, variant: str, battle_id: str) -> PurpleExchange:
    """The in-process mock purple agent: the task's labelled submission ``variant``.

    Raises ``TaskError`` (a ``ValueError``) naming the known variants.
    """
    labelled = task.labelled_submission(variant)
    request = json.dumps({"battle_id": battle_id, "task_id": task.id, "mock": variant}, sort_keys=True)
    return PurpleExchange(
        submission=labelled.submission,
        request_bytes=request.encode("utf-8"),
        response_bytes=labelled.submission.raw,
        agent=f"mock:{variant}",
        protocol="in-process",
    )
