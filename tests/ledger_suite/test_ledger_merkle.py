"""RFC 9162 Merkle tree: every shared vector, and proofs cross-checked against a naive MTH."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ledger.merkle import (
    EMPTY_ROOT,
    MemoryTree,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).resolve().parents[1] / "data" / "merkle"


def _cases(kind: str) -> list[Any]:
    return [pytest.param(json.loads(p.read_text()), id=str(p.relative_to(VECTORS / kind)))
            for p in sorted((VECTORS / kind).rglob("*.json"))]


def _b64(value: str | None) -> bytes:
    return base64.b64decode(value) if value else b""


def test_vector_count() -> None:
    assert len(_cases("inclusion")) + len(_cases("consistency")) == 196


@pytest.mark.parametrize("case", _cases("inclusion"))
def test_inclusion_vectors(case: dict[str, Any]) -> None:
    ok = verify_inclusion(_b64(case["leafHash"]), case["leafIdx"], case["treeSize"],
                          [_b64(p) for p in case["proof"] or []], _b64(case["root"]))
    assert ok is not case["wantErr"], case["desc"]


@pytest.mark.parametrize("case", _cases("consistency"))
def test_consistency_vectors(case: dict[str, Any]) -> None:
    ok = verify_consistency(case["size1"], case["size2"], _b64(case["root1"]), _b64(case["root2"]),
                            [_b64(p) for p in case["proof"] or []])
    assert ok is not case["wantErr"], case["desc"]


def _naive_mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1 verbatim: the reference the stored-subtree code must match."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node_hash(_naive_mth(leaves[:k]), _naive_mth(leaves[k:]))


LEAVES = [leaf_hash(f"entry {i}".encode()) for i in range(70)]


def test_empty_tree_root_is_hash_of_nothing() -> None:
    assert root([]) == bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")


def test_leaf_and_node_prefixes() -> None:
    import hashlib

    assert leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert node_hash(b"a", b"b") == hashlib.sha256(b"\x01ab").digest()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 9, 31, 32, 33, 70])
def test_roots_and_proofs_agree_with_naive(size: int) -> None:
    tree = MemoryTree(LEAVES)
    assert tree.root(size) == root(LEAVES[:size]) == _naive_mth(LEAVES[:size])
    for index in range(size):
        proof = inclusion_proof(index, size, tree)
        assert verify_inclusion(LEAVES[index], index, size, proof, _naive_mth(LEAVES[:size]))
        assert not verify_inclusion(LEAVES[index], (index + 1) % size, size, proof, tree.root(size)) or size == 1
    for old in range(1, size + 1):
        proof = consistency_proof(old, size, tree)
        assert verify_consistency(old, size, tree.root(old), tree.root(size), proof)
        if old < size:
            assert not verify_consistency(old, size, tree.root(old), tree.root(size - 1) if size > 1 else EMPTY_ROOT,
                                          proof)


def test_proof_from_a_list_of_leaves() -> None:
    assert inclusion_proof(3, 9, LEAVES) == inclusion_proof(3, 9, MemoryTree(LEAVES[:9]))


def test_proof_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        inclusion_proof(5, 5, LEAVES[:5])
    with pytest.raises(ValueError):
        consistency_proof(6, 5, LEAVES[:5])


def test_missing_final_sn_check_would_accept_forgery() -> None:
    """A proof padded past the root must fail: the final ``sn == 0`` check is what rejects it."""
    tree = MemoryTree(LEAVES[:6])
    proof = inclusion_proof(4, 6, tree)
    assert verify_inclusion(LEAVES[4], 4, 6, proof, tree.root())
    assert not verify_inclusion(LEAVES[4], 4, 6, proof[:-1], tree.root())
    assert not verify_inclusion(LEAVES[4], 4, 6, [*proof, LEAVES[0]], tree.root())
