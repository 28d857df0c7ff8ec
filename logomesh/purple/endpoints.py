"""What the LLM purple agent learned about each endpoint, kept between runs.

``auto`` (``llm.Negotiation``) finds out whether an endpoint holds its answers
to the JSON schema: it follows it, refuses it (an HTTP 400 on
``response_format``), or ignores it (answers free text anyway). Learned once,
it is written here, one line per endpoint and model in a JSON file of the
state folder, so an agent started again (or another agent on the same
machine) asks its first question in the form that works instead of spending a
battle finding out. The file is small, written whole to a temporary name and
moved into place; one that cannot be read is treated as empty, and one that
cannot be written costs only the memory, never a battle.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Behaviour = Literal["followed", "refused", "ignored"]
BEHAVIOURS: tuple[Behaviour, ...] = ("followed", "refused", "ignored")
FILE_NAME = "endpoints.json"
MAX_ENDPOINTS = 1000  # endpoints kept; the oldest learned goes first


@dataclass(frozen=True)
class EndpointMemory:
    """``path``: the JSON file (None: remember nothing, as with ``--response-format`` given)."""

    path: Path | None = None

    def recall(self, endpoint: str) -> Behaviour | None:
        """What ``endpoint`` did with the JSON schema last time, or None if it is not known here."""
        found = self._read().get(endpoint)
        return found if found in BEHAVIOURS else None

    def remember(self, endpoint: str, behaviour: Behaviour) -> None:
        if self.path is None:
            return
        known = self._read()
        if known.get(endpoint) == behaviour:
            return
        known.pop(endpoint, None)
        known[endpoint] = behaviour
        kept = dict(list(known.items())[-MAX_ENDPOINTS:])
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".endpoints-", suffix=".json")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    json.dump(kept, out, indent=1)
                os.replace(temporary, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)

    def _read(self) -> dict[str, str]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def endpoint_key(completions_url: str, model: str) -> str:
    """One endpoint and model: the same server may hold one model to the schema and not another."""
    return f"{completions_url} {model}"
