"""RFC 6962 Merkle tree hash (MTH) over a list of byte strings."""

from __future__ import annotations

import hashlib
from typing import List, Sequence

_LEAF = b"\x00"
_NODE = b"\x01"


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) as defined in RFC 6962 section 2.1.

    Leaves are hashed once with the 0x00 prefix; the tree is then reduced with
    the 0x01 node prefix, splitting at the largest power of two below n. The
    split makes the tree left-heavy and never duplicates a node, unlike
    Bitcoin-style trees.
    """
    hashes: List[bytes] = []
    for leaf in leaves:
        if not isinstance(leaf, (bytes, bytearray)):
            raise TypeError(f"leaves must be bytes, got {type(leaf).__name__}")
        hashes.append(hashlib.sha256(_LEAF + bytes(leaf)).digest())
    if not hashes:
        return hashlib.sha256(b"").digest()
    return _subtree(hashes, 0, len(hashes))


def _subtree(hashes: List[bytes], start: int, end: int) -> bytes:
    n = end - start
    if n == 1:
        return hashes[start]
    k = 1 << ((n - 1).bit_length() - 1)  # largest power of two strictly below n
    left = _subtree(hashes, start, start + k)
    right = _subtree(hashes, start + k, end)
    return hashlib.sha256(_NODE + left + right).digest()
