"""The ledger: ``<home>/battles.db`` plus the judge key and checkpoint copies.

An append runs under an exclusive file lock and one ``BEGIN IMMEDIATE``
transaction: it reads the tree size, builds and signs each DBOM, stores the
leaf, the new perfect-subtree hashes and the raw input blobs, signs a
checkpoint of the new tree and commits (WAL, ``synchronous=FULL``). Only then
are the checkpoint copies written, still under the lock so that the history
file keeps the log's order. Each DBOM lives in its row (``dbom``, the Merkle
leaf bytes); no file is created per entry (one was, before the
``dbom_files_until`` meta row: see :mod:`ledger.files`). Many processes appending at once thus
get one total order and never fork the tree; an append that returned is on disk.

The database commit is the one fsync per append: it is the authority. The
copies outside are tamper evidence, not the durable record; whatever a crash
kept from them is rewritten from the database the next time the ledger opens.
"""

from __future__ import annotations

import fcntl
import operator
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import Engine, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, col

from ledger import files
from ledger.canonical import canonicalize, parse
from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.dbom import build_entry, check_battle_id, dbom_file_name, dbom_problems, decode_vector, sign_encoded
from ledger.errors import DuplicateBattleError, LedgerError
from ledger.keys import (
    DEFAULT_KEY_NAME,
    SIGNER_FILE,
    SignerKey,
    VerifierKey,
    finish_rotation,
    load_key,
    load_or_create_key,
    parse_verifier_key,
    stage_next_key,
)
from ledger.merkle import inclusion_proof, leaf_hash, verify_inclusion
from ledger.nodes import DbNodes, frontier_of, frontier_root, push_leaf
from ledger.schema import (
    WRITE_OPTION,
    Battle,
    Blob,
    CheckpointRow,
    create_schema,
    make_engine,
    table,
    trigger_problems,
)
from ledger.summary import EntrySummary, summary_columns

DB_FILE = "battles.db"
JUDGE_KEY_PREFIX = "judge_key:"
ROTATION_STATUS = "key-rotation"
LOCK_FILE = "battles.db.lock"
KEYS_DIR = "keys"
_ATTRIBUTE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")  # safe inside an index name and a JSON path
_ID_CHUNK = 500  # battle ids per IN (...) query, well under SQLite's variable limit
Clock = Callable[[], datetime]
_BATTLE_COLUMNS = ("sequence", "battle_id", "timestamp", "task_id", "status", "cis_score", "result_sha256",
                   "raw_result", "dbom", "leaf_hash", "dbom_path")
# Rows are bound by position: naming each column of each row cost SQLite's binding as much again.
_INSERT_BATTLE = f"INSERT INTO battles ({', '.join(_BATTLE_COLUMNS)}) VALUES ({', '.join('?' * len(_BATTLE_COLUMNS))})"
_INSERT_NODE = "INSERT INTO nodes (level, idx, hash) VALUES (?, ?, ?)"
# Content-addressed: bytes stored already (by an earlier entry) are kept once, without asking for them first.
_INSERT_BLOB = "INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING"
_battle_values = operator.itemgetter(*_BATTLE_COLUMNS)  # a row's values in column order


def utc_now() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """UTC, RFC 3339, microseconds, ``Z`` suffix."""
    if moment.tzinfo is None:
        raise LedgerError("the ledger clock must return timezone-aware datetimes")
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class AppendRequest:
    battle_id: str
    result: Mapping[str, Any]
    inputs: Mapping[str, bytes] = field(default_factory=dict)
    attributes: Mapping[str, str] = field(default_factory=dict)
    intent_vector: Sequence[float] | None = None


@dataclass(frozen=True)
class AppendReceipt:
    sequence: int
    battle_id: str
    timestamp: str
    result_sha256: str
    leaf_hash: str
    tree_size: int
    root: str
    checkpoint: str
    db_path: Path
    leaf_data: bytes  # the DBOM's canonical bytes (the Merkle leaf), as its row keeps them


@dataclass(frozen=True)
class StoredBattle:
    """Everything ``replay`` needs: the signed DBOM, the result, its hash and the raw inputs."""

    sequence: int
    battle_id: str
    result: dict[str, Any]
    result_sha256: str
    dbom: dict[str, Any]
    inputs: dict[str, bytes]
    attributes: dict[str, str]
    intent_vector: list[float] | None
    leaf_data: bytes  # the DBOM's canonical bytes (the Merkle leaf), as its row keeps them


@dataclass(frozen=True)
class CheckpointRecord:
    size: int
    root: bytes
    note: str
    timestamp: str


@dataclass(frozen=True)
class Inclusion:
    """Is an entry in the tree the latest checkpoint signs: that checkpoint, the audit path, the verdict."""

    checkpoint: CheckpointRecord | None  # None: no checkpoint yet
    covered: bool = False  # the checkpoint's tree is large enough to hold the entry
    proof: tuple[bytes, ...] = ()
    verified: bool = False


@dataclass(frozen=True)
class _Prepared:
    """One entry, built and signed, waiting for its transaction."""

    battle_row: tuple[Any, ...]  # the values of _BATTLE_COLUMNS
    node_rows: list[tuple[int, int, bytes]]  # level, idx, hash
    blob_rows: list[tuple[str, int, bytes]]  # sha256, size, data
    leaf_data: bytes

    def column(self, name: str) -> Any:
        return self.battle_row[_BATTLE_COLUMNS.index(name)]

    def receipt(self, tree_size: int, root: bytes, note: str, db_path: Path) -> AppendReceipt:
        column = self.column
        return AppendReceipt(
            sequence=column("sequence"), battle_id=column("battle_id"), timestamp=column("timestamp"),
            result_sha256=column("result_sha256"), leaf_hash=column("leaf_hash"), tree_size=tree_size,
            root=root.hex(), checkpoint=note, db_path=db_path, leaf_data=self.leaf_data,
        )


@dataclass(frozen=True)
class _Batch:
    """A committed append: its receipts and the checkpoint copies still to write."""

    receipts: list[AppendReceipt]
    notes: list[tuple[int, str]]


class Ledger:
    """The append-only, signed, Merkle-chained battle ledger under one home folder."""

    def __init__(self, home: Path, engine: Engine, key: SignerKey, origin: str, clock: Clock) -> None:
        self.home = home
        self.db_path = home / DB_FILE
        self.dbom_dir = home / files.DBOM_DIR  # only ledgers begun before dbom_files_until have files there
        self.checkpoint_dir = home / files.CHECKPOINT_DIR
        self._engine = engine
        self._key = key
        self.origin = origin
        self._clock = clock
        self._lock_fh = open(home / LOCK_FILE, "a+b")  # noqa: SIM115 - held for the ledger's lifetime
        self._frontier: list[tuple[int, bytes]] = []
        self._frontier_size = -1
        self._thread_lock = threading.Lock()  # flock excludes processes, not threads sharing this object
        self._indexed: set[str] = set()  # attribute indexes this object has made sure of

    # -- opening -------------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, home: Path, *, clock: Clock | None = None, key_name: str = DEFAULT_KEY_NAME) -> Ledger:
        """Open or create the ledger in ``home`` (its key, folders and database included)."""
        try:
            return cls._open(Path(home), clock, key_name)
        except SQLAlchemyError as exc:
            raise LedgerError(f"{Path(home) / DB_FILE} cannot be opened as a ledger ({_reason(exc)})") from None

    @classmethod
    def _open(cls, home: Path, clock: Clock | None, key_name: str) -> Ledger:
        home.mkdir(parents=True, exist_ok=True)
        (home / files.CHECKPOINT_DIR).mkdir(exist_ok=True)
        engine = make_engine(home / DB_FILE)
        with _exclusive(home / LOCK_FILE):
            create_schema(engine)
            with engine.connect() as conn:
                chain = judge_key_chain(conn)
            finish_rotation(home / KEYS_DIR, chain[-1] if chain else None)
            # A ledger that already has entries never gets a fresh key: that would fork its signer.
            if chain and not (home / KEYS_DIR / SIGNER_FILE).exists():
                engine.dispose()
                raise LedgerError(f"the judge key of {home / DB_FILE} is missing from {home / KEYS_DIR}: restore "
                                  "judge.key from a backup (a new key cannot continue an existing ledger)")
            key = load_key(home / KEYS_DIR) if chain else load_or_create_key(home / KEYS_DIR, key_name)
            origin = _initialise_meta(engine, key)
            with engine.connect() as conn:
                broken = trigger_problems(conn)
            if broken:
                engine.dispose()
                raise LedgerError(
                    f"{home / DB_FILE} lost its append-only triggers ({'; '.join(d for _, d in broken)}): "
                    "it was tampered with; run 'logomesh verify ledger' and restore from a verified copy"
                )
            ledger = cls(home, engine, key, origin, clock or utc_now)
            chain = ledger.trusted_key_strings()
            if not chain or key.verifier.encode() != chain[-1]:
                ledger.close()
                raise LedgerError(
                    f"the judge key in {home / KEYS_DIR} is not this ledger's current judge key: restore it"
                )
            ledger._sync_files()
            ledger._stop_dbom_files()
        return ledger

    def close(self) -> None:
        self._engine.dispose()
        if not self._lock_fh.closed:
            self._lock_fh.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def verifier(self) -> VerifierKey:
        return self._key.verifier

    def trusted_key_strings(self) -> list[str]:
        """Every judge key the log has had, oldest first; the last one signs new entries."""
        with self._engine.connect() as conn:
            return judge_key_chain(conn)

    def trusted_keys(self) -> list[VerifierKey]:
        return [parse_verifier_key(k) for k in self.trusted_key_strings()]

    # -- appending -----------------------------------------------------------------------------------------------

    def append(
        self,
        battle_id: str,
        result: Mapping[str, Any],
        inputs: Mapping[str, bytes],
        attributes: Mapping[str, str],
        intent_vector: Sequence[float] | None = None,
    ) -> AppendReceipt:
        """Record one battle (scored or failed); returns once it is durable and checkpointed."""
        return self.append_many([AppendRequest(battle_id, result, inputs, attributes, intent_vector)])[0]

    def append_many(self, requests: Sequence[AppendRequest]) -> list[AppendReceipt]:
        """Record several battles in one transaction under one checkpoint.

        All or nothing: when it returns, every entry and the checkpoint are committed (WAL,
        ``synchronous=FULL``) and their checkpoint copies written. A ``LedgerError`` from
        the transaction means none was recorded; an error writing the copies after the commit leaves
        the entries recorded, and the next open writes the copies. The DBOMs are in their rows only:
        ``export dboms`` writes them out where a user asks. One commit serves the whole batch,
        which is what makes it faster than ``append`` per battle; for each battle it promises, from its
        return on, exactly what ``append`` promises.
        """
        if not requests:
            return []
        for req in requests:
            check_battle_id(req.battle_id)
        if len({r.battle_id for r in requests}) != len(requests):
            raise DuplicateBattleError("the same battle id appears twice in one batch")
        with self._thread_lock, _exclusive_fh(self._lock_fh):
            batch = self._commit(requests)
            self._write_files(batch)
        return batch.receipts

    def _commit(self, requests: Sequence[AppendRequest], extra_meta: Sequence[dict[str, str]] = ()) -> _Batch:
        """Build, sign and durably commit the entries, their nodes, blobs and the new checkpoint (lock held)."""
        try:
            with self._engine.connect() as raw, raw.execution_options(**{WRITE_OPTION: True}).begin():
                conn = raw
                self._follow_rotation(conn)
                size = _tree_size(conn)
                self._load_frontier(conn, size)
                self._refuse_duplicates(conn, requests)
                prepared = [self._prepare(req, size + offset) for offset, req in enumerate(requests)]
                new_size = size + len(requests)
                self._frontier_size = new_size
                root = frontier_root(self._frontier)
                note = sign_checkpoint(Checkpoint(self.origin, new_size, root), self._key)
                db = _driver(conn)  # the rows go straight to sqlite3, inside the same transaction
                _insert_blobs(db, {row[0]: row for p in prepared for row in p.blob_rows})
                db.executemany(_INSERT_BATTLE, [p.battle_row for p in prepared])
                db.executemany(_INSERT_NODE, [row for p in prepared for row in p.node_rows])
                conn.execute(insert(table("checkpoints")), [{"size": new_size, "root": root.hex(), "note": note,
                                                             "timestamp": prepared[-1].column("timestamp")}])
                if extra_meta:
                    conn.execute(insert(table("meta")), list(extra_meta))
        except (IntegrityError, sqlite3.IntegrityError) as exc:
            self._frontier_size = -1
            raise LedgerError(f"ledger refused the append: {_reason(exc)}") from None
        except (SQLAlchemyError, sqlite3.Error) as exc:
            self._frontier_size = -1
            raise LedgerError(f"ledger write failed, nothing was recorded: {_reason(exc)}") from None
        except BaseException:
            self._frontier_size = -1
            raise
        return _Batch([p.receipt(new_size, root, note, self.db_path) for p in prepared], [(new_size, note)])

    def _prepare(self, req: AppendRequest, sequence: int) -> _Prepared:
        """One entry: canonical result, signed DBOM, leaf, the Merkle nodes it completes, its rows."""
        stamp = rfc3339(self._clock())
        result_bytes = canonicalize(dict(req.result))
        entry = build_entry(
            sequence=sequence, battle_id=req.battle_id, timestamp=stamp, result=req.result, inputs=req.inputs,
            attributes=req.attributes, intent_vector=req.intent_vector, result_bytes=result_bytes,
        )
        leaf_data = sign_encoded(entry, self._key, result_bytes).leaf_data
        leaf = leaf_hash(leaf_data)
        node_rows = push_leaf(self._frontier, sequence, leaf)
        digests = entry["inputs"]
        blob_rows = [(digests[name]["sha256"], len(data), bytes(data)) for name, data in req.inputs.items()]
        row = {
            "sequence": sequence, **summary_columns(entry), "raw_result": result_bytes.decode(),
            "dbom": leaf_data.decode(), "leaf_hash": leaf.hex(),
            "dbom_path": f"{files.DBOM_DIR}/{dbom_file_name(req.battle_id)}",
        }
        return _Prepared(_battle_values(row), node_rows, blob_rows, leaf_data)

    def _write_files(self, batch: _Batch) -> None:
        """The checkpoint copies outside the database, in log order (lock held)."""
        files.append_history(self.checkpoint_dir, batch.notes)
        files.write_atomic(self.checkpoint_dir / files.LATEST_FILE, batch.notes[-1][1].encode())

    def _follow_rotation(self, conn: Connection) -> None:
        """Sign with the log's current judge key, even if another process rotated it since we opened."""
        current = judge_key_chain(conn)[-1]
        if self._key.verifier.encode() != current:
            self._key = load_key(self.home / KEYS_DIR)
            if self._key.verifier.encode() != current:
                raise LedgerError(f"the judge key in {self.home / KEYS_DIR} is not the ledger's current key")

    def rotate_key(self, new_seed: bytes | None = None) -> AppendReceipt:
        """Replace the judge key; the rotation is itself an entry, signed (with its checkpoint) by the old key.

        The new key is written to ``keys/judge.next.key`` before the entry
        commits and moved into place after, so a crash in between is finished
        by the next :meth:`open`. The old private key is kept under
        ``keys/retired/`` (mode 0600) for the operator to destroy.
        """
        keys_dir = self.home / KEYS_DIR
        with self._thread_lock, _exclusive_fh(self._lock_fh):
            with self._engine.connect() as conn:
                self._follow_rotation(conn)
                number = len(judge_key_chain(conn))
            old = self._key
            new = stage_next_key(keys_dir, old.name, new_seed)
            battle_id = f"key-rotation-{number}-{new.verifier.key_id_hex}"
            result = {"battle_id": battle_id, "status": ROTATION_STATUS, "kind": ROTATION_STATUS,
                      "old_key": old.verifier.encode(), "new_key": new.verifier.encode()}
            batch = self._commit(
                [AppendRequest(battle_id, result, {}, {"kind": ROTATION_STATUS})],
                extra_meta=[{"key": f"{JUDGE_KEY_PREFIX}{number:06d}", "value": new.verifier.encode()}],
            )
            self._write_files(batch)
            finish_rotation(keys_dir, new.verifier.encode())
            self._key = load_key(keys_dir)
        return batch.receipts[0]

    def _load_frontier(self, conn: Connection, size: int) -> None:
        if self._frontier_size != size:
            self._frontier = frontier_of(DbNodes(conn, size), size)
            self._frontier_size = size

    @staticmethod
    def _refuse_duplicates(conn: Connection, requests: Sequence[AppendRequest]) -> None:
        ids = [r.battle_id for r in requests]
        found = _recorded_ids(conn, ids)
        duplicate = next((battle_id for battle_id in ids if battle_id in found), None)
        if duplicate is not None:
            raise DuplicateBattleError(
                f"battle {duplicate!r} is already in the ledger; entries are never replaced: use a new --battle-id"
            )

    def _sync_files(self) -> None:
        """Write the outside copies an interrupted append did not get to (checkpoint notes, and the DBOM files
        an older release had not written yet when it crashed)."""
        on_disk = files.last_history_size(self.checkpoint_dir)
        with self._engine.connect() as conn:
            files_until = dbom_files_until(conn)
            latest = conn.execute(
                select(table("checkpoints").c.size).order_by(table("checkpoints").c.id.desc()).limit(1)
            ).first()
            if latest is None or latest[0] <= on_disk:
                return
            missing_notes = conn.execute(
                select(table("checkpoints").c.size, table("checkpoints").c.note)
                .where(table("checkpoints").c.size > on_disk).order_by(table("checkpoints").c.id)
            ).all()
            sequence = table("battles").c.sequence
            query = select(table("battles").c.dbom, table("battles").c.dbom_path).where(sequence >= max(on_disk, 0))
            if files_until is not None:
                query = query.where(sequence < files_until)
            rows = conn.execute(query).all()
        if rows:
            self.dbom_dir.mkdir(exist_ok=True)
        for dbom, rel in rows:
            path, data = self.home / rel, _dbom_file(dbom.encode())
            if not path.exists() or path.read_bytes() != data:  # missing, or torn by a crash mid-write
                files.write_atomic(path, data)
        notes = [(int(s), str(n)) for s, n in missing_notes]
        files.append_history(self.checkpoint_dir, notes)
        files.write_atomic(self.checkpoint_dir / files.LATEST_FILE, notes[-1][1].encode())

    def _stop_dbom_files(self) -> None:
        """Record, once, that the entries from here on have no DBOM file: a new ledger records 0, a ledger an
        older release began records its size (its entries so far each have a file, which verify still checks)."""
        with self._engine.connect() as conn:
            if dbom_files_until(conn) is not None:  # recorded already: no write transaction at every open
                return
        with self._engine.connect() as conn, conn.execution_options(**{WRITE_OPTION: True}).begin():
            if dbom_files_until(conn) is None:
                conn.execute(insert(table("meta")), [{"key": files.DBOM_FILES_UNTIL, "value": str(_tree_size(conn))}])

    # -- reading -------------------------------------------------------------------------------------------------

    def size(self) -> int:
        with self._engine.connect() as conn:
            return _tree_size(conn)

    def entries(self, since: int = 0) -> Iterator[EntrySummary]:
        """Entries in sequence order from ``since``."""
        with Session(self._engine) as session:
            stmt = select(Battle).where(col(Battle.sequence) >= since).order_by(col(Battle.sequence))
            for row in session.scalars(stmt):
                yield _summary(row)

    def documents(self, since: int = 0) -> Iterator[tuple[EntrySummary, dict[str, Any]]]:
        """Entries from ``since`` with their signed DBOMs, without loading the input blobs."""
        with Session(self._engine) as session:
            stmt = select(Battle).where(col(Battle.sequence) >= since).order_by(col(Battle.sequence))
            for row in session.scalars(stmt):
                yield _summary(row), dict(parse(row.dbom))

    def documents_with(self, attribute: str, value: str) -> Iterator[tuple[EntrySummary, dict[str, Any]]]:
        """Entries whose signed ``attributes[attribute]`` equals ``value``, in sequence order, with their DBOMs.

        Served by an index on that attribute, made the first time it is asked for (one pass over the
        ledger), so a campaign's battles are found without parsing every other entry. The index holds
        nothing that is not in the signed DBOMs; ``verify`` ignores it. A ledger that cannot be written
        (read-only media) is scanned instead.
        """
        if not _ATTRIBUTE_RE.match(attribute):
            raise LedgerError(f"bad attribute name {attribute!r}: use letters, digits and '_', starting with a letter")
        index, path = f"battles_attribute_{attribute}", f"$.attributes.{attribute}"
        hint = f"INDEXED BY {index}" if self._ensure_index(index, path) else ""
        query = (f"SELECT sequence, battle_id, timestamp, task_id, cis_score, status, result_sha256, dbom "
                 f"FROM battles {hint} WHERE json_extract(dbom, '{path}') = ? ORDER BY sequence")
        try:
            with self._engine.connect() as conn:
                rows = conn.exec_driver_sql(query, (value,)).all()
        except SQLAlchemyError as exc:
            problem = f"cannot search the ledger by {attribute}: {_reason(exc)}"
            raise LedgerError(f"{problem}; run: logomesh verify ledger") from None
        for row in rows:
            yield EntrySummary(*row[:7]), dict(parse(row[7]))

    def _ensure_index(self, index: str, path: str) -> bool:
        """Make the index on ``path`` if it is missing; False when the database refuses (read-only)."""
        if index in self._indexed:
            return True
        try:
            with self._engine.connect() as conn, conn.execution_options(**{WRITE_OPTION: True}).begin():
                conn.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {index} ON battles (json_extract(dbom, '{path}'))")
        except SQLAlchemyError:
            return False
        self._indexed.add(index)
        return True

    def recorded(self, battle_ids: Iterable[str]) -> set[str]:
        """Which of ``battle_ids`` the ledger holds (by the unique battle-id index, not a scan)."""
        with self._engine.connect() as conn:
            return _recorded_ids(conn, battle_ids)

    def get(self, battle_id: str) -> StoredBattle | None:
        """The signed DBOM and raw inputs of one battle, or None."""
        with Session(self._engine) as session:
            row = session.scalars(select(Battle).where(col(Battle.battle_id) == battle_id)).first()
            if row is None:
                return None
            document = parse(row.dbom)
            digests = {name: str(info["sha256"]) for name, info in document["inputs"].items()}
            found = {
                b.sha256: bytes(b.data)
                for b in session.scalars(select(Blob).where(col(Blob.sha256).in_(list(digests.values()))))
            }
        missing = [name for name, digest in digests.items() if digest not in found]
        if missing:
            raise LedgerError(f"battle {battle_id}: stored inputs missing ({', '.join(missing)}): run verify ledger")
        return StoredBattle(
            sequence=row.sequence, battle_id=row.battle_id, result=document["result"],
            result_sha256=row.result_sha256, dbom=document,
            inputs={name: found[digest] for name, digest in digests.items()},
            attributes=dict(document["attributes"]), intent_vector=decode_vector(document["intent_vector"]),
            leaf_data=row.dbom.encode(),
        )

    def entry(self, battle_id: str) -> EntrySummary | None:
        """The summary of one battle's entry, or None."""
        with Session(self._engine) as session:
            row = session.scalars(select(Battle).where(col(Battle.battle_id) == battle_id)).first()
            return None if row is None else _summary(row)

    def signature_problems(self, stored: StoredBattle) -> list[tuple[str, str]]:
        """(kind, detail) for each way ``stored``'s DBOM fails to verify with the judge keys; empty when it holds."""
        return dbom_problems(stored.dbom, self.trusted_keys())

    def inclusion(self, stored: StoredBattle) -> Inclusion:
        """The Merkle audit path of ``stored`` in the latest checkpoint's tree, checked against its root."""
        checkpoint = self.latest_checkpoint()
        if checkpoint is None or stored.sequence >= checkpoint.size:
            return Inclusion(checkpoint)
        leaf = leaf_hash(canonicalize(stored.dbom))
        with self.connect() as conn:
            proof = inclusion_proof(stored.sequence, checkpoint.size, self.nodes(conn, checkpoint.size))
        verified = verify_inclusion(leaf, stored.sequence, checkpoint.size, proof, checkpoint.root)
        return Inclusion(checkpoint, covered=True, proof=tuple(proof), verified=verified)

    def checkpoints(self) -> list[CheckpointRecord]:
        with Session(self._engine) as session:
            rows = session.scalars(select(CheckpointRow).order_by(col(CheckpointRow.id))).all()
        return [CheckpointRecord(r.size, bytes.fromhex(r.root), r.note, r.timestamp) for r in rows]

    def latest_checkpoint(self) -> CheckpointRecord | None:
        with Session(self._engine) as session:
            row = session.scalars(select(CheckpointRow).order_by(col(CheckpointRow.id).desc()).limit(1)).first()
        return CheckpointRecord(row.size, bytes.fromhex(row.root), row.note, row.timestamp) if row else None

    def nodes(self, conn: Connection, size: int | None = None) -> DbNodes:
        return DbNodes(conn, _tree_size(conn) if size is None else size)

    def connect(self) -> Connection:
        """A read connection (caller closes it), for proofs over :meth:`nodes`."""
        return self._engine.connect()


def _summary(row: Battle) -> EntrySummary:
    return EntrySummary(row.sequence, row.battle_id, row.timestamp, row.task_id, row.cis_score, row.status,
                        row.result_sha256)


def _dbom_file(canonical: bytes) -> bytes:
    """The DBOM file holds the leaf bytes themselves, so ``sha256(0x00 ‖ file)`` is its leaf hash."""
    return canonical


def _reason(exc: Exception) -> str:
    return str(getattr(exc, "orig", None) or exc).splitlines()[0]


def dbom_files_until(conn: Connection) -> int | None:
    """How many entries have a file in ``dboms/`` (written by releases before this meta row); None when the
    ledger has no such row yet (every entry has one: a ledger no release since has opened for writing)."""
    meta = table("meta")
    row = conn.execute(select(meta.c.value).where(meta.c.key == files.DBOM_FILES_UNTIL)).first()
    if row is None:
        return None
    try:
        return max(0, int(row[0]))
    except ValueError:
        return None  # not a count: hold every entry to having its file, as before the row


def judge_key_chain(conn: Connection) -> list[str]:
    """The judge's verifier keys in the order the log adopted them."""
    meta = table("meta")
    rows = conn.execute(select(meta.c.value).where(meta.c.key.like(f"{JUDGE_KEY_PREFIX}%")).order_by(meta.c.key))
    return [str(r[0]) for r in rows]


def current_judge_key(home: Path) -> str | None:
    """The judge key the ledger under ``home`` signs new entries with, read without opening it for writing;
    None when there is no ledger there (or it records no key)."""
    if not (home / DB_FILE).exists():
        return None
    engine = make_engine(home / DB_FILE)
    try:
        with engine.connect() as conn:
            chain = judge_key_chain(conn)
    except SQLAlchemyError as exc:
        raise LedgerError(f"{home / DB_FILE} cannot be read as a ledger ({_reason(exc)}): check --home") from None
    finally:
        engine.dispose()
    return chain[-1] if chain else None


def _recorded_ids(conn: Connection, battle_ids: Iterable[str]) -> set[str]:
    """Which of ``battle_ids`` the battles table holds, asked ``_ID_CHUNK`` ids at a time."""
    wanted, found = list(dict.fromkeys(battle_ids)), set()
    column = table("battles").c.battle_id
    for start in range(0, len(wanted), _ID_CHUNK):
        chunk = wanted[start:start + _ID_CHUNK]
        found |= {str(r[0]) for r in conn.execute(select(column).where(column.in_(chunk)))}
    return found


def _tree_size(conn: Connection) -> int:
    sequence = table("battles").c.sequence
    row = conn.execute(select(sequence).order_by(sequence.desc()).limit(1)).first()
    return 0 if row is None else int(row[0]) + 1


def _driver(conn: Connection) -> sqlite3.Connection:
    """The sqlite3 connection under ``conn``: bulk inserts skip SQLAlchemy's per-row work (a third of an append)."""
    db = conn.connection.driver_connection
    assert isinstance(db, sqlite3.Connection)
    return db


def _insert_blobs(db: sqlite3.Connection, rows: dict[str, tuple[str, int, bytes]]) -> None:
    """Store the blobs not stored yet (content-addressed: the same bytes are kept once)."""
    db.executemany(_INSERT_BLOB, rows.values())


def _initialise_meta(engine: Engine, key: SignerKey) -> str:
    """Record the log's origin and first trusted key on creation; return the origin."""
    with engine.connect() as conn, conn.execution_options(**{WRITE_OPTION: True}).begin():
        meta = table("meta")
        row = conn.execute(select(meta.c.value).where(meta.c.key == "origin")).first()
        if row is not None:
            return str(row[0])
        origin = f"logomesh.local/ledger/{key.verifier.key_id_hex}"
        conn.execute(insert(meta), [
            {"key": "origin", "value": origin},
            {"key": f"{JUDGE_KEY_PREFIX}{0:06d}", "value": key.verifier.encode()},
        ])
        return origin


class _exclusive:
    """An exclusive ``flock`` on a lock file, for one-off critical sections."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def __enter__(self) -> None:
        self._fh = open(self._path, "a+b")
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        self._fh.close()


class _exclusive_fh:
    def __init__(self, fh: Any) -> None:
        self._fh = fh

    def __enter__(self) -> None:
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
