"""What ``logomesh replay ID`` replays: a battle (``battle/replay.py``) or an injection attempt
(``inject/replay.py``), told apart by the entry's status. An injection run's entry judged nothing itself and
is refused in one line naming its attempts.
"""

from __future__ import annotations

from pathlib import Path

from logomesh.battle.replay import ReplayError, ReplayReport, replay_stored_battle, stored_entry
from logomesh.events import EventSink, discard
from logomesh.inject.record import ATTEMPT_STATUS, RUN_STATUS
from logomesh.inject.replay import replay_attempt


def replay_entry(home: Path, entry_id: str, sandbox: str = "auto", emit: EventSink = discard) -> ReplayReport:
    """Replay ``entry_id``, a battle or an injection attempt; ``ReplayError`` when that is impossible (an
    injection run's entry among them: its attempts are what replays)."""
    stored = stored_entry(home, entry_id)
    status = stored.result.get("status")
    if status == ATTEMPT_STATUS:
        return replay_attempt(stored, sandbox)
    if status == RUN_STATUS:
        queries = stored.result.get("queries")
        last = f" to {entry_id}.q{queries:04d}" if isinstance(queries, int) and queries > 1 else ""
        raise ReplayError(f"entry {entry_id!r} is an injection run, which judged nothing itself: replay its "
                          f"attempts ({entry_id}.q0001{last}) one by one")
    return replay_stored_battle(home, stored, sandbox, emit)
