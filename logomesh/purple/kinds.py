"""Purple agent kinds ``logomesh purple serve`` can serve: a registry (docs/EXTENDING.md, "Purple agent kinds").

A kind is a function ``(ServeOptions) -> (AppFactory, what)``: it checks the options it takes (``KindRefused``,
one line, a usage error, for one it cannot), and returns the factory of its A2A app and how the server names it
on stderr. ``register_purple_kind(name, kind)`` adds one; the built-in ``mock`` and ``llm`` are named by
``module:function`` and imported only when served.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from logomesh.lazy import lookup, register

if TYPE_CHECKING:
    from logomesh.purple.server import AppFactory


@dataclass(frozen=True)
class ServeOptions:
    """What ``purple serve`` was given beside the kind, the host and the port (each kind reads its own)."""

    responses: Path | None = None
    base_url: str | None = None
    model: str | None = None
    seed: int = 0
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout: float = 300.0
    prompt_template: Path | None = None
    response_format: str = "auto"
    defence: str = "none"

    def llm_options_given(self) -> bool:
        """Whether any option only ``--llm`` reads was given (the other kinds refuse them)."""
        return bool(self.base_url or self.model or self.prompt_template or self.max_tokens is not None
                    or self.response_format != "auto" or self.defence != "none")


class KindRefused(ValueError):
    """The options do not fit the kind: the message is the one-line usage error."""


PurpleKind = Callable[[ServeOptions], "tuple[AppFactory, str]"]

PURPLE_KINDS: dict[str, PurpleKind | str] = {}  # name -> the kind, or "module:function" imported when served


def register_purple_kind(name: str, kind: PurpleKind | str) -> None:
    """Make ``name`` a kind ``purple_kind`` finds."""
    register(PURPLE_KINDS, name, kind, "purple agent kind")


def purple_kind(name: str) -> PurpleKind:
    """The kind registered as ``name``; ``KindRefused`` naming the known ones where there is none."""
    found: PurpleKind = lookup(PURPLE_KINDS, name,
                               lambda known: KindRefused(f"unknown purple agent kind {name!r} (known: {known})"))
    return found


register_purple_kind("mock", "logomesh.purple.mock:serve_mock")
register_purple_kind("llm", "logomesh.purple.llm:serve_llm")
register_purple_kind("inject-obeying", "logomesh.inject.mocks:serve_obeying")
register_purple_kind("inject-ignoring", "logomesh.inject.mocks:serve_ignoring")
register_purple_kind("inject-refusing", "logomesh.inject.mocks:serve_refusing")
