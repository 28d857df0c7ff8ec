"""``export dboms``: a compliance bundle per battle, plus an index, the checkpoint and the key."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ledger.bundle import BUNDLE_FORMAT, make_bundle
from ledger.canonical import parse
from ledger.dbom import dbom_file_name
from ledger.errors import LedgerError
from ledger.merkle import inclusion_proof
from ledger.store import DB_FILE, Ledger

INDEX_FILE = "index.json"
BUNDLE_DIR = "bundles"


@dataclass(frozen=True)
class ExportSummary:
    out: Path
    count: int
    tree_size: int
    index: Path


def export_dboms(home: Path, out: Path, since: int = 0) -> ExportSummary:
    """Write ``out/bundles/<battle>.json`` for each entry from ``since``, proven against the newest checkpoint."""
    if since < 0:
        raise LedgerError("--since must be a sequence number (0 or more)")
    if not (home / DB_FILE).exists():
        raise LedgerError(f"no ledger at {home / DB_FILE}: check --home")
    if out.exists() and not out.is_dir():
        raise LedgerError(f"{out} exists and is not a folder: choose another --out")
    try:
        return _export(home, out, since)
    except OSError as exc:
        raise LedgerError(f"cannot write the export into {out} ({exc.strerror or exc}): choose a writable "
                          "--out") from None


def _check_out_folder(out: Path, origin: str) -> None:
    """``out`` is new, empty, or an earlier export of this same ledger: never a mix of two ledgers' bundles."""
    index = out / INDEX_FILE
    if index.exists():
        try:
            theirs = json.loads(index.read_text(encoding="utf-8")).get("origin")
        except (OSError, ValueError, AttributeError):
            theirs = None
        if not isinstance(theirs, str):
            raise LedgerError(f"{out} holds an {INDEX_FILE} that is not an export index: choose an empty --out")
        if theirs != origin:
            raise LedgerError(f"{out} holds bundles exported from another ledger ({theirs}; this one is {origin}): "
                              "export into an empty folder, or into this ledger's own earlier export")
    elif (out / BUNDLE_DIR).is_dir() and any((out / BUNDLE_DIR).iterdir()):
        raise LedgerError(f"{out / BUNDLE_DIR} holds bundles but {out} has no {INDEX_FILE}: they may belong to "
                          "another ledger; choose an empty --out")
    elif out.is_dir() and (found := sorted(p.name for p in out.iterdir() if p.name != BUNDLE_DIR)):
        raise LedgerError(f"{out} is not empty and not an export (it holds {found[0]!r}"
                          f"{f' and {len(found) - 1} more' if len(found) > 1 else ''}, no {INDEX_FILE}): "
                          "choose an empty or new --out")


def _export(home: Path, out: Path, since: int) -> ExportSummary:
    with Ledger.open(home) as led:
        _check_out_folder(out, led.origin)
        (out / BUNDLE_DIR).mkdir(parents=True, exist_ok=True)
        latest = led.latest_checkpoint()
        size = latest.size if latest else 0
        note = latest.note if latest else ""
        index = []
        chain = led.trusted_key_strings()
        with led.connect() as conn:
            nodes = led.nodes(conn, size)
            for row, dbom in led.documents(since=since):
                if row.sequence >= size:
                    break
                proof = inclusion_proof(row.sequence, size, nodes)
                bundle = make_bundle(dbom, proof, size, note, led.verifier, chain)
                data = (json.dumps(bundle, indent=2, ensure_ascii=False) + "\n").encode()
                name = f"{BUNDLE_DIR}/{dbom_file_name(row.battle_id)}"
                (out / name).write_bytes(data)
                index.append({"sequence": row.sequence, "battle_id": row.battle_id, "timestamp": row.timestamp,
                              "status": row.status, "cis_score": row.cis_score, "result_sha256": row.result_sha256,
                              "file": name, "file_sha256": hashlib.sha256(data).hexdigest()})
        key = led.verifier.encode()
        origin = led.origin
    (out / "checkpoint.txt").write_text(note)
    (out / "judge.pub").write_text(key + "\n")
    index_doc = {"format": BUNDLE_FORMAT, "origin": origin, "public_key": key, "public_keys": chain, "tree_size": size,
                 "checkpoint": note, "since": since, "bundles": index}
    (out / INDEX_FILE).write_text(json.dumps(index_doc, indent=2, ensure_ascii=False) + "\n")
    return ExportSummary(out=out, count=len(index), tree_size=size, index=out / INDEX_FILE)


def read_bundle(path: Path) -> dict[str, object]:
    if not path.is_file():
        raise LedgerError(f"no bundle at {path}")
    try:
        value = parse(path.read_bytes())
    except (LedgerError, ValueError, UnicodeDecodeError):
        raise LedgerError(f"{path} is not JSON: pass a bundle written by 'logomesh export dboms'") from None
    if not isinstance(value, dict):
        raise LedgerError(f"{path} is not a bundle object")
    return value
