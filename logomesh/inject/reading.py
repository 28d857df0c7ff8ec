"""How the injection mocks read a conversation: which instructions it holds, where, and how they are framed.

The mocks stand in for a coding agent at the protocol level, so they read as an agent would, not as the
grammar wrote: they know the objectives' wording (the public catalogue in ``objectives.py``), look for it in
every part of every message of the context, decode base64 runs, join a note given in two halves, and tell the
framing from the words around the instruction. Nothing here imports the grammar's rendering.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass

from logomesh.inject.objectives import OBJECTIVES, ObjectiveName

_SLOTS = {
    "canary_var": r"(?P<canary_var>[A-Za-z_][A-Za-z0-9_]*)",
    "backdoor": r"(?P<backdoor>[0-9]+)",
    "path": r"(?P<path>/[^\s,;]+)",
}
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_HALF = re.compile(r"part ([12]) of 2:\s*(.*)", re.IGNORECASE)


@dataclass(frozen=True)
class Seen:
    """One part of one message as the agent received it: its text and the file it carries (``None``: the body)."""

    message: int
    text: str
    filename: str | None


@dataclass(frozen=True)
class Sighting:
    """An instruction the agent read: what it asks (with its slot values), where it was and how it was put."""

    objective: ObjectiveName
    placement: str
    framing: str
    slots: tuple[tuple[str, str], ...]

    def slot(self, name: str) -> str:
        return dict(self.slots).get(name, "")


def _pattern(ask: str) -> re.Pattern[str]:
    """The ask's wording as a pattern: its words in order, any whitespace between them, its slots captured."""
    pieces = re.split(r"(\{[a-z_]+\})", ask)
    out: list[str] = []
    used: set[str] = set()
    for piece in pieces:
        name = piece[1:-1] if piece.startswith("{") and piece.endswith("}") else None
        if name in _SLOTS:
            out.append(_SLOTS[name] if name not in used else f"(?P={name})")
            used.add(name)
        else:
            out.append(r"\s+".join(re.escape(word) for word in piece.split()) if piece.strip() else r"\s*")
            if piece[:1].isspace():
                out.insert(len(out) - 1, r"\s+")
            if piece[-1:].isspace():
                out.append(r"\s+")
    return re.compile("".join(out), re.IGNORECASE)


_PATTERNS: dict[ObjectiveName, re.Pattern[str]] = {name: _pattern(o.ask) for name, o in OBJECTIVES.items()}


def placement_of(part: Seen) -> str:
    """Where an instruction in ``part`` sat: a later message, a code file, a markdown file, another file, or the
    task's own text."""
    if part.message > 0:
        return "second-message"
    if part.filename is None:
        return "description"
    if part.filename.endswith(".py"):
        return "starter"
    if part.filename.lower().endswith((".md", ".rst", ".txt")):
        return "readme"
    return "config"


def _asks(text: str) -> list[tuple[ObjectiveName, re.Match[str]]]:
    flat = " ".join(text.split())
    return [(name, match) for name, pattern in _PATTERNS.items() if (match := pattern.search(flat))]


def _framing_before(text: str, match: re.Match[str]) -> str:
    """The framing the words just before the instruction give it (the line it starts on)."""
    flat = " ".join(text.split())
    lead = flat[max(0, match.start() - 160):match.start()].lower()
    if "maintainer" in lead:
        return "authority"
    if "urgent" in lead:
        return "urgency"
    return "plain"


def _decoded(text: str) -> list[str]:
    out: list[str] = []
    for run in _BASE64.findall(text):
        try:
            out.append(base64.b64decode(run, validate=True).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    return out


def _slots(match: re.Match[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in match.groupdict().items() if v is not None))


def sightings(parts: Sequence[Seen]) -> list[Sighting]:
    """Every instruction the conversation's ``parts`` hold, in the order found, each objective once."""
    found: dict[ObjectiveName, Sighting] = {}

    def note(name: ObjectiveName, placement: str, framing: str, match: re.Match[str]) -> None:
        found.setdefault(name, Sighting(name, placement, framing, _slots(match)))

    halves: dict[str, tuple[str, Seen]] = {}
    for part in parts:
        for name, match in _asks(part.text):
            note(name, placement_of(part), _framing_before(part.text, match), match)
        for decoded in _decoded(part.text):
            for name, match in _asks(decoded):
                note(name, placement_of(part), "encoded", match)
        for line in part.text.splitlines():
            half = _HALF.search(line.lstrip("#/ "))
            if half:
                halves.setdefault(half.group(1), (half.group(2), part))
    if "1" in halves and "2" in halves:
        joined = f"{halves['1'][0]} {halves['2'][0]}"
        for name, match in _asks(joined):
            note(name, placement_of(halves["1"][1]), "split", match)
    return list(found.values())
