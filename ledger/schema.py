"""The SQLite schema (SQLModel) and connection set-up of ``battles.db``.

Keeps the paper's names: the entry table is ``battles`` and each row holds the
canonical result in ``raw_result`` beside its hash. Every table is append-only:
triggers abort UPDATE and DELETE. The triggers are a tripwire, not the
security: whoever can drop them can edit rows, which ``verify`` then catches
through the hashes, signatures and checkpoints.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Engine, LargeBinary, Table, create_engine, event
from sqlalchemy.engine import Connection
from sqlmodel import Field, SQLModel

WRITE_OPTION = "logomesh_write"
BUSY_TIMEOUT_MS = 120_000


class Battle(SQLModel, table=True):
    """One ledger entry: a leaf of the Merkle tree."""

    __tablename__ = "battles"

    sequence: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    battle_id: str = Field(unique=True)
    timestamp: str
    task_id: str | None = None
    status: str | None = None
    cis_score: float | None = None
    result_sha256: str
    raw_result: str = Field(description="canonical JSON (RFC 8785) of the result Δ")
    dbom: str = Field(description="canonical JSON of the signed DBOM: the Merkle leaf data")
    leaf_hash: str
    dbom_path: str


class Blob(SQLModel, table=True):
    """A raw input, addressed by its SHA-256."""

    __tablename__ = "blobs"

    sha256: str = Field(primary_key=True)
    size: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class Node(SQLModel, table=True):
    """The hash of the perfect subtree at ``level`` covering leaves ``[idx·2^level, (idx+1)·2^level)``."""

    __tablename__ = "nodes"

    level: int = Field(primary_key=True)
    idx: int = Field(primary_key=True)
    hash: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class CheckpointRow(SQLModel, table=True):
    """A signed tree head, in the order the log produced them."""

    __tablename__ = "checkpoints"

    id: int | None = Field(default=None, primary_key=True)
    size: int = Field(index=True)
    root: str
    note: str
    timestamp: str


class Meta(SQLModel, table=True):
    """Facts about the log itself: its origin and the judge keys it trusts."""

    __tablename__ = "meta"

    key: str = Field(primary_key=True)
    value: str


MODELS: tuple[type[SQLModel], ...] = (Battle, Blob, Node, CheckpointRow, Meta)
APPEND_ONLY = ("battles", "blobs", "nodes", "checkpoints", "meta")


def table(name: str) -> Table:
    return SQLModel.metadata.tables[name]


def trigger_names() -> list[str]:
    return [f"{t}_no_{op}" for t in APPEND_ONLY for op in ("update", "delete")]


def _trigger_statement(table_name: str, op: str, if_not_exists: str = "") -> str:
    return (f"CREATE TRIGGER {if_not_exists}{table_name}_no_{op} BEFORE {op.upper()} ON {table_name} "
            f"BEGIN SELECT RAISE(ABORT, '{table_name} is append-only'); END")


def trigger_sql() -> list[str]:
    return [_trigger_statement(t, op, "IF NOT EXISTS ") for t in APPEND_ONLY for op in ("update", "delete")]


def expected_triggers() -> dict[str, str]:
    """Each append-only trigger's name and its SQL as ``sqlite_master`` keeps it, whitespace normalised.

    SQLite stores the CREATE statement as written, less ``IF NOT EXISTS``.
    """
    return {f"{t}_no_{op}": _normalise(_trigger_statement(t, op)) for t in APPEND_ONLY for op in ("update", "delete")}


def _normalise(sql: str) -> str:
    return " ".join(sql.split())


def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # transactions are begun explicitly, see _on_begin
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def _on_begin(conn: Connection) -> None:
    """Writers take the database write lock up front, so two appenders cannot both read size n."""
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")


def make_engine(path: Path) -> Engine:
    # A pooled connection stays open between appends: closing the last connection to a WAL database
    # checkpoints and truncates the WAL, which would cost several fsyncs per append.
    engine = create_engine(f"sqlite:///{path}", pool_size=1, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def create_schema(engine: Engine) -> None:
    """Create the tables and triggers of a new ledger; an existing one is left as found.

    Triggers are never silently re-created on an existing file: a missing one
    is evidence, reported by ``verify`` and refused by ``Ledger.open``.
    """
    with engine.connect() as conn, conn.execution_options(**{WRITE_OPTION: True}).begin():
        exists = conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'battles'").first()
        if exists is not None:
            return
        SQLModel.metadata.create_all(conn, tables=[table(m) for m in APPEND_ONLY])
        for sql in trigger_sql():
            conn.exec_driver_sql(sql)


def trigger_problems(conn: Connection) -> list[tuple[str, str]]:
    """``(kind, detail)`` for every append-only trigger that is missing or whose SQL is not the store's, and
    for every trigger the store never creates (one could, say, silently drop new entries)."""
    found = {str(name): str(sql or "") for name, sql in
             conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")}
    problems: list[tuple[str, str]] = []
    for name, wanted in expected_triggers().items():
        if name not in found:
            problems.append(("trigger-removed", f"trigger {name} is missing"))
        elif _normalise(found[name]) != wanted:
            problems.append(("trigger-altered", f"trigger {name} is not the store's: it runs "
                                                f"{_normalise(found[name])[:160]!r}"))
    for name in sorted(set(found) - set(expected_triggers())):
        problems.append(("trigger-added", f"trigger {name} is not one the store creates: "
                                          f"{_normalise(found[name])[:160]!r}"))
    return problems
