"""The audit ledger: a pure library that imports nothing of ``logomesh``.

Canonical JSON (RFC 8785), an RFC 9162 Merkle log with C2SP signed-note
checkpoints, Ed25519 DSSE-signed DBOMs with input entanglement, offline
verification and compliance export.
"""

from ledger.errors import DuplicateBattleError, LedgerError
from ledger.store import AppendReceipt, AppendRequest, CheckpointRecord, Inclusion, Ledger, StoredBattle
from ledger.summary import EntrySummary

__all__ = [
    "AppendReceipt",
    "AppendRequest",
    "CheckpointRecord",
    "DuplicateBattleError",
    "EntrySummary",
    "Inclusion",
    "Ledger",
    "LedgerError",
    "StoredBattle",
]
