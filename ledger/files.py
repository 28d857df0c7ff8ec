"""The copies that live outside the database: checkpoint notes, and the DBOM files of older ledgers.

``checkpoints/latest`` holds the newest signed note; ``checkpoints/history.jsonl``
appends every note the log signs, one JSON object per line. An attacker who
rewrites ``battles.db`` must also rewrite these, and anything an auditor saved.

Releases before the ``dbom_files_until`` meta row also wrote each entry's DBOM to
``dboms/<battle_id>.json``; a ledger opened by this release records in that row how
many entries have one, and appends write none (the row's ``dbom`` column holds the
same bytes, and the checkpoints outside already commit to them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CHECKPOINT_DIR = "checkpoints"
DBOM_DIR = "dboms"
LATEST_FILE = "latest"
HISTORY_FILE = "history.jsonl"
_TMP_SUFFIX = ".tmp"
DBOM_FILES_UNTIL = "dbom_files_until"  # meta key: entries below this sequence have a file in dboms/


def is_temporary(name: str) -> bool:
    """A file :func:`write_atomic` was writing (a crash can leave one behind), not a copy of anything."""
    return name.startswith(".") and name.endswith(_TMP_SUFFIX)


def write_atomic(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}{_TMP_SUFFIX}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_new(path: Path, data: bytes) -> None:
    """Write a file that should not exist yet (a DBOM); one a crash tore is rewritten on the next open."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # what open(path, "wb") does, less its buffer
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_up_to(path: Path, limit: int) -> bytes:
    """The first ``limit`` bytes of ``path`` (all of it when shorter), without ``open``'s buffered file object."""
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = []
        while limit > 0:
            part = os.read(fd, limit)
            if not part:
                break
            parts.append(part)
            limit -= len(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def append_history(checkpoints_dir: Path, notes: list[tuple[int, str]]) -> None:
    """Append ``(size, note)`` records to the history (one write; a crash can only tear the last line)."""
    if not notes:
        return
    lines = "".join(json.dumps({"size": size, "note": note}, ensure_ascii=False) + "\n" for size, note in notes)
    with open(checkpoints_dir / HISTORY_FILE, "a+b") as fh:
        if fh.seek(0, os.SEEK_END) > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                lines = "\n" + lines  # close a line torn by a crash so the new record parses
        fh.write(lines.encode("utf-8"))


def read_history(checkpoints_dir: Path) -> list[tuple[int, str]]:
    """Every ``(size, note)`` in the history file; a torn last line (a crash mid-write) is skipped."""
    path = checkpoints_dir / HISTORY_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
            records.append((int(obj["size"]), str(obj["note"])))
        except (ValueError, KeyError, TypeError):
            continue
    return records


def last_history_size(checkpoints_dir: Path) -> int:
    """Size of the newest note in the history, reading only the file's tail."""
    path = checkpoints_dir / HISTORY_FILE
    if not path.exists():
        return -1
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        fh.seek(max(0, end - 65536))
        tail = fh.read().decode("utf-8", errors="replace").splitlines()
    for line in reversed(tail):
        try:
            return int(json.loads(line)["size"])
        except (ValueError, KeyError, TypeError):
            continue
    return -1
