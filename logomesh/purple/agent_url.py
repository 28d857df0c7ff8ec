"""Is this string the URL of an A2A agent? One check for the CLI, the console and the green agent.

A usage error should be caught before a battle starts (and before anything is
written to the ledger), with a message that names the fix, rather than reach
the HTTP client and come back as a failed battle.
"""

from __future__ import annotations

from urllib.parse import urlsplit

SCHEMES = ("http", "https")


def agent_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an agent's address, as a phrase that starts with the URL; None if nothing.

    ``agent_url_problem("localhost:9009")`` is ``"'localhost:9009' has no scheme: write http://localhost:9009"``.
    """
    shown = repr(url[:200])
    if not url.strip():
        return "is empty: write http://HOST:PORT"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return f"{shown} holds spaces or control characters"
    if "://" not in url:
        return f"{shown} has no scheme: write http://{url}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{shown} is not a valid URL ({exc})"
    if parts.scheme.lower() not in SCHEMES:
        return f"{shown}: the URL must start with http:// or https://"
    if not parts.hostname:
        return f"{shown} names no host: write http://HOST:PORT"
    if port == 0:
        return f"{shown} has port 0: name the port the agent listens on"
    return None
