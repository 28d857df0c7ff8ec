"""The one place the console reads the ledger library: rows, entry details, verification, export.

The screens see only the small typed records below, so a change in the ledger
library's API is absorbed here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger import Ledger, LedgerError, StoredBattle
from ledger.canonical import canonicalize
from ledger.dbom import dbom_problems
from ledger.merkle import inclusion_proof, leaf_hash, verify_inclusion

ProgressCallback = Callable[[int, int], None]


class LedgerUnavailable(RuntimeError):
    """A ledger feature the console needs is missing or failed; ``str()`` says which."""


@dataclass(frozen=True)
class LedgerRow:
    sequence: int
    timestamp: str
    battle_id: str
    task_id: str
    purple: str
    cis: float
    status: str

    def cells(self) -> tuple[str, ...]:
        """Most telling first, so an 80-column table shows what matters without scrolling."""
        return (str(self.sequence), self.battle_id, f"{self.cis:.3f}", self.status, self.task_id, self.purple,
                self.timestamp)


@dataclass(frozen=True)
class EntryDetail:
    row: LedgerRow
    dbom: dict[str, Any]
    signature: str
    inclusion: str
    input_hashes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    summary: str
    marks: dict[int, tuple[bool, str]]


def short_time(timestamp: str) -> str:
    """``2026-11-23T00:51:38.123456Z`` → ``2026-11-23 00:51:38``."""
    return timestamp[:19].replace("T", " ")


def _purple_of(stored: StoredBattle | None) -> str:
    if stored is None:
        return "?"
    return str(stored.result.get("purple_agent") or stored.attributes.get("purple_agent") or "")


def _signature_status(led: Ledger, stored: StoredBattle) -> str:
    problems = dbom_problems(stored.dbom, led.trusted_keys())
    if not problems:
        return "valid: DSSE envelope signed by a trusted judge key, H(Δ) matches"
    return "INVALID: " + "; ".join(f"{kind}: {detail}" for kind, detail in problems)


def _inclusion_status(led: Ledger, stored: StoredBattle) -> str:
    checkpoint = led.latest_checkpoint()
    if checkpoint is None:
        return "no checkpoint yet"
    if stored.sequence >= checkpoint.size:
        return f"not yet covered by the latest checkpoint (size {checkpoint.size})"
    leaf = leaf_hash(canonicalize(stored.dbom))
    with led.connect() as conn:
        proof = inclusion_proof(stored.sequence, checkpoint.size, led.nodes(conn, checkpoint.size))
    ok = verify_inclusion(leaf, stored.sequence, checkpoint.size, proof, checkpoint.root)
    verdict = "verified" if ok else "FAILED"
    hashes = "\n".join(f"  {step.hex()}" for step in proof)
    return (f"{verdict} against checkpoint size {checkpoint.size}, root {checkpoint.root.hex()[:16]}…, "
            f"{len(proof)} proof hashes\n{hashes}").rstrip()


class LedgerSource:
    """Reads the ledger under ``home``; every call opens and closes it."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def rows(self) -> list[LedgerRow]:
        with Ledger.open(self.home) as led:
            rows: list[LedgerRow] = []
            for entry in led.entries():
                try:
                    stored = led.get(entry.battle_id)
                except LedgerError:
                    stored = None
                rows.append(LedgerRow(
                    sequence=entry.sequence,
                    timestamp=short_time(entry.timestamp),
                    battle_id=entry.battle_id,
                    task_id=entry.task_id or "",
                    purple=_purple_of(stored),
                    cis=entry.cis_score or 0.0,
                    status=entry.status or "",
                ))
            return rows

    def battle_ids(self) -> list[str]:
        with Ledger.open(self.home) as led:
            return [entry.battle_id for entry in led.entries()]

    def detail(self, battle_id: str) -> EntryDetail:
        with Ledger.open(self.home) as led:
            stored = led.get(battle_id)
            if stored is None:
                raise LedgerUnavailable(f"no entry for battle {battle_id!r}")
            summary = next(e for e in led.entries(since=stored.sequence) if e.battle_id == battle_id)
            row = LedgerRow(stored.sequence, short_time(summary.timestamp), battle_id, summary.task_id or "",
                            _purple_of(stored), summary.cis_score or 0.0, summary.status or "")
            signature = _signature_status(led, stored)
            inclusion = _inclusion_status(led, stored)
        hashes = {name: str(info.get("sha256", "")) for name, info in dict(stored.dbom.get("inputs", {})).items()}
        return EntryDetail(row=row, dbom=stored.dbom, signature=signature, inclusion=inclusion, input_hashes=hashes)

    def verify(self, on_progress: ProgressCallback) -> VerifyReport:
        """The ledger library's full verification (``ledger.verify``), row by row."""
        verify_module: Any = _optional("ledger.verify")
        report = verify_module.verify_ledger(self.home, on_progress=on_progress)
        marks: dict[int, tuple[bool, str]] = {}
        for item in getattr(report, "entries", []) or []:
            marks[int(item.sequence)] = (bool(item.ok), str(item.reason))
        ok = bool(report.ok)
        summary = str(getattr(report, "summary", "") or ("ledger verified" if ok else "verification failed"))
        return VerifyReport(ok=ok, summary=summary, marks=marks)

    def export(self, sequences: Sequence[int], out: Path) -> Path:
        """A compliance bundle for ``sequences`` (``ledger.export``)."""
        export_module: Any = _optional("ledger.export")
        written = export_module.export_bundle(self.home, out, sequences=list(sequences))
        return Path(written) if written is not None else out


def _optional(name: str) -> object:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise LedgerUnavailable(f"{name} is not available in this build of the ledger library") from None
