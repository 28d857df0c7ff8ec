"""The Merkle tree as the store keeps it: perfect-subtree hashes in the ``nodes`` table.

:class:`DbNodes` answers RFC 9162 roots and proofs from that table in
O(log² n) lookups; the *frontier* (the perfect subtrees that make up a tree of
n leaves, largest first) is all an append needs to add a leaf and compute the
new root.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Connection

from ledger.errors import LedgerError
from ledger.merkle import EMPTY_ROOT, node_hash

_NODE_QUERY = "SELECT hash FROM nodes WHERE level = ? AND idx = ?"  # plain SQL: a proof asks ~30 times


class DbNodes:
    """A :class:`ledger.merkle.NodeSource` over the ``nodes`` table, with a small read cache."""

    def __init__(self, conn: Connection, size: int) -> None:
        self._conn = conn
        self._size = size
        self._cache: dict[tuple[int, int], bytes] = {}

    def size(self) -> int:
        return self._size

    def perfect(self, level: int, index: int) -> bytes:
        key = (level, index)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        row = self._conn.exec_driver_sql(_NODE_QUERY, (level, index)).first()
        if row is None:
            raise LedgerError(f"ledger is missing Merkle node ({level}, {index}): run 'logomesh verify ledger'")
        value = bytes(row[0])
        self._cache[key] = value
        return value


def frontier_of(nodes: DbNodes, size: int) -> list[tuple[int, bytes]]:
    """The perfect subtrees that make up a tree of ``size`` leaves, largest first."""
    out: list[tuple[int, bytes]] = []
    start = 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size & (1 << level):
            out.append((level, nodes.perfect(level, start >> level)))
            start += 1 << level
    return out


def frontier_root(frontier: Sequence[tuple[int, bytes]]) -> bytes:
    if not frontier:
        return EMPTY_ROOT
    current = frontier[-1][1]
    for _, h in reversed(frontier[:-1]):
        current = node_hash(h, current)
    return current


def push_leaf(frontier: list[tuple[int, bytes]], size: int, leaf: bytes) -> list[tuple[int, int, bytes]]:
    """Add leaf number ``size``; returns the node rows it creates (the leaf and every completed parent), each
    as ``(level, idx, hash)``."""
    rows = [(0, size, leaf)]
    frontier.append((0, leaf))
    index = size
    while len(frontier) > 1 and frontier[-1][0] == frontier[-2][0]:
        level, right = frontier.pop()
        _, left = frontier.pop()
        index >>= 1
        parent = node_hash(left, right)
        frontier.append((level + 1, parent))
        rows.append((level + 1, index, parent))
    return rows
