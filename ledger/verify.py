"""Offline verification of a whole ledger: every hash, signature, leaf, node and checkpoint.

Nothing stored is trusted: canonical forms, ``H(Δ)``, input blobs, DSSE
signatures and leaf hashes are recomputed from the rows, the tree is rebuilt
from the leaves, and every signed checkpoint — in the database, in
``checkpoints/``, and any the auditor saved — must be a prefix of that tree.
Each problem names the sequence number (when there is one) and its kind.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from ledger import files
from ledger.checkpoint import CheckpointError, open_checkpoint
from ledger.entry_checks import KeyChain, SignerRun, check_entries, default_workers
from ledger.errors import LedgerError
from ledger.keys import VERIFIER_FILE, VerifierKey, load_verifier, parse_verifier_key
from ledger.merkle import EMPTY_ROOT, MemoryTree, consistency_proof, verify_consistency
from ledger.schema import APPEND_ONLY, make_engine, table, trigger_problems
from ledger.store import DB_FILE, KEYS_DIR, dbom_files_until, judge_key_chain

# The kinds of tamper a report can name.
KINDS = {
    "trigger-removed": "an append-only trigger was dropped",
    "trigger-altered": "an append-only trigger's SQL is not what the store creates",
    "trigger-added": "a trigger the store never creates is on the ledger",
    "table-missing": "a ledger table was dropped",
    "entry-deleted": "a sequence number is missing",
    "sequence-mismatch": "an entry is stored under another sequence number (reordered or inserted)",
    "result-edited": "a result no longer hashes to its recorded H(Δ)",
    "entry-edited": "an entry differs from what sigma_judge signed",
    "column-edited": "a column disagrees with the signed entry",
    "bad-signature": "a DSSE signature does not verify with a trusted key",
    "malformed": "stored JSON is not canonical or not well formed",
    "leaf-mismatch": "a stored leaf hash is not the hash of its entry",
    "blob-missing": "an input blob an entry names is not stored",
    "blob-edited": "an input blob no longer hashes to its address",
    "node-mismatch": "a stored Merkle node disagrees with the tree rebuilt from the leaves",
    "checkpoint-signature": "a checkpoint is not validly signed by a trusted key",
    "checkpoint-mismatch": "a checkpoint's root is not the root of the log at its size",
    "inconsistent": "a checkpoint is not an append-only extension of the one before it",
    "rollback": "the log is shorter than a checkpoint it signed (truncated or rolled back)",
    "fork": "two checkpoints of one size have different roots",
    "unsigned-entries": "entries exist beyond the newest signed checkpoint",
    "dbom-file": "a DBOM file outside the database differs from its row",
    "dbom-file-missing": "an entry's DBOM file in dboms/ was deleted",
    "dbom-file-orphan": "a file in dboms/ matches no entry",
    "untrusted-key": "the ledger trusts a key the auditor did not give",
    "key-file": "keys/judge.pub is not the key the ledger is signed with",
    "database-corrupt": "battles.db is damaged: SQLite cannot read it",
}


# Kinds that follow from a change elsewhere (an entry's bytes, a row moved or deleted): never the root cause
# while a problem of another kind is reported.
CONSEQUENCES = frozenset({"node-mismatch", "checkpoint-mismatch", "inconsistent", "rollback", "fork",
                          "unsigned-entries"})


@dataclass(frozen=True)
class Problem:
    kind: str
    detail: str
    sequence: int | None = None

    def line(self) -> str:
        where = f"entry {self.sequence}" if self.sequence is not None else "ledger"
        return f"{where}: {self.kind}: {self.detail}"

    def as_dict(self) -> dict[str, Any]:
        return {"sequence": self.sequence, "kind": self.kind, "detail": self.detail}


@dataclass
class VerifyReport:
    size: int = 0
    root: bytes = EMPTY_ROOT
    checkpoints: int = 0
    blobs: int = 0
    seconds: float = 0.0
    problems: list[Problem] = field(default_factory=list)
    judge_key: VerifierKey | None = None  # the key that signs new entries: the first, followed through rotations
    signers: list[SignerRun] = field(default_factory=list)  # which keys' signatures verified, over which entries

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, kind: str, detail: str, sequence: int | None = None) -> None:
        self.problems.append(Problem(kind, detail, sequence))

    def kinds(self) -> set[str]:
        return {p.kind for p in self.problems}

    def ordered(self) -> list[Problem]:
        """The root cause first, then the rest: a damaged database; else the lowest entry whose own bytes
        disagree (in the order its checks found them); else the first problem. Consequences of a change (the
        tree and checkpoints, :data:`CONSEQUENCES`) come after every problem that names a change."""
        def rank(problem: Problem) -> tuple[int, int, int]:
            cause = 0 if problem.kind == "database-corrupt" else 2 if problem.kind in CONSEQUENCES else 1
            return cause, problem.sequence is None, problem.sequence or 0

        return sorted(self.problems, key=rank)  # stable: one entry's problems stay in the order found

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "size": self.size, "root": self.root.hex(), "checkpoints": self.checkpoints,
            "blobs": self.blobs, "seconds": round(self.seconds, 3),
            "judge_key": None if self.judge_key is None else {
                "fingerprint": self.judge_key.fingerprint, "verifier_key": self.judge_key.encode()},
            "signed_by": [run.as_dict() for run in self.signers],
            "problems": [p.as_dict() for p in self.problems],
        }


@dataclass
class _Seen:
    """Checkpoint roots seen by size, from every source, to spot forks."""

    roots: dict[int, tuple[bytes, str]] = field(default_factory=dict)
    clean: dict[str, tuple[int, bytes]] = field(default_factory=dict)  # notes already found sound, by text

    def record(self, report: VerifyReport, size: int, root: bytes, source: str) -> None:
        known = self.roots.setdefault(size, (root, source))
        if known[0] != root:
            report.add("fork", f"checkpoints of size {size} disagree: {known[1]} vs {source}")


def start_chain(home: Path, conn: Connection, given: Sequence[VerifierKey] | None) -> tuple[KeyChain, list[str]]:
    """The auditor's keys if given, else the ledger's first judge key; and the chain the ledger records."""
    recorded = judge_key_chain(conn)
    if given:
        return KeyChain(list(given), given[0], [given[0]]), recorded
    first: VerifierKey | None = None
    try:
        first = parse_verifier_key(recorded[0]) if recorded else load_verifier(home / KEYS_DIR)
    except LedgerError:
        first = None
    return KeyChain([], first, [first] if first else []), recorded


def verify_ledger(
    home: Path, *, pubkeys: Sequence[VerifierKey] | None = None, saved_checkpoints: Iterable[str] = (),
    workers: int | None = 1,
) -> VerifyReport:
    """Check everything under ``home``; a report, never an exception, for tampering.

    ``workers`` processes check the entries; ``None`` picks one for a small ledger, else the usable
    cores up to 4. The report is the same whatever the number. Worker processes are started with
    ``spawn``, which imports the caller's main module again: a script that calls this with more than
    one worker needs the ``if __name__ == "__main__":`` guard, hence the default of one.
    """
    started = time.perf_counter()
    db_path = home / DB_FILE
    if not db_path.exists():
        raise LedgerError(f"no ledger at {db_path}: check --home")
    report = VerifyReport()
    listing = _dbom_listing(home)  # before the rows are read: a file listed now belongs to a row committed already
    engine = make_engine(db_path)
    try:
        with engine.connect() as conn:
            if not _tables_present(conn, report):
                report.seconds = time.perf_counter() - started
                return report
            for kind, detail in trigger_problems(conn):
                report.add(kind, detail)
            chain, recorded = start_chain(home, conn, pubkeys)
            meta = table("meta")
            row = conn.execute(select(meta.c.value).where(meta.c.key == "origin")).first()
            origin = str(row[0]) if row else None
            if workers is None:
                workers = default_workers(conn.execute(select(func.count()).select_from(table("battles"))).scalar_one())
            walk = check_entries(home, conn, chain, report.add, workers)
            tree, blob_users = walk.tree, walk.blob_users
            report.signers = walk.signers
            report.judge_key = chain.current
            _check_key_file(home, chain.current, report)
            keys = chain.all_keys()
            for text in recorded:
                if text not in {k.encode() for k in keys}:
                    report.add("untrusted-key", f"the ledger trusts {text}, which neither the auditor nor a "
                                                "signed key rotation vouches for")
            _check_blobs(conn, blob_users, report)
            _check_dbom_folder(home, conn, listing, report)
            _check_nodes(conn, tree, report)
            seen = _Seen()
            _check_db_checkpoints(conn, tree, keys, origin, seen, report)
    except SQLAlchemyError as exc:  # the ledger's own file is damaged: that is a failed verification, not a usage error
        report.add("database-corrupt", f"{db_path} cannot be read ({_reason(exc)}): the database is damaged; "
                                       "restore battles.db from a backup and verify again")
        report.seconds = time.perf_counter() - started
        return report
    finally:
        engine.dispose()
    _check_file_checkpoints(home, tree, keys, origin, seen, report)
    for i, note in enumerate(saved_checkpoints):
        _check_note(note, f"saved checkpoint {i + 1}", tree, keys, origin, seen, report)
    report.size = tree.size()
    report.root = tree.root()
    report.seconds = time.perf_counter() - started
    return report


def _reason(exc: SQLAlchemyError) -> str:
    return str(getattr(exc, "orig", None) or exc).splitlines()[0]


def _tables_present(conn: Connection, report: VerifyReport) -> bool:
    """All ledger tables exist; none at all is not a ledger (an error), some missing is tampering."""
    present = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [name for name in APPEND_ONLY if name not in present]
    if len(missing) == len(APPEND_ONLY):
        raise LedgerError("the database holds no ledger tables: it is not a LogoMesh ledger; check --home")
    for name in missing:
        report.add("table-missing", f"table {name} was dropped")
    return not missing


def _check_blobs(conn: Connection, users: dict[str, list[int]], report: VerifyReport) -> None:
    blobs = table("blobs")
    found = set()
    for digest, size, data in conn.execute(select(blobs.c.sha256, blobs.c.size, blobs.c.data)):
        found.add(digest)
        report.blobs += 1
        if hashlib.sha256(bytes(data)).hexdigest() != digest or len(data) != size:
            detail = f"input blob {digest[:16]}… no longer hashes to its address"
            for sequence in users.get(digest, []):
                report.add("blob-edited", detail, sequence)
            if digest not in users:
                report.add("blob-edited", detail)
    for digest, sequences in users.items():
        if digest not in found:
            for sequence in sequences:
                report.add("blob-missing", f"input blob {digest[:16]}… is not stored", sequence)


def _check_key_file(home: Path, signing: VerifierKey | None, report: VerifyReport) -> None:
    """``keys/judge.pub``, what ``logomesh keys show`` hands auditors, is the key the ledger signs with.

    ``signing`` is the ledger's first key (or the auditor's), followed through every verified rotation
    entry; from schema /3 each entry also names its signer's fingerprint in what it signs.
    """
    path = home / KEYS_DIR / VERIFIER_FILE
    if signing is None or not path.exists():
        return
    where = f"{KEYS_DIR}/{VERIFIER_FILE}"
    try:
        published = parse_verifier_key(path.read_text(encoding="utf-8"))
    except (LedgerError, UnicodeDecodeError) as exc:
        report.add("key-file", f"{where} is not a verifier key ({exc}); restore it: the ledger is signed with "
                               f"{signing.encode()} (fingerprint {signing.fingerprint})")
        return
    if published != signing:
        report.add("key-file", f"{where} holds judge key {published.fingerprint}, but the ledger is signed with "
                               f"{signing.fingerprint}: the file was replaced (or a key rotation was interrupted: "
                               f"open the ledger to finish it); restore it: {signing.encode()}")


def _dbom_listing(home: Path) -> set[str] | None:
    """The names in ``dboms/``, without the temporary files a crash can leave; None when the folder is absent."""
    try:
        names = os.listdir(home / files.DBOM_DIR)
    except FileNotFoundError:
        return None
    return {n for n in names if not files.is_temporary(n)}


def _check_dbom_folder(home: Path, conn: Connection, listing: set[str] | None, report: VerifyReport) -> None:
    """Every entry an older release wrote a file for still has it in ``dboms/``, and every file there is an entry's.

    Entries from ``dbom_files_until`` (the meta row this release adds when it first opens a ledger) on have
    no file; a ledger without the row is one no release since has written to, and each entry has a file.
    An older release wrote the DBOM files after its commit and before it adds the checkpoint to
    ``checkpoints/history.jsonl``, so a crash can leave entries beyond the history's newest size
    without a file (the next open writes them): only a file missing below that size is reported,
    and only if it is still missing once the history has been read, so an append running beside
    this check is never mistaken for a deletion. Contents are compared entry by entry elsewhere.
    """
    prefix = f"{files.DBOM_DIR}/"
    battles = table("battles")
    wanted = {str(rel).removeprefix(prefix): int(seq)
              for seq, rel in conn.execute(select(battles.c.sequence, battles.c.dbom_path))
              if str(rel).startswith(prefix)}  # any other path is reported as dbom-file by the entry checks
    for name in sorted((listing or set()) - set(wanted)):
        report.add("dbom-file-orphan", f"{prefix}{name} matches no entry: an entry removed from the database "
                                       "(compare a saved checkpoint), or a file put there")
    written_below = files.last_history_size(home / files.CHECKPOINT_DIR)
    until = dbom_files_until(conn)
    if until is not None:
        written_below = min(written_below, until)
    gone = sorted((seq, name) for name, seq in wanted.items() if seq < written_below
                  and (listing is None or name not in listing) and not (home / prefix / name).exists())
    if listing is None and gone:
        report.add("dbom-file-missing", f"the {files.DBOM_DIR}/ folder is gone: {len(gone)} entries lost their "
                                        "file; restore it from a backup (each file is its row's dbom column)")
        return
    for seq, name in gone:
        report.add("dbom-file-missing", f"{prefix}{name} was deleted (it is written when the entry is appended); "
                                        "restore it from a backup: it holds the row's dbom column", seq)


def _check_nodes(conn: Connection, tree: MemoryTree, report: VerifyReport) -> None:
    nodes = table("nodes")
    count = 0
    for level, idx, value in conn.execute(select(nodes.c.level, nodes.c.idx, nodes.c.hash)):
        count += 1
        ok = level < len(tree.levels) and idx < len(tree.levels[level]) and tree.levels[level][idx] == bytes(value)
        if not ok:
            first, last = idx << level, min(((idx + 1) << level), tree.size()) - 1
            report.add("node-mismatch", f"stored node (level {level}, index {idx}, over entries {first}-{last}) "
                                        "is wrong")
    expected = sum(len(level) for level in tree.levels)
    if count != expected:
        report.add("node-mismatch", f"{count} stored Merkle nodes, the rebuilt tree has {expected}")


def _check_db_checkpoints(
    conn: Connection, tree: MemoryTree, keys: Sequence[VerifierKey], origin: str | None, seen: _Seen,
    report: VerifyReport,
) -> None:
    checkpoints = table("checkpoints")
    previous: tuple[int, bytes] | None = None
    rows = conn.execute(select(checkpoints.c.size, checkpoints.c.root, checkpoints.c.note)
                        .order_by(checkpoints.c.id)).all()
    for number, (size, root_hex, note) in enumerate(rows, start=1):
        report.checkpoints += 1
        label = f"database checkpoint #{number} (size {size})"
        checked = _check_note(str(note), label, tree, keys, origin, seen, report)
        if checked is None:
            continue
        if (checked[0], checked[1].hex()) != (size, root_hex):
            report.add("checkpoint-mismatch", f"{label}: size/root columns differ from the signed note")
        if previous is not None and not _consistent(previous, checked, tree):
            report.add("inconsistent", f"{label} does not extend the checkpoint before it (size {previous[0]})")
        previous = checked
    newest = previous[0] if previous else 0
    if tree.size() > newest:
        report.add("unsigned-entries", f"entries {newest}..{tree.size() - 1} are not covered by a signed checkpoint",
                   newest)


def _consistent(old: tuple[int, bytes], new: tuple[int, bytes], tree: MemoryTree) -> bool:
    """Is ``new`` an append-only extension of ``old``, by an RFC 9162 proof from the rebuilt tree?"""
    (old_size, old_root), (new_size, new_root) = old, new
    if new_size < old_size:
        return False
    if old_size == 0:
        return old_root == EMPTY_ROOT
    if new_size > tree.size():
        return True  # judged separately as a rollback
    proof = consistency_proof(old_size, new_size, tree)
    return verify_consistency(old_size, new_size, old_root, new_root, proof)


def _check_note(
    note: str, label: str, tree: MemoryTree, keys: Sequence[VerifierKey], origin: str | None, seen: _Seen,
    report: VerifyReport,
) -> tuple[int, bytes] | None:
    """Authenticate one checkpoint note and hold it against the rebuilt tree.

    The same note text seen again (the database's copy, then the history's) is
    not re-verified: identical bytes get identical answers.
    """
    if note in seen.clean:
        return seen.clean[note]
    problems_before = len(report.problems)
    try:
        checkpoint = open_checkpoint(note, keys, origin=origin)
    except CheckpointError as exc:
        report.add("checkpoint-signature", f"{label}: {exc}")
        return None
    size, root = checkpoint.size, checkpoint.root
    seen.record(report, size, root, label)
    if size > tree.size():
        report.add("rollback", f"{label} signed {size} entries but the log has {tree.size()}", tree.size())
    elif tree.root(size) != root:
        report.add("checkpoint-mismatch", f"{label}: the log's first {size} entries have another root")
    if len(report.problems) == problems_before:
        seen.clean[note] = (size, root)
    return size, root


def _check_file_checkpoints(
    home: Path, tree: MemoryTree, keys: Sequence[VerifierKey], origin: str | None, seen: _Seen,
    report: VerifyReport,
) -> None:
    cp_dir = home / files.CHECKPOINT_DIR
    previous: tuple[int, bytes] | None = None
    for number, (_, note) in enumerate(files.read_history(cp_dir), start=1):
        checked = _check_note(note, f"history checkpoint #{number}", tree, keys, origin, seen, report)
        if checked is not None and previous is not None and not _consistent(previous, checked, tree):
            report.add("inconsistent", f"history checkpoint #{number} does not extend the one before it")
        previous = checked or previous
    latest = cp_dir / files.LATEST_FILE
    if latest.exists():
        _check_note(latest.read_text(encoding="utf-8"), "checkpoints/latest", tree, keys, origin, seen, report)
