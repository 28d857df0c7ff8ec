"""The compliance bundle: one battle's DBOM with everything needed to check it offline.

A bundle holds the signed DBOM (entry + DSSE envelope), its RFC 9162 inclusion
proof, the signed checkpoint the proof is against, and the judge's public key.
With the bundle and a public key obtained independently, an auditor checks the
signature, ``H(Δ)``, the leaf hash, the inclusion proof and the checkpoint
signature — no database, no network.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledger.canonical import canonicalize
from ledger.checkpoint import CheckpointError, open_checkpoint
from ledger.dbom import dbom_problems
from ledger.errors import LedgerError
from ledger.keys import VerifierKey, parse_verifier_key
from ledger.merkle import leaf_hash, verify_inclusion

BUNDLE_FORMAT = "logomesh-bundle/1"


@dataclass(frozen=True)
class BundleCheck:
    battle_id: str
    sequence: int
    result_sha256: str
    tree_size: int
    key: str
    key_from_bundle: bool
    problems: list[tuple[str, str]]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "battle_id": self.battle_id, "sequence": self.sequence,
            "result_sha256": self.result_sha256, "tree_size": self.tree_size, "public_key": self.key,
            "key_from_bundle": self.key_from_bundle,
            "problems": [{"kind": k, "detail": d} for k, d in self.problems],
        }


def make_bundle(document: Mapping[str, Any], proof: list[bytes], tree_size: int, note: str,
                key: VerifierKey, chain: Sequence[str] = ()) -> dict[str, Any]:
    """``chain`` lists every judge key the log has had (older entries are signed by older keys)."""
    return {
        "format": BUNDLE_FORMAT,
        "battle_id": document["battle_id"],
        "sequence": document["sequence"],
        "dbom": dict(document),
        "inclusion_proof": {
            "leaf_index": document["sequence"],
            "tree_size": tree_size,
            "hashes": [base64.b64encode(h).decode() for h in proof],
        },
        "checkpoint": note,
        "public_key": key.encode(),
        "public_keys": list(chain) or [key.encode()],
    }


def verify_bundle(bundle: Mapping[str, Any], pubkeys: Sequence[VerifierKey] = ()) -> BundleCheck:
    """Check a bundle against the auditor's ``pubkeys``; without any, the bundle's own keys (flagged as such)."""
    if bundle.get("format") != BUNDLE_FORMAT:
        raise LedgerError(f"not a LogoMesh bundle (format {bundle.get('format')!r}, expected {BUNDLE_FORMAT!r})")
    try:
        document = dict(bundle["dbom"])
        proof_obj = dict(bundle["inclusion_proof"])
        index, size = int(proof_obj["leaf_index"]), int(proof_obj["tree_size"])
        hashes = [base64.b64decode(h, validate=True) for h in proof_obj["hashes"]]
        note = str(bundle["checkpoint"])
        keys = list(pubkeys) or [parse_verifier_key(str(k)) for k in bundle.get("public_keys") or
                                 [bundle["public_key"]]]
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise LedgerError(f"malformed bundle: {exc}") from None
    problems = list(dbom_problems(document, keys))
    if index != document.get("sequence"):
        problems.append(("sequence-mismatch", f"proof is for leaf {index}, the entry says {document.get('sequence')}"))
    try:
        checkpoint = open_checkpoint(note, keys)
    except CheckpointError as exc:
        problems.append(("checkpoint-signature", str(exc)))
    else:
        if checkpoint.size != size:
            problems.append(("inclusion", f"proof is for a tree of {size}, the checkpoint has {checkpoint.size}"))
        elif not verify_inclusion(leaf_hash(canonicalize(document)), index, size, hashes, checkpoint.root):
            problems.append(("inclusion", "the inclusion proof does not lead to the checkpoint's root"))
    return BundleCheck(
        battle_id=str(document.get("battle_id")), sequence=index, result_sha256=str(document.get("result_sha256")),
        tree_size=size, key=", ".join(k.encode() for k in keys), key_from_bundle=not pubkeys, problems=problems,
    )
