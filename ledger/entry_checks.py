"""The checks of each entry on its own, in this process or spread over worker processes.

An entry's checks need its row, its DBOM file if any and the judge keys in force at
its sequence number. Those keys change only at key-rotation entries, so the
parallel path replays the rotation entries first, in order, exactly as the
single-process walk would (:func:`key_timeline`); every other entry can then
be checked anywhere, in any order. Findings come back per entry and are
reported in sequence order, so both paths give the same report (a test runs
every tamper case both ways).
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.engine import Connection

from ledger import files
from ledger.canonical import parse, sha256_hex
from ledger.dbom import check_dbom, dbom_file_name
from ledger.errors import LedgerError
from ledger.keys import VerifierKey, parse_verifier_key
from ledger.merkle import MemoryTree, leaf_hash
from ledger.schema import BUSY_TIMEOUT_MS
from ledger.store import DB_FILE, ROTATION_STATUS
from ledger.summary import summary_columns

ROTATION_MARK = f'"kind":"{ROTATION_STATUS}"'  # in the canonical JSON of every rotation entry
PARALLEL_FROM = 10_000  # entries; starting workers costs ~1.5 s, so below this they gain little (1.13x at 5,000)
MAX_WORKERS = 4
CHUNK = 1000  # entries per task handed to a worker

Finding = tuple[str, str]  # (kind, detail)
Report = Callable[[str, str, int], None]  # adds (kind, detail, sequence) to the report


@dataclass
class KeyChain:
    """The judge keys in force while entries are replayed in order.

    An entry verifies with the chain's current key or any key the auditor
    gave. A key-rotation entry that verifies makes its new key current (the
    old one no longer signs later entries). Checkpoints verify with any key
    the chain has held.
    """

    given: list[VerifierKey]
    current: VerifierKey | None
    held: list[VerifierKey] = field(default_factory=list)

    def signers(self) -> list[VerifierKey]:
        return [k for k in [self.current, *self.given] if k is not None]

    def adopt(self, key: VerifierKey) -> None:
        self.current = key
        if key not in self.held:
            self.held.append(key)

    def all_keys(self) -> list[VerifierKey]:
        return list(dict.fromkeys([*self.given, *self.held]))


@dataclass(frozen=True)
class EntryFindings:
    """What the checks of one entry found; ``signed_ok`` when its DBOM verified with no problem at all."""

    sequence: int
    leaf: bytes
    problems: list[Finding]
    blobs: list[str]
    signed_ok: bool = False
    signer: str | None = None  # the verifier key (encoded) whose signature on the entry verified


@dataclass
class SignerRun:
    """Consecutive entries whose signatures verified with one key (a key rotation starts the next run)."""

    key: str
    first: int
    last: int
    entries: int = 1

    @property
    def fingerprint(self) -> str:
        return parse_verifier_key(self.key).fingerprint

    def as_dict(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "verifier_key": self.key,
                "first": self.first, "last": self.last, "entries": self.entries}


@dataclass
class Walk:
    """What checking every entry gives the rest of verification."""

    tree: MemoryTree
    blob_users: dict[str, list[int]]
    signers: list[SignerRun]


def default_workers(entries: int) -> int:
    """Processes for checking ``entries``: one for a small ledger, else the usable cores (at most 4)."""
    if entries < PARALLEL_FROM:
        return 1
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))


def check_entries(home: Path, conn: Connection, chain: KeyChain, report_add: Report, workers: int) -> Walk:
    """Check every entry, report its problems in sequence order; the rebuilt tree, who uses which blob, and
    which keys signed which entries."""
    tree = MemoryTree()
    blob_users: dict[str, list[int]] = {}
    signers: list[SignerRun] = []
    expected = 0
    findings = _sequential(home, conn, chain) if workers <= 1 else _parallel(home, conn, chain, workers)
    for found in findings:
        if found.sequence != expected:
            missing = f"{expected}" if found.sequence == expected + 1 else f"{expected}..{found.sequence - 1}"
            report_add("entry-deleted", f"sequence {missing} missing before this entry", found.sequence)
        expected = found.sequence + 1
        tree.append(found.leaf)
        for kind, detail in found.problems:
            report_add(kind, detail, found.sequence)
        for digest in found.blobs:
            blob_users.setdefault(digest, []).append(found.sequence)
        if found.signer is None:
            continue
        if signers and signers[-1].key == found.signer:
            signers[-1].last, signers[-1].entries = found.sequence, signers[-1].entries + 1
        else:
            signers.append(SignerRun(found.signer, found.sequence, found.sequence))
    return Walk(tree, blob_users, signers)


Row = dict[str, Any]  # one row of ``battles``, by column name
_COLUMNS = ("sequence", "battle_id", "timestamp", "task_id", "status", "cis_score", "result_sha256", "raw_result",
            "dbom", "leaf_hash", "dbom_path")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM battles"


def _rows(db: sqlite3.Connection, where: str = "", params: Sequence[Any] = ()) -> Iterator[Row]:
    """Rows of ``battles`` in sequence order, read through sqlite3 itself (SQLAlchemy's row objects cost more
    than the rest of an entry's checks but its signature)."""
    for values in db.execute(f"{_SELECT} {where} ORDER BY sequence", params):
        yield dict(zip(_COLUMNS, values, strict=True))


def _driver(conn: Connection) -> sqlite3.Connection:
    """The sqlite3 connection under ``conn``: its reads see the same snapshot as the rest of ``verify``."""
    db = conn.connection.driver_connection
    assert isinstance(db, sqlite3.Connection)
    return db


def has_dbom_files(home: Path) -> bool:
    """Does ``dboms/`` hold anything (the files of entries an older release wrote, or files put there)? When
    not, the entry checks open no file: a ledger this release began has none."""
    try:
        with os.scandir(home / files.DBOM_DIR) as listing:
            return next(listing, None) is not None
    except (FileNotFoundError, NotADirectoryError):
        return False


def _sequential(
    home: Path, conn: Connection, chain: KeyChain, where: str = "", params: Sequence[Any] = ()
) -> Iterator[EntryFindings]:
    """Each entry in sequence order (those ``where`` selects), following the key rotations as they come."""
    with_files = has_dbom_files(home)
    for row in _rows(_driver(conn), where, params):
        found, document = check_entry(home, row, chain.signers(), with_files)
        rotation = follow_rotation(document, chain) if found.signed_ok and document is not None else None
        yield found if rotation is None else _with(found, rotation)


def _with(found: EntryFindings, extra: Finding) -> EntryFindings:
    return EntryFindings(found.sequence, found.leaf, [*found.problems, extra], found.blobs, found.signed_ok,
                         found.signer)


def follow_rotation(document: Mapping[str, Any], chain: KeyChain) -> Finding | None:
    """Adopt the new key a verified rotation entry names; a problem if it names none."""
    result = document.get("result")
    if not isinstance(result, dict) or result.get("kind") != ROTATION_STATUS:
        return None
    try:
        chain.adopt(parse_verifier_key(str(result.get("new_key"))))
    except LedgerError as exc:
        return ("malformed", f"key rotation names no valid new key: {exc}")
    return None


# -- the parallel path -------------------------------------------------------------------------------------------

Timeline = list[tuple[int, list[str]]]  # (after this sequence, the signers' encoded keys), in sequence order


def key_timeline(home: Path, conn: Connection, chain: KeyChain) -> tuple[Timeline, dict[int, Finding]]:
    """Replay the rotation entries in order, as the single-process walk would; when the signers change.

    Only an entry whose canonical JSON holds :data:`ROTATION_MARK` can change
    the chain (a rotation must verify, and a verified entry is canonical), so
    the other entries need not be read here. Also the problems of rotations
    that name no valid key, by sequence.
    """
    timeline: Timeline = [(-1, [k.encode() for k in chain.signers()])]
    rotation_problems: dict[int, Finding] = {}
    for row in _rows(_driver(conn), "WHERE instr(dbom, ?) > 0", (ROTATION_MARK,)):
        found, document = check_entry(home, row, chain.signers())
        if not found.signed_ok or document is None:
            continue
        before = chain.current
        problem = follow_rotation(document, chain)
        if problem is not None:
            rotation_problems[found.sequence] = problem
        if chain.current is not before:
            timeline.append((found.sequence, [k.encode() for k in chain.signers()]))
    return timeline, rotation_problems


def _parallel(home: Path, conn: Connection, chain: KeyChain, workers: int) -> Iterator[EntryFindings]:
    """This process and ``workers - 1`` worker processes check the entries in chunks; findings in sequence order.

    The workers start from the last chunk and this process from the first; whoever begins a chunk first
    takes it (:class:`Claims`), so this process never waits for a chunk no worker has begun, nor for one
    a worker began and has not finished (it checks that one too: see :func:`shared`). While the workers
    start (a second or more on a busy machine), or when they get no CPU, this process goes on alone.
    ``workers`` is the most processes used. This process first checks the first chunk alone, as one
    process would, and meanwhile measures how many cores the machine leaves idle (:func:`spare_cores`):
    as many workers start; with none (the cores are busy with other work, where a worker would only take
    CPU from this process), it goes on alone, exactly as with one process, at no extra cost.
    """
    db = _driver(conn)
    sequences = [int(s) for (s,) in db.execute("SELECT sequence FROM battles ORDER BY sequence")]
    ranges = [(sequences[i], sequences[min(i + CHUNK, len(sequences)) - 1]) for i in range(0, len(sequences), CHUNK)]
    if not ranges:
        return
    start = KeyChain(list(chain.given), chain.current, list(chain.held))
    before = cpu_times()
    yield from _sequential(home, conn, chain, "WHERE sequence <= ?", (ranges[0][1],))
    count = min(workers - 1, len(ranges) - 2, spare_cores(before, cpu_times(), workers - 1))
    if count < 1:  # nothing to share, or no core to spare: a worker would only slow this process down
        yield from _sequential(home, conn, chain, "WHERE sequence > ?", (ranges[0][1],))
        return
    chain.current, chain.held = start.current, start.held  # the rotations are replayed from the first entry
    timeline, rotation_problems = key_timeline(home, conn, chain)
    tasks = [(str(home), lo, hi, timeline) for lo, hi in ranges[1:]]
    context = multiprocessing.get_context("spawn")  # no fork: the caller may be a threaded app (the console)
    pool = ProcessPoolExecutor(max_workers=count, mp_context=context)
    try:
        with tempfile.TemporaryDirectory(prefix="ledger-verify-") as folder:
            claims = Claims(Path(folder))
            chunks = shared(pool, _check_claimed, lambda task: _check_rows(home, db, task), tasks, claims)
            yield from _with_rotations(chunks, rotation_problems)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a worker still starting finds nothing left and exits


CpuTimes = tuple[int, int]  # (idle, total) clock ticks of the whole machine
_MIN_WINDOW_TICKS = 20  # summed over the cores: shorter windows (a small ledger) say nothing; use what was asked


def cpu_times() -> CpuTimes | None:
    """Idle and total CPU ticks of the machine since boot (``/proc/stat``), or None where there is none."""
    try:
        with open("/proc/stat", "rb") as fh:
            fields = [int(v) for v in fh.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    return fields[3] + fields[4], sum(fields)  # idle and iowait count as idle


def spare_cores(before: CpuTimes | None, after: CpuTimes | None, wanted: int) -> int:
    """How many of ``wanted`` workers the machine had idle cores for between ``before`` and ``after``
    (``wanted`` when that cannot be told: no ``/proc``, or too short a window)."""
    if before is None or after is None or after[1] - before[1] < _MIN_WINDOW_TICKS:
        return wanted
    idle_share = (after[0] - before[0]) / (after[1] - before[1])
    idle_cores = idle_share * (os.cpu_count() or 1)
    return max(0, min(wanted, int(idle_cores + 0.25)))  # three quarters of an idle core is worth a worker


def _with_rotations(chunks: Iterable[list[EntryFindings]], problems: dict[int, Finding]) -> Iterator[EntryFindings]:
    for chunk in chunks:
        for found in chunk:
            problem = problems.get(found.sequence)
            yield found if problem is None else _with(found, problem)


class Claims:
    """Which tasks someone has begun, as files in a folder the workers share: creating a file that must not
    exist is atomic, so each task is taken once, in whichever process; a task of a finished run (the folder
    is gone) is taken by nobody."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def take(self, index: int) -> bool:
        """True for the first caller (in any process) to take task ``index``."""
        try:
            os.close(os.open(self.folder / str(index), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except (FileExistsError, FileNotFoundError):
            return False
        return True


T = TypeVar("T")
R = TypeVar("R")


def shared(
    pool: Executor, remote: Callable[[tuple[Claims, int, T]], R | None], here: Callable[[T], R], tasks: Sequence[T],
    claims: Claims,
) -> Iterator[R]:
    """The result of every task, in order. The pool's workers are given the tasks from the last one; this
    process goes from the first and runs here each task it can still take; ``remote`` runs a task only
    if it takes it (see :func:`_check_claimed`) and otherwise returns None. A task a worker took and has
    not finished when this process comes to it is run here as well, rather than waited for: a worker
    the machine gives no CPU never holds this process up by more than the task itself (tasks are pure,
    so either result is the same)."""
    futures = [pool.submit(remote, (claims, i, tasks[i])) for i in reversed(range(len(tasks)))]
    futures.reverse()
    for index, (task, future) in enumerate(zip(tasks, futures, strict=True)):
        if claims.take(index):
            future.cancel()
            yield here(task)
            continue
        if not future.done():
            yield here(task)
            continue
        result = future.result()
        if result is None:  # cannot happen: a worker took the task, and only then does it return nothing
            raise LedgerError(f"verification task {index} was lost by its worker")
        yield result


def _check_claimed(job: tuple[Claims, int, tuple[str, int, int, Timeline]]) -> list[EntryFindings] | None:
    """In a worker: the findings of one chunk, unless the verifying process took it first (then None)."""
    claims, index, task = job
    if not claims.take(index):
        return None
    return _check_range(task)


def _check_range(task: tuple[str, int, int, Timeline]) -> list[EntryFindings]:
    """The findings of the entries with sequence numbers ``lo..hi``, read through a connection of its own."""
    home = Path(task[0])
    db = sqlite3.connect(home / DB_FILE, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        db.execute("BEGIN")  # one snapshot for the chunk
        return _check_rows(home, db, task)
    finally:
        db.close()


def _check_rows(home: Path, db: sqlite3.Connection, task: tuple[str, int, int, Timeline]) -> list[EntryFindings]:
    """The findings of the entries with sequence numbers ``lo..hi``, each with the keys in force at it."""
    _, lo, hi, timeline = task
    keys = [[parse_verifier_key(text) for text in encoded] for _, encoded in timeline]
    with_files = has_dbom_files(home)
    out = []
    for row in _rows(db, "WHERE sequence >= ? AND sequence <= ?", (lo, hi)):
        sequence = int(row["sequence"])
        epoch = max(i for i, (after, _) in enumerate(timeline) if after < sequence)
        out.append(check_entry(home, row, keys[epoch], with_files)[0])
    return out


# -- one entry ---------------------------------------------------------------------------------------------------


def check_entry(
    home: Path, row: Row, signers: Sequence[VerifierKey], with_files: bool = True
) -> tuple[EntryFindings, dict[str, Any] | None]:
    """Every check of one row against the keys in force: leaf, canonical form, signature, columns, and (unless
    ``with_files`` is False: ``dboms/`` is empty) its DBOM file if there is one."""
    sequence = int(row["sequence"])
    problems: list[Finding] = []
    data = str(row["dbom"]).encode()
    leaf = leaf_hash(data)
    if leaf.hex() != row["leaf_hash"]:
        problems.append(("leaf-mismatch", "leaf_hash column is not SHA-256(0x00 ‖ dbom)"))
    document = _entry_document(data, problems)
    if document is None:
        return EntryFindings(sequence, leaf, problems, []), None
    if document.get("sequence") != sequence:
        problems.append(("sequence-mismatch", f"entry signed as sequence {document.get('sequence')}"))
    check = check_dbom(document, signers, data)
    problems += check.problems
    if problems and problems[0][0] == "leaf-mismatch" and check.problems:
        problems[0] = ("entry-edited", "the dbom column changed after it was signed: its bytes no longer hash "
                                       "to leaf_hash and sigma_judge does not verify")
    problems += _column_problems(row, document, check.result_bytes)
    blobs = [str(info.get("sha256")) for info in (document.get("inputs") or {}).values()]
    problems += _dbom_file_problems(home, str(row["dbom_path"]), document.get("battle_id"), data, with_files)
    signer = check.signer.encode() if check.signer is not None else None
    return EntryFindings(sequence, leaf, problems, blobs, signed_ok=not check.problems, signer=signer), document


def _entry_document(data: bytes, problems: list[Finding]) -> dict[str, Any] | None:
    try:
        document = parse(data)
    except (LedgerError, ValueError):
        problems.append(("malformed", "dbom column is not JSON"))
        return None
    if not isinstance(document, dict):
        problems.append(("malformed", "dbom column is not a JSON object"))
        return None
    return document


def _column_problems(row: Row, document: dict[str, Any], result_bytes: bytes | None) -> list[Finding]:
    problems: list[Finding] = []
    raw = str(row["raw_result"]).encode()
    if sha256_hex(raw) != row["result_sha256"]:
        problems.append(("result-edited", "raw_result does not hash to result_sha256"))
    if result_bytes is not None and result_bytes != raw:
        problems.append(("result-edited", "raw_result differs from the signed result"))
    for column, value in summary_columns(document).items():
        if row[column] != value:
            problems.append(("column-edited", f"{column} is {row[column]!r} but the signed entry says {value!r}"))
    return problems


def _dbom_file_problems(home: Path, rel: str, battle_id: object, data: bytes, with_files: bool) -> list[Finding]:
    try:
        expected = f"{files.DBOM_DIR}/{dbom_file_name(str(battle_id))}"
    except LedgerError:
        expected = None
    if rel != expected:
        return [("dbom-file", f"dbom_path {rel!r} is not the file named for this battle")]
    if not with_files:
        return []
    try:
        copy = files.read_up_to(home / rel, len(data) + 1)  # one byte more than the row tells a longer file
    except FileNotFoundError:
        return []  # a copy for convenience; the row is authoritative
    if copy != data and not (len(copy) < len(data) and data.startswith(copy)):
        # A strict prefix is a write torn by a crash (rewritten on the next open), not an edit.
        return [("dbom-file", f"{rel} differs from the signed entry in the database")]
    return []
