"""What a battle is asked to do (``BattleRequest``), and the errors that stop one before or during its stages."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from logomesh.cancel import CancelToken
from logomesh.context import BattleContext
from logomesh.events import EventSink
from logomesh.purple import DEFAULT_PURPLE_TIMEOUT_S

if TYPE_CHECKING:
    from logomesh.scoring.config import LlmConfig


SEED_LIMIT = 2**53
"""Seeds are recorded in JSON results; beyond this magnitude no JSON reader keeps them exact."""


class BattleSetupError(ValueError):
    """The battle cannot start (unknown task, unknown mock variant, no purple named)."""


class StageFailed(Exception):
    """A stage failed after the battle started; recorded with ``stage`` and a one-line reason."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason


@dataclass(frozen=True)
class BattleRequest:
    task_id: str
    battle_id: str
    seed: int
    home: Path
    purple_url: str | None = None
    mock_variant: str | None = None
    protocol: str | None = None
    sandbox: str = "auto"
    red_budget_s: float = 10.0
    red: bool = True
    campaign_id: str | None = None
    purple_timeout_s: float = DEFAULT_PURPLE_TIMEOUT_S
    purple_stream: bool = False
    """Ask with ``message/stream`` (SSE) instead of ``message/send``."""
    review_llm: LlmConfig | None = None
    """The bounded LLM senior review's endpoint (``score --llm-base-url``); ``None``: off."""
    cancel: CancelToken = field(default_factory=CancelToken.never, compare=False, repr=False)
    """Cancelling it stops the battle (see ``battle.spine``); the default, ``CancelToken.never()``, nobody can."""

    @property
    def purple_label(self) -> str:
        return self.purple_url or f"mock:{self.mock_variant}"

    def context(self, emit: EventSink) -> BattleContext:
        """The context every stage of this battle shares: its id, ``emit``, its cancel token and its seed."""
        return BattleContext(battle_id=self.battle_id, emit=emit, cancel=self.cancel, seed=self.seed)


def default_battle_id(task_id: str, purple: str, seed: int) -> str:
    """A deterministic id for a battle whose caller named none."""
    digest = hashlib.sha256(f"{task_id}\x00{purple}\x00{seed}".encode()).hexdigest()[:12]
    return f"{task_id}-{digest}"


def free_battle_id(home: Path, base: str) -> str:
    """``base`` if the ledger under ``home`` lacks it, else the first free ``base-2``, ``base-3``, …"""
    from ledger import Ledger
    from ledger.store import DB_FILE

    if not (home / DB_FILE).exists():  # no ledger yet: every id is free, and a look creates nothing
        return base
    with Ledger.open(home) as led:
        candidate, n = base, 1
        while led.get(candidate) is not None:
            n += 1
            candidate = f"{base}-{n}"
    return candidate
