"""The one place the console reads the ledger library: rows, entry details, verification, export.

The screens see only the small typed records below, so a change in the ledger
library's API is absorbed here.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ProgressCallback = Callable[[int, int], None]


class LedgerUnavailable(RuntimeError):
    """The ledger library or its database cannot be used; ``str()`` says why and what to do."""


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
        return (str(self.sequence), self.timestamp, self.battle_id, self.task_id, self.purple, f"{self.cis:.3f}",
                self.status)


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


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _ledger_module(name: str = "ledger") -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise LedgerUnavailable(f"the ledger library is missing ({exc}); reinstall logomesh") from None


def _row(entry: Any) -> LedgerRow:
    result = _field(entry, "result", {}) or {}
    attributes = _field(entry, "attributes", {}) or {}
    return LedgerRow(
        sequence=int(_field(entry, "sequence", 0)),
        timestamp=str(_field(entry, "timestamp", "") or "")[:19].replace("T", " "),
        battle_id=str(_field(entry, "battle_id", "") or result.get("battle_id", "")),
        task_id=str(result.get("task_id", "")),
        purple=str(result.get("purple_agent", "") or attributes.get("purple_agent", "")),
        cis=float(result.get("cis_score", 0.0) or 0.0),
        status=str(result.get("status", "")),
    )


class LedgerSource:
    """Reads the ledger under ``home``; every call opens and closes the database."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def _open(self) -> Any:
        return _ledger_module().Ledger.open(self.home)

    def rows(self) -> list[LedgerRow]:
        with self._open() as led:
            return [_row(entry) for entry in led.entries()]

    def exists(self, battle_id: str) -> bool:
        with self._open() as led:
            return led.get(battle_id) is not None

    def detail(self, battle_id: str) -> EntryDetail:
        with self._open() as led:
            entry = led.get(battle_id)
            if entry is None:
                raise LedgerUnavailable(f"no entry for battle {battle_id!r}")
            row = _row(entry)
            dbom_fn = getattr(led, "dbom", None)
            dbom = dbom_fn(battle_id) if callable(dbom_fn) else _field(entry, "dbom", {})
            proof_fn = getattr(led, "inclusion", None)
            inclusion = proof_fn(battle_id) if callable(proof_fn) else None
            signature_fn = getattr(led, "signature_status", None)
            signature = signature_fn(battle_id) if callable(signature_fn) else _field(entry, "signature", "")
        hashes = _field(entry, "input_hashes", None) or _field(entry, "inputs", {}) or {}
        return EntryDetail(
            row=row,
            dbom=dict(dbom or {}),
            signature=str(signature or "not available"),
            inclusion=_describe_inclusion(inclusion),
            input_hashes={str(k): str(v) for k, v in dict(hashes).items()},
        )

    def verify(self, on_progress: ProgressCallback) -> VerifyReport:
        verify_ledger = _ledger_module("ledger.verify").verify_ledger
        report = verify_ledger(self.home, on_progress=on_progress)
        marks: dict[int, tuple[bool, str]] = {}
        for item in _field(report, "entries", []) or []:
            marks[int(_field(item, "sequence", 0))] = (bool(_field(item, "ok", False)), str(_field(item, "reason", "")))
        ok = bool(_field(report, "ok", False))
        summary = str(_field(report, "summary", "") or ("ledger verified" if ok else "verification failed"))
        return VerifyReport(ok=ok, summary=summary, marks=marks)

    def export(self, sequences: Sequence[int], out: Path) -> Path:
        export_bundle = _ledger_module("ledger.export").export_bundle
        written = export_bundle(self.home, out, sequences=list(sequences))
        return Path(written) if written is not None else out


def _describe_inclusion(proof: Any) -> str:
    if proof is None:
        return "not available"
    if isinstance(proof, str):
        return proof
    return json.dumps(proof, indent=1, sort_keys=True, default=str)
