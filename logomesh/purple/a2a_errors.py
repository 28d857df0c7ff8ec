"""Typed failures of a purple exchange; each ``str()`` is a one-line reason for the ledger."""

from __future__ import annotations

from logomesh.purple.exchange import PurpleError


def one_line(text: str, limit: int = 200) -> str:
    """Untrusted text squeezed onto one printable line, at most ``limit`` characters."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class PurpleUnreachable(PurpleError):
    """No connection: refused, unknown host, or closed before an answer."""


class PurpleTimeout(PurpleError):
    """The connect or the total time limit ran out."""


class PurpleHTTPError(PurpleError):
    """The agent answered with an HTTP error status."""


class PurpleRPCError(PurpleError):
    """The agent answered with a JSON-RPC error object."""


class PurpleTaskFailed(PurpleError):
    """The agent's task ended ``failed``, ``rejected`` or ``canceled``, or asked for input."""


class PurpleTooLarge(PurpleError):
    """The response exceeded the size cap."""


class PurpleMalformed(PurpleError):
    """The response is not UTF-8, not JSON-RPC, not A2A, or holds no valid submission."""


class PurpleUsageError(PurpleError):
    """The caller asked for something unsupported (an unknown protocol version)."""
