"""The audit ledger: a pure library that imports nothing of ``logomesh``.

Canonical JSON (RFC 8785), an RFC 9162 Merkle log with C2SP signed-note
checkpoints, Ed25519 DSSE-signed DBOMs with input entanglement, offline
verification and compliance export.
"""

from ledger.errors import DuplicateBattleError, LedgerError
from ledger.store import AppendReceipt, AppendRequest, CheckpointRecord, EntrySummary, Ledger, StoredBattle

__all__ = [
    "AppendReceipt",
    "AppendRequest",
    "CheckpointRecord",
    "DuplicateBattleError",
    "EntrySummary",
    "Ledger",
    "LedgerError",
    "StoredBattle",
]
