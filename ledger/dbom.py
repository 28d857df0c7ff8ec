"""The Decision Bill of Materials: one signed, input-entangled record per battle.

The *entry* names the battle, its result Δ, ``H(Δ)``, the hash and size of
every raw input and the other facts the score depends on. ``σ_judge`` is a DSSE
envelope (payload type ``application/vnd.in-toto+json``) over an in-toto
Statement v1 whose subject is the result digest and whose predicate is the
entry. The DBOM document is the entry plus ``sigma_judge``; its canonical JSON
is the Merkle leaf, so the tree commits to the signature as well.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import math
import re
import struct
import sys
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledger.canonical import canonical_object, canonicalize, member_bytes, plain_string_bytes, sha256_hex
from ledger.errors import LedgerError
from ledger.keys import SignerKey, VerifierKey

SCHEMA = "logomesh-dbom/3"
# /1 held the intent vector as a JSON array of numbers, /2 its float32 bytes; neither names its signing key.
LEGACY_SCHEMAS = frozenset({"logomesh-dbom/1", "logomesh-dbom/2"})
JUDGE_KEY_FIELD = "judge_key"  # from /3: the fingerprint of the key that signs the entry
VECTOR_ENCODING = "float32-le-base64"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://logomesh.dev/dbom/v1"
SIGNATURE_FIELD = "sigma_judge"
_BATTLE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")  # whole ids only: fullmatch
_HEX64 = re.compile(r"[0-9a-f]{64}")  # a SHA-256 digest as the entries write it
_SUBJECT = b'[{"digest":{"sha256":"%s"},"name":"battle:%s"}]'  # canonical: sorted keys, nothing to escape


def check_battle_id(battle_id: str) -> str:
    """Accept ids that are safe as a file name under ``dboms/``; refuse anything that could escape it."""
    if not isinstance(battle_id, str) or not _BATTLE_ID_RE.fullmatch(battle_id):
        raise LedgerError(
            f"bad battle id {battle_id!r}: use 1-128 letters, digits, '.', '_', ':' or '-', "
            "starting with a letter or digit"
        )
    return battle_id


def dbom_file_name(battle_id: str) -> str:
    return f"{check_battle_id(battle_id)}.json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what is actually signed."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def input_digests(inputs: Mapping[str, bytes]) -> dict[str, dict[str, Any]]:
    return {name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)} for name, data in inputs.items()}


def build_entry(
    *,
    sequence: int,
    battle_id: str,
    timestamp: str,
    result: Mapping[str, Any],
    inputs: Mapping[str, bytes],
    attributes: Mapping[str, str],
    intent_vector: Sequence[float] | None,
    result_bytes: bytes | None = None,
) -> dict[str, Any]:
    """The unsigned entry; raises :class:`LedgerError` on values that cannot be recorded faithfully.

    ``result_bytes``, when the caller already has them, are the canonical bytes of ``result``.
    """
    check_battle_id(battle_id)
    if result.get("battle_id", battle_id) != battle_id:
        raise LedgerError(f"result is for battle {result.get('battle_id')!r}, not {battle_id!r}")
    for name, value in attributes.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise LedgerError(f"attribute {name!r} must map a string to a string")
    for name, data in inputs.items():
        if not isinstance(data, bytes | bytearray):
            raise LedgerError(f"input {name!r} must be bytes")
    vector = None if intent_vector is None else encode_vector(intent_vector)
    result_obj = dict(result)
    return {
        "schema": SCHEMA,
        "sequence": sequence,
        "battle_id": battle_id,
        "timestamp": timestamp,
        "task_id": result_obj.get("task_id"),
        "status": result_obj.get("status"),
        "result": result_obj,
        "result_sha256": sha256_hex(result_bytes if result_bytes is not None else canonicalize(result_obj)),
        "intent_vector": vector,
        "inputs": input_digests({k: bytes(v) for k, v in inputs.items()}),
        "attributes": dict(attributes),
    }


def encode_vector(values: Sequence[float]) -> dict[str, Any]:
    """The intent vector as an entry holds it: float32, little-endian, base64.

    The embedding model computes in float32, so every bit it produced is kept, where JSON numbers
    rounded to 6 decimals kept three significant digits of a small component. 384 dimensions take
    2 KB instead of ~3.5 KB, twice per entry (the signed statement repeats the entry), and a string
    costs next to nothing to canonicalize and parse where 384 numbers cost ~0.5 µs each.
    """
    return {"encoding": VECTOR_ENCODING, "dimensions": len(values), "data": _vector_text(_native_float32(values))}


def _native_float32(values: Sequence[float]) -> bytes:
    """``array("f", values).tobytes()``; ``struct`` packs the same bytes (the same C cast to float) in a third
    of the time, and whatever it refuses (a value beyond float32's range, a non-number) goes to ``array``."""
    try:
        return struct.pack(f"{len(values)}f", *values)
    except (struct.error, OverflowError, TypeError):
        pass
    try:
        return array("f", values).tobytes()
    except (TypeError, OverflowError):
        raise LedgerError("intent vector must be a sequence of real numbers") from None


@functools.lru_cache(maxsize=256)
def _vector_text(native: bytes) -> str:
    """Checked and encoded once per distinct vector (every battle of a task carries the task's vector)."""
    packed = array("f", native)
    if not all(map(math.isfinite, packed)):
        raise LedgerError("intent vector holds NaN, infinity or a value beyond float32's range")
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode()


def decode_vector(stored: Any) -> list[float] | None:
    """The intent vector of an entry of either schema (a JSON array in /1, :func:`encode_vector`'s object in /2)."""
    if stored is None or isinstance(stored, list):
        return stored
    if not isinstance(stored, dict) or stored.get("encoding") != VECTOR_ENCODING:
        raise LedgerError(f"intent vector in an unknown encoding: {str(stored)[:80]}")
    try:
        packed = array("f", base64.b64decode(str(stored["data"]), validate=True))
    except (KeyError, ValueError, binascii.Error):
        raise LedgerError("intent vector data is not base64 of float32 values") from None
    if sys.byteorder == "big":
        packed.byteswap()
    if len(packed) != stored.get("dimensions"):
        raise LedgerError(f"intent vector holds {len(packed)} values, its entry says {stored.get('dimensions')}")
    return packed.tolist()


def statement(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The in-toto Statement v1 that ``σ_judge`` signs."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": _subject(entry),
        "predicateType": PREDICATE_TYPE,
        "predicate": dict(entry),
    }


def _subject(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"name": f"battle:{entry.get('battle_id')}", "digest": {"sha256": entry.get("result_sha256")}}]


def entry_members(entry: Mapping[str, Any], result_bytes: bytes) -> dict[str, bytes]:
    """Canonical bytes of each field of the entry (signature excluded), the result given."""
    return {k: result_bytes if k == "result" else member_bytes(v) for k, v in entry.items() if k != SIGNATURE_FIELD}


def statement_bytes(entry: Mapping[str, Any], entry_bytes: bytes, subject_bytes: bytes | None = None) -> bytes:
    """``canonicalize(statement(entry))``, composed from the entry's canonical bytes."""
    return canonical_object({
        "_type": member_bytes(STATEMENT_TYPE),
        "predicate": entry_bytes,
        "predicateType": member_bytes(PREDICATE_TYPE),
        "subject": subject_bytes if subject_bytes is not None else _subject_bytes(entry),
    })


def _subject_bytes(entry: Mapping[str, Any]) -> bytes:
    """``canonicalize(_subject(entry))``: written out directly when the battle id and the digest are of the kind
    that needs no escaping (as every entry the ledger writes has), else by the general canonicalizer."""
    battle_id, digest = entry.get("battle_id"), entry.get("result_sha256")
    if (type(battle_id) is str and type(digest) is str
            and _BATTLE_ID_RE.fullmatch(battle_id) and _HEX64.fullmatch(digest)):
        return _SUBJECT % (digest.encode(), battle_id.encode())
    return canonicalize(_subject(entry))


def _signing_subject_bytes(battle_id: str, result_sha256: str) -> bytes:
    """Canonical subject for values the signer has validated (a safe battle id, a hex digest): no escaping needed.

    ``verify`` rebuilds the same bytes with :func:`_subject_bytes`, whose checks are its own, so any
    divergence between the two shows up as a failed verification.
    """
    check_battle_id(battle_id)
    if not _HEX64.fullmatch(result_sha256):
        raise LedgerError("result_sha256 must be 64 lowercase hex digits")
    return _SUBJECT % (result_sha256.encode(), battle_id.encode())


def _signed_envelope_bytes(envelope: Mapping[str, Any]) -> bytes:
    """Canonical bytes of an envelope :func:`sign_envelope` made (base64, hex and a fixed type: nothing to escape)."""
    (signature,) = envelope["signatures"]
    return b'{"payload":"%s","payloadType":"%s","signatures":[{"keyid":"%s","sig":"%s"}]}' % (
        envelope["payload"].encode(), PAYLOAD_TYPE.encode(), signature["keyid"].encode(), signature["sig"].encode())


def envelope_bytes(envelope: Mapping[str, Any]) -> bytes:
    """``canonicalize(envelope)``; an envelope of the shape :func:`sign_envelope` makes, whose strings need no
    escaping, is written without JSON's escaper (its base64 payload is most of an entry)."""
    if type(envelope) is dict and envelope.keys() == {"payload", "payloadType", "signatures"}:
        signatures = envelope["signatures"]
        if type(signatures) is list and len(signatures) == 1:
            (signature,) = signatures
            if type(signature) is dict and signature.keys() == {"keyid", "sig"}:
                fields = (envelope["payload"], envelope["payloadType"], signature["keyid"], signature["sig"])
                parts = [plain_string_bytes(f) if type(f) is str else None for f in fields]
                if None not in parts:
                    return b'{"payload":%s,"payloadType":%s,"signatures":[{"keyid":%s,"sig":%s}]}' % tuple(parts)
    return canonicalize(envelope)


def sign_envelope(payload: bytes, key: SignerKey) -> dict[str, Any]:
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": key.verifier.key_id_hex, "sig": base64.b64encode(signature).decode()}],
    }


@dataclass(frozen=True)
class SignedEntry:
    """A signed DBOM and its canonical forms: ``leaf_data`` is the Merkle leaf, ``result_bytes`` is Δ."""

    document: dict[str, Any]
    result_bytes: bytes
    leaf_data: bytes


def sign_encoded(entry: Mapping[str, Any], key: SignerKey, result_bytes: bytes | None = None) -> SignedEntry:
    """Sign ``entry`` and build its leaf, canonicalizing the result once.

    An entry of the current schema is signed with the fingerprint of ``key`` in ``judge_key``: what is
    signed names who signed it, so a swapped public key cannot pass for the one the ledger was written with.
    """
    if entry.get("schema") not in LEGACY_SCHEMAS:
        entry = {**entry, JUDGE_KEY_FIELD: key.verifier.fingerprint}
    if result_bytes is None:
        result_bytes = canonicalize(entry["result"])
    members = entry_members(entry, result_bytes)
    subject = _signing_subject_bytes(entry["battle_id"], entry["result_sha256"])
    envelope = sign_envelope(statement_bytes(entry, canonical_object(members), subject), key)
    leaf_data = canonical_object({**members, SIGNATURE_FIELD: _signed_envelope_bytes(envelope)})
    return SignedEntry({**entry, SIGNATURE_FIELD: envelope}, result_bytes, leaf_data)


def sign_entry(entry: Mapping[str, Any], key: SignerKey) -> dict[str, Any]:
    """The DBOM document: the entry plus its DSSE envelope under ``sigma_judge``."""
    return sign_encoded(entry, key).document


def envelope_payload(envelope: Mapping[str, Any]) -> bytes:
    try:
        return base64.b64decode(str(envelope["payload"]), validate=True)
    except (KeyError, binascii.Error):
        raise LedgerError("DSSE envelope has no valid base64 payload") from None


def _payload_or_error(envelope: Mapping[str, Any], expected: bytes | None = None) -> bytes | LedgerError:
    """:func:`envelope_payload`, or the error it raises; ``expected`` is checked first, by encoding it: base64
    has one encoding of given bytes, so a payload that is that text decodes to exactly ``expected``."""
    if expected is not None and envelope.get("payload") == base64.b64encode(expected).decode():
        return expected
    try:
        return envelope_payload(envelope)
    except LedgerError as exc:
        return exc


def verify_envelope(envelope: Mapping[str, Any], keys: Sequence[VerifierKey]) -> bool:
    """True when one of ``keys`` made a valid signature over the envelope's PAE."""
    return envelope_signer(envelope, keys) is not None


def envelope_signer(
    envelope: Mapping[str, Any], keys: Sequence[VerifierKey], payload: bytes | LedgerError | None = None
) -> VerifierKey | None:
    """The first of ``keys`` that made a valid signature over the envelope's PAE, or None.

    ``payload``, when the caller has it, is what :func:`envelope_payload` gives (or raises) for ``envelope``.
    """
    if envelope.get("payloadType") != PAYLOAD_TYPE:
        return None
    if payload is None:
        payload = _payload_or_error(envelope)
    if isinstance(payload, LedgerError):
        return None
    message = pae(PAYLOAD_TYPE, payload)
    by_id = {k.key_id_hex: k for k in keys}
    for sig in envelope.get("signatures") or []:
        key = by_id.get(str(sig.get("keyid")))
        if key is None:
            continue
        try:
            raw = base64.b64decode(str(sig.get("sig")), validate=True)
        except binascii.Error:
            continue
        if key.verify(message, raw):
            return key
    return None


@dataclass(frozen=True)
class DbomCheck:
    problems: list[tuple[str, str]]
    result_bytes: bytes | None
    signer: VerifierKey | None = None  # the trusted key whose signature verified


def _named_signers(
    document: Mapping[str, Any], keys: Sequence[VerifierKey]
) -> tuple[list[VerifierKey], tuple[str, str] | None]:
    """The keys that may have signed ``document``: those whose fingerprint its ``judge_key`` names (schema /3 on),
    or all of ``keys`` for a legacy entry that names none; and the problem, if the entry names no trusted key."""
    named = document.get(JUDGE_KEY_FIELD)
    if named is None and document.get("schema") in LEGACY_SCHEMAS:
        return list(keys), None
    if not isinstance(named, str):
        return [], ("malformed", f"entry of schema {document.get('schema')!r} does not name its judge_key")
    matching = [k for k in keys if k.fingerprint == named]
    if not matching:
        trusted = ", ".join(k.fingerprint for k in keys) or "none"
        return [], ("bad-signature", f"the entry was signed with judge key {named}, which is not a trusted key "
                                     f"(trusted: {trusted})")
    return matching, None


def check_dbom(document: Mapping[str, Any], keys: Sequence[VerifierKey], data: bytes | None = None) -> DbomCheck:
    """Every way ``document`` fails to be a faithful, signed DBOM; with ``data``, also that it is its canonical form.

    Each nested value is canonicalized once and reused for ``H(Δ)``, the signed
    statement and the leaf bytes.
    """
    problems: list[tuple[str, str]] = []
    result = document.get("result")
    if not isinstance(result, dict):
        return DbomCheck([("malformed", "entry has no result object")], None)
    try:
        result_bytes = canonicalize(result)
        members = entry_members(document, result_bytes)
        expected_payload = statement_bytes(document, canonical_object(members))
    except LedgerError as exc:
        return DbomCheck([("malformed", str(exc))], None)
    if sha256_hex(result_bytes) != document.get("result_sha256"):
        problems.append(("result-edited", "H(Δ) of the result differs from the recorded result_sha256"))
    envelope = document.get(SIGNATURE_FIELD)
    if not isinstance(envelope, dict):
        return DbomCheck([*problems, ("signature-missing", "no sigma_judge envelope")], result_bytes)
    candidates, key_problem = _named_signers(document, keys)
    payload = _payload_or_error(envelope, expected_payload)  # decoded once, for the signature and the comparison
    signer = envelope_signer(envelope, candidates, payload)
    if key_problem is not None:
        problems.append(key_problem)
    elif signer is None:
        problems.append(("bad-signature", "sigma_judge does not verify with the judge key"))
    try:
        if isinstance(payload, LedgerError):
            raise payload
        signed = payload
        if data is not None and canonical_object({**members, SIGNATURE_FIELD: envelope_bytes(envelope)}) != data:
            problems.append(("malformed", "stored DBOM is not in canonical form"))
    except LedgerError as exc:
        return DbomCheck([*problems, ("malformed", str(exc))], result_bytes)
    if signed != expected_payload:
        problems.append(("entry-edited", "the entry differs from the statement sigma_judge signs"))
    return DbomCheck(problems, result_bytes, signer)


def dbom_problems(document: Mapping[str, Any], keys: Sequence[VerifierKey]) -> list[tuple[str, str]]:
    """Every way ``document`` fails to be a faithful, signed DBOM, as ``(kind, detail)`` pairs."""
    return check_dbom(document, keys).problems
