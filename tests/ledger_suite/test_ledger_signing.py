"""Keys, signed-note checkpoints and DSSE envelopes, including independent implementations."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import random
import stat
from array import array
from pathlib import Path

import pytest
from ledger_fixtures import ATTRS, make_inputs, make_result

from ledger.canonical import canonicalize
from ledger.checkpoint import Checkpoint, CheckpointError, open_checkpoint, sign_checkpoint, split_note
from ledger.dbom import (
    PAYLOAD_TYPE,
    build_entry,
    dbom_problems,
    decode_vector,
    encode_vector,
    pae,
    sign_entry,
    statement,
    verify_envelope,
)
from ledger.errors import LedgerError
from ledger.keys import SignerKey, create_key, key_id, load_key, parse_signer_key, parse_verifier_key

JUDGE = SignerKey("logomesh-judge", bytes(range(32)))
OTHER = SignerKey("someone-else", b"\x05" * 32)

# From the documentation of golang.org/x/mod/sumdb/note: a verifier key and a note it signed.
GO_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_NOTE = ("If you think cryptography is the answer to your problem,\n"
           "then you don't know what your problem is.\n\n"
           "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdng"
           "otpRZb6KE6RyyBwJnAM=\n")


def test_key_id_and_verifier_format_match_the_go_note_package() -> None:
    key = parse_verifier_key(GO_VKEY)
    assert key.encode() == GO_VKEY and key.key_id.hex() == "c74f20a3"
    body, sigs = split_note(GO_NOTE)
    assert sigs[0].key_id == key.key_id and key.verify(body.encode(), sigs[0].signature)


def test_verifier_key_format() -> None:
    text = JUDGE.verifier.encode()
    name, hex_id, b64 = text.split("+", 2)
    raw = base64.b64decode(b64)
    assert name == "logomesh-judge" and raw[0] == 1 and raw[1:] == JUDGE.verifier.public
    assert bytes.fromhex(hex_id) == key_id(name, raw[1:])
    assert parse_verifier_key(text) == JUDGE.verifier
    assert parse_signer_key(JUDGE.encode()).seed == JUDGE.seed
    assert "seed" not in repr(JUDGE) or repr(JUDGE.seed) not in repr(JUDGE)


@pytest.mark.parametrize("bad", ["", "name", "a+b", "a+zz+AQ==", GO_VKEY.replace("c74f20a3", "c74f20a4"),
                                 GO_VKEY.replace("PeterNeumann", "Peter"), "x+00000000+AgAAAA=="])
def test_bad_verifier_keys(bad: str) -> None:
    with pytest.raises(LedgerError, match="bad verifier key"):
        parse_verifier_key(bad)


def test_key_file_is_private_and_never_overwritten(tmp_path: Path) -> None:
    key = create_key(tmp_path / "keys", seed=b"\x01" * 32)
    path = tmp_path / "keys" / "judge.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    with pytest.raises(LedgerError, match="never overwritten"):
        create_key(tmp_path / "keys")
    assert load_key(tmp_path / "keys") == key
    os.chmod(path, 0o644)
    with pytest.raises(LedgerError, match="chmod 600"):
        load_key(tmp_path / "keys")


def test_checkpoint_note_format() -> None:
    cp = Checkpoint("example.com/log", 42, bytes(range(32)))
    note = sign_checkpoint(cp, JUDGE)
    lines = note.split("\n")
    assert lines[:4] == ["example.com/log", "42", base64.b64encode(bytes(range(32))).decode(), ""]
    assert lines[4].startswith("— logomesh-judge ") and lines[5] == ""
    blob = base64.b64decode(lines[4].rsplit(" ", 1)[1])
    assert blob[:4] == JUDGE.verifier.key_id and len(blob) == 68
    assert JUDGE.verifier.verify(cp.body().encode(), blob[4:])
    assert open_checkpoint(note, [JUDGE.verifier], origin="example.com/log") == cp


def test_unknown_signers_are_ignored_and_many_signatures_accepted() -> None:
    cp = Checkpoint("o", 3, b"\x11" * 32)
    cosigners = [SignerKey(f"witness-{i}", bytes([i]) * 32) for i in range(20)]
    note = sign_checkpoint(cp, *cosigners, JUDGE)
    assert open_checkpoint(note, [JUDGE.verifier]) == cp
    assert open_checkpoint(note, [cosigners[16].verifier]) == cp
    with pytest.raises(CheckpointError, match="not signed by any trusted key"):
        open_checkpoint(sign_checkpoint(cp, OTHER), [JUDGE.verifier])


@pytest.mark.parametrize("mutate", [
    lambda n: n.replace("\n3\n", "\n4\n"),
    lambda n: n.replace("\n3\n", "\n03\n"),
    lambda n: n.replace("\n\n", "\n"),
    lambda n: n.replace("— ", "- "),
    lambda n: n.rstrip("\n"),
    lambda n: n.replace("\n", "\r\n"),
    lambda n: n.replace("o\n", "other\n", 1),
])
def test_tampered_or_malformed_notes_are_refused(mutate: object) -> None:
    note = sign_checkpoint(Checkpoint("o", 3, b"\x11" * 32), JUDGE)
    with pytest.raises(CheckpointError):
        open_checkpoint(mutate(note), [JUDGE.verifier], origin="o")  # type: ignore[operator]


def _document() -> dict[str, object]:
    entry = build_entry(sequence=7, battle_id="b7", timestamp="2026-01-02T03:04:05.000000Z",
                        result=make_result("b7", 0.625), inputs=make_inputs(7), attributes=ATTRS,
                        intent_vector=[0.5, -0.25])
    return sign_entry(entry, JUDGE)


def test_dsse_envelope_shape_and_in_toto_statement() -> None:
    doc = _document()
    env = doc["sigma_judge"]
    assert isinstance(env, dict) and env["payloadType"] == "application/vnd.in-toto+json"
    payload = base64.b64decode(env["payload"])
    stmt = statement({k: v for k, v in doc.items() if k != "sigma_judge"})
    assert payload == canonicalize(stmt)
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    assert stmt["subject"] == [{"name": "battle:b7", "digest": {"sha256": doc["result_sha256"]}}]
    sig = base64.b64decode(env["signatures"][0]["sig"])
    assert JUDGE.verifier.verify(pae(PAYLOAD_TYPE, payload), sig)
    assert pae("t", b"ab") == b"DSSEv1 1 t 2 ab"
    assert dbom_problems(doc, [JUDGE.verifier]) == []
    [(kind, detail)] = dbom_problems(doc, [OTHER.verifier])
    assert kind == "bad-signature"
    assert f"signed with judge key {JUDGE.verifier.fingerprint}" in detail and OTHER.verifier.fingerprint in detail


def test_the_entry_names_the_fingerprint_of_the_key_that_signs_it() -> None:
    doc = _document()
    fingerprint = JUDGE.verifier.fingerprint
    assert doc["schema"] == "logomesh-dbom/3" and doc["judge_key"] == fingerprint
    assert fingerprint == "sha256:" + hashlib.sha256(b"logomesh-judge\n\x01" + JUDGE.verifier.public).hexdigest()
    assert fingerprint[7:15] == JUDGE.verifier.key_id_hex
    payload = json.loads(base64.b64decode(doc["sigma_judge"]["payload"]))
    assert payload["predicate"]["judge_key"] == fingerprint  # inside what is signed


def test_a_renamed_judge_key_is_caught_even_with_both_keys_trusted() -> None:
    """Pointing judge_key at another trusted key changes the signed statement and finds no signature by that key."""
    doc = _document() | {"judge_key": OTHER.verifier.fingerprint}
    kinds = {kind for kind, _ in dbom_problems(doc, [JUDGE.verifier, OTHER.verifier])}
    assert kinds == {"bad-signature", "entry-edited"}


def test_an_entry_of_the_current_schema_must_name_its_key() -> None:
    doc = {k: v for k, v in _document().items() if k != "judge_key"}
    assert ("malformed", "entry of schema 'logomesh-dbom/3' does not name its judge_key") in dbom_problems(
        doc, [JUDGE.verifier])


def test_entry_hashes_every_input() -> None:
    doc = _document()
    import hashlib

    inputs = doc["inputs"]
    assert isinstance(inputs, dict)
    for name, data in make_inputs(7).items():
        assert inputs[name] == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert doc["attributes"] == ATTRS
    assert doc["intent_vector"] == {"encoding": "float32-le-base64", "dimensions": 2, "data": "AAAAPwAAgL4="}
    assert decode_vector(doc["intent_vector"]) == [0.5, -0.25]


def test_the_intent_vector_keeps_every_float32_bit_and_refuses_what_float32_cannot_hold() -> None:
    rng = random.Random(3)
    values = array("f", [rng.uniform(-1, 1) for _ in range(384)]).tolist()  # what the model computes: float32
    stored = encode_vector(values)
    assert len(stored["data"]) == 2048  # 384 x 4 bytes in base64, where JSON numbers took ~14 KB
    assert decode_vector(stored) == values
    assert decode_vector(encode_vector(tuple(values))) == values  # served from memory the second time
    for bad in ([float("nan")], [float("inf")], [1e39], ["0.5"], [None]):
        with pytest.raises(LedgerError):
            encode_vector(bad)  # type: ignore[arg-type]
    for broken in ({**stored, "dimensions": 383}, {**stored, "data": "not base64!"}, {**stored, "encoding": "f16"},
                   {**stored, "data": "AAAA"}):  # three bytes: not whole float32 values
        with pytest.raises(LedgerError):
            decode_vector(broken)


def test_an_entry_of_the_first_schema_still_verifies_and_reads() -> None:
    """Ledgers written before the compact vector (a JSON array of numbers) stay valid."""
    entry = build_entry(sequence=1, battle_id="old-1", timestamp="2026-01-02T03:04:05.000000Z",
                        result=make_result("old-1", 0.5), inputs=make_inputs(1), attributes=ATTRS, intent_vector=None)
    entry |= {"schema": "logomesh-dbom/1", "intent_vector": [0.123456, -0.5, 1e-7]}
    document = sign_entry(entry, JUDGE)
    assert dbom_problems(document, [JUDGE.verifier]) == [] and "judge_key" not in document
    assert decode_vector(document["intent_vector"]) == [0.123456, -0.5, 1e-7]


def test_an_entry_of_the_second_schema_verifies_without_naming_its_key() -> None:
    """Entries written before schema /3 carry no judge_key; any trusted key that signed them will do."""
    entry = build_entry(sequence=1, battle_id="old-2", timestamp="2026-01-02T03:04:05.000000Z",
                        result=make_result("old-2", 0.5), inputs=make_inputs(1), attributes=ATTRS,
                        intent_vector=[0.5]) | {"schema": "logomesh-dbom/2"}
    document = sign_entry(entry, JUDGE)
    assert "judge_key" not in document
    assert dbom_problems(document, [OTHER.verifier, JUDGE.verifier]) == []
    assert [k for k, _ in dbom_problems(document, [OTHER.verifier])] == ["bad-signature"]


def test_our_envelope_verifies_with_securesystemslib() -> None:
    """An independent DSSE implementation accepts what we sign, and rejects a tampered copy.

    Needs ``securesystemslib[crypto]`` (it verifies Ed25519 through ``cryptography``): a missing
    package fails this test rather than skipping it.
    """
    import securesystemslib.dsse as dsse
    import securesystemslib.signer as signer_mod
    from securesystemslib.exceptions import VerificationError

    env = _document()["sigma_judge"]
    assert isinstance(env, dict)
    key = signer_mod.SSlibKey(  # type: ignore[attr-defined]
        JUDGE.verifier.key_id_hex, "ed25519", "ed25519", {"public": JUDGE.verifier.public.hex()})
    envelope = dsse.Envelope.from_dict(copy.deepcopy(env))
    assert envelope.payload_type == "application/vnd.in-toto+json"
    assert JUDGE.verifier.key_id_hex in envelope.verify([key], 1)
    forged = copy.deepcopy(env)
    forged["payload"] = base64.b64encode(base64.b64decode(env["payload"]).replace(b"0.625", b"0.999")).decode()
    with pytest.raises(VerificationError):
        dsse.Envelope.from_dict(forged).verify([key], 1)


def test_securesystemslib_envelope_verifies_with_ours() -> None:
    """The other direction: an envelope signed by securesystemslib passes our verifier."""
    import securesystemslib.dsse as dsse
    import securesystemslib.signer as signer_mod
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_private_bytes(JUDGE.seed)
    pub = signer_mod.SSlibKey(  # type: ignore[attr-defined]
        JUDGE.verifier.key_id_hex, "ed25519", "ed25519", {"public": JUDGE.verifier.public.hex()})
    signer = signer_mod.CryptoSigner(private, pub)  # type: ignore[attr-defined]
    envelope = dsse.Envelope(b'{"hello":"world"}', PAYLOAD_TYPE, {})
    envelope.sign(signer)
    assert verify_envelope(envelope.to_dict(), [JUDGE.verifier])
    assert not verify_envelope(envelope.to_dict(), [OTHER.verifier])


def test_signed_leaf_is_exactly_rfc8785_for_awkward_values() -> None:
    """The composed leaf bytes equal the reference canonicalizer's output, non-ASCII and odd numbers included."""
    from ledger.canonical import parse, reference_canonicalize
    from ledger.dbom import sign_encoded

    result = make_result("odd-1", 0.1) | {"note": "é\u2028\U0001f600\x01\"\\", "tiny": 1e-7, "big": 1e21,
                                          "\u20acuro": -0.0, "neg": -5, "flag": True}
    entry = build_entry(sequence=2**40, battle_id="odd-1", timestamp="2026-01-02T03:04:05.000000Z", result=result,
                        inputs={"ü": b"\xff\x00"}, attributes={"\U0001f600": "ø", "a": ""},
                        intent_vector=[1e-9, 3.0, -2.5e-5])
    signed = sign_encoded(entry, JUDGE)
    assert signed.leaf_data == reference_canonicalize(parse(signed.leaf_data))
    assert signed.leaf_data == reference_canonicalize(signed.document)
    assert signed.result_bytes == reference_canonicalize(result)
    payload = base64.b64decode(signed.document["sigma_judge"]["payload"])
    assert payload == reference_canonicalize(statement(entry | {"judge_key": JUDGE.verifier.fingerprint}))
    assert dbom_problems(signed.document, [JUDGE.verifier]) == []
