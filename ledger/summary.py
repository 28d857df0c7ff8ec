"""The summary columns of a ledger row: one derivation from the signed entry, for writing and for verifying.

A row of ``battles`` repeats a few fields of its signed entry in columns of their own
(``task_id``, ``status``, ``cis_score``, …) so the ledger can be listed and searched
without parsing every DBOM. ``store`` writes them with :func:`summary_columns` and
``entry_checks`` recomputes them with the same function, so a column that does not
match its entry is an edit, never a difference between two derivations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EntrySummary:
    """One entry as the ledger lists it: its place, its time and its summary columns."""

    sequence: int
    battle_id: str
    timestamp: str
    task_id: str | None
    cis_score: float | None
    status: str | None
    result_sha256: str


def cis_column(score: object) -> float | None:
    """The ``cis_score`` column for a result's ``cis_score``: a number as a float, anything else ``None``."""
    return float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None


def summary_columns(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The summary columns of the row that stores ``entry`` (an entry as ``dbom.build_entry`` makes it)."""
    result = entry.get("result")
    return {
        "battle_id": entry.get("battle_id"),
        "timestamp": entry.get("timestamp"),
        "task_id": entry.get("task_id"),
        "status": entry.get("status"),
        "result_sha256": entry.get("result_sha256"),
        "cis_score": cis_column(result.get("cis_score") if isinstance(result, dict) else None),
    }
