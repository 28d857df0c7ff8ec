"""The RFC 9162 §2.1 Merkle tree over SHA-256: hashes, proofs and their verifiers.

Trees are read through a :class:`NodeSource`, which answers only for *perfect*
subtrees aligned on their size (level ``k``, index ``i`` covers leaves
``[i·2^k, (i+1)·2^k)``). Every subtree the RFC's recursions visit is either such
a perfect subtree or a run of them along the right edge, so a store that keeps
the perfect subtrees (about 2n hashes) answers any root or proof in O(log² n)
lookups instead of rehashing n leaves. :class:`MemoryTree` is the in-memory
source; the SQLite store keeps the same hashes in its ``nodes`` table.

The verifiers transcribe RFC 9162 §2.1.3.2 and §2.1.4.2 step by step, including
the final ``sn == 0`` checks whose omission accepts forged proofs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

HASH_SIZE = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """``MTH({d}) = SHA-256(0x00 || d)``."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """``SHA-256(0x01 || left || right)``."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


class NodeSource(Protocol):
    """Hashes of perfect, aligned subtrees of a tree of at least ``size()`` leaves."""

    def size(self) -> int: ...

    def perfect(self, level: int, index: int) -> bytes: ...


class MemoryTree:
    """A tree held in memory, keeping every perfect subtree hash as leaves arrive."""

    def __init__(self, leaf_hashes: Sequence[bytes] = ()) -> None:
        self.levels: list[list[bytes]] = [[]]
        for leaf in leaf_hashes:
            self.append(leaf)

    def size(self) -> int:
        return len(self.levels[0])

    def append(self, leaf: bytes) -> None:
        """Add one leaf hash and every perfect subtree it completes."""
        self.levels[0].append(leaf)
        level, index, current = 0, len(self.levels[0]) - 1, leaf
        while index & 1:
            current = node_hash(self.levels[level][index - 1], current)
            level, index = level + 1, index >> 1
            if len(self.levels) == level:
                self.levels.append([])
            self.levels[level].append(current)

    def perfect(self, level: int, index: int) -> bytes:
        return self.levels[level][index]

    def root(self, size: int | None = None) -> bytes:
        return root_from(self, self.size() if size is None else size)


def _largest_power_of_two_below(n: int) -> int:
    """The ``k`` of RFC 9162: the largest power of two strictly smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _source(nodes: NodeSource | Sequence[bytes]) -> NodeSource:
    if isinstance(nodes, MemoryTree):
        return nodes
    if isinstance(nodes, Sequence):
        return MemoryTree(nodes)
    return nodes


def range_hash(nodes: NodeSource, start: int, end: int) -> bytes:
    """``MTH(D[start:end])`` for a range whose start is aligned, as every RFC recursion's is.

    The range splits into perfect subtrees by the binary digits of its length,
    largest first; MTH folds them from the right.
    """
    if end <= start:
        return EMPTY_ROOT
    parts: list[bytes] = []
    position, remaining = start, end - start
    while remaining:
        level = remaining.bit_length() - 1
        if position % (1 << level):
            raise ValueError(f"range [{start}, {end}) is not aligned")
        parts.append(nodes.perfect(level, position >> level))
        position += 1 << level
        remaining -= 1 << level
    current = parts.pop()
    while parts:
        current = node_hash(parts.pop(), current)
    return current


def root_from(nodes: NodeSource, size: int) -> bytes:
    """The root of the first ``size`` leaves of ``nodes``."""
    if size > nodes.size():
        raise ValueError(f"tree has {nodes.size()} leaves, not {size}")
    return range_hash(nodes, 0, size)


def root(leaf_hashes: Sequence[bytes]) -> bytes:
    """``MTH(D[n])`` of a list of leaf hashes; SHA-256 of nothing for the empty tree."""
    return range_hash(MemoryTree(leaf_hashes), 0, len(leaf_hashes))


def inclusion_proof(index: int, size: int, nodes: NodeSource | Sequence[bytes]) -> list[bytes]:
    """``PATH(m, D[n])`` of RFC 9162 §2.1.3.1, leaf first."""
    src = _source(nodes)
    if not 0 <= index < size <= src.size():
        raise ValueError(f"no inclusion proof for leaf {index} in a tree of {size} (log has {src.size()})")
    proof: list[bytes] = []
    start, n, m = 0, size, index
    while n > 1:
        k = _largest_power_of_two_below(n)
        if m < k:
            proof.append(range_hash(src, start + k, start + n))
            n = k
        else:
            proof.append(range_hash(src, start, start + k))
            start, n, m = start + k, n - k, m - k
    proof.reverse()
    return proof


def consistency_proof(old_size: int, new_size: int, nodes: NodeSource | Sequence[bytes]) -> list[bytes]:
    """``PROOF(m, D[n])`` of RFC 9162 §2.1.4.1; empty when ``m`` is 0 or equals ``n``."""
    src = _source(nodes)
    if not 0 <= old_size <= new_size <= src.size():
        raise ValueError(f"no consistency proof from {old_size} to {new_size} (log has {src.size()})")
    if old_size in (0, new_size):
        return []
    proof: list[bytes] = []
    start, n, m, whole = 0, new_size, old_size, True
    while m != n:
        k = _largest_power_of_two_below(n)
        if m <= k:
            proof.append(range_hash(src, start + k, start + n))
            n = k
        else:
            proof.append(range_hash(src, start, start + k))
            start, n, m, whole = start + k, n - k, m - k, False
    if not whole:
        proof.append(range_hash(src, start, start + n))
    proof.reverse()
    return proof


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], root_hash: bytes) -> bool:
    """RFC 9162 §2.1.3.2: does ``proof`` place ``leaf`` at ``index`` of the tree with ``root_hash``?"""
    # 1. Compare leaf_index against tree_size. If leaf_index >= tree_size, fail.
    if index < 0 or index >= size:
        return False
    if any(len(p) != HASH_SIZE for p in proof) or len(leaf) != HASH_SIZE:
        return False
    # 2. Set fn to leaf_index and sn to tree_size - 1.  3. Set r to hash.
    fn, sn, r = index, size - 1, leaf
    # 4. For each value p in the inclusion_path array:
    for p in proof:
        # a. If sn is 0, then stop the iteration and fail the proof verification.
        if sn == 0:
            return False
        # b. If LSB(fn) is set, or if fn is equal to sn, then:
        if fn & 1 or fn == sn:
            # 1. Set r to HASH(0x01 || p || r).
            r = node_hash(p, r)
            # 2. If LSB(fn) is not set, right-shift fn and sn equally until LSB(fn) is set or fn is 0.
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            # Otherwise: set r to HASH(0x01 || r || p).
            r = node_hash(r, p)
        # c. Finally, right-shift both fn and sn one time.
        fn >>= 1
        sn >>= 1
    # 5. Compare sn to 0 and r against root_hash: both must hold.
    return sn == 0 and r == root_hash


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 §2.1.4.2: is the tree (``new_size``, ``new_root``) an append-only extension of the old one?

    The RFC leaves the trivial cases to the caller. Equal sizes need an empty
    proof and equal roots; a proof from the empty tree proves nothing and is
    refused (every tree extends the empty one), as the shared vectors require.
    """
    if old_size <= 0 or new_size < old_size:
        return False
    if any(len(p) != HASH_SIZE for p in proof):
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    # 1. If consistency_path is an empty array, stop and fail the proof verification.
    if not proof:
        return False
    path = list(proof)
    # 2. If first is an exact power of 2, then prepend first_hash to the consistency_path array.
    if old_size & (old_size - 1) == 0:
        path.insert(0, old_root)
    # 3. Set fn to first - 1 and sn to second - 1.
    fn, sn = old_size - 1, new_size - 1
    # 4. If LSB(fn) is set, then right-shift both fn and sn equally until LSB(fn) is not set.
    while fn & 1:
        fn >>= 1
        sn >>= 1
    # 5. Set both fr and sr to the first value in the consistency_path array.
    fr = sr = path[0]
    # 6. For each subsequent value c in the consistency_path array:
    for c in path[1:]:
        # a. If sn is 0, then stop the iteration and fail the proof verification.
        if sn == 0:
            return False
        # b. If LSB(fn) is set, or if fn is equal to sn, then:
        if fn & 1 or fn == sn:
            # 1. Set fr to HASH(0x01 || c || fr). Set sr to HASH(0x01 || c || sr).
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            # 2. If LSB(fn) is not set, then right-shift both fn and sn equally until either LSB(fn) is set or fn is 0.
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            # Otherwise: set sr to HASH(0x01 || sr || c).
            sr = node_hash(sr, c)
        # c. Finally, right-shift both fn and sn one time.
        fn >>= 1
        sn >>= 1
    # 7. After completing iterating through the consistency_path array as described above, verify that the fr
    #    calculated is equal to the first_hash supplied, that the sr calculated is equal to the second_hash
    #    supplied and that sn is 0.
    return fr == old_root and sr == new_root and sn == 0
