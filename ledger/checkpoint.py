"""C2SP ``tlog-checkpoint`` tree heads as C2SP ``signed-note`` notes.

A note is the checkpoint body (origin, decimal size, base64 root, optional
extension lines), a blank line, then one ``— <name> base64(keyid ‖ signature)``
line per signature. Ed25519 signs the body bytes, final newline included.
Signatures by keys the reader does not know are ignored; a note is accepted
when a known key signed it and no known key's signature is bad.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.errors import LedgerError
from ledger.keys import SignerKey, VerifierKey

SIGNATURE_PREFIX = "— "
MAX_SIGNATURES = 100
_SIZE_RE = re.compile(r"^(0|[1-9][0-9]{0,19})$")


class CheckpointError(LedgerError):
    """A note that is malformed or not signed by a trusted key."""


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes

    def body(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"


@dataclass(frozen=True)
class NoteSignature:
    name: str
    key_id: bytes
    signature: bytes


def sign_checkpoint(checkpoint: Checkpoint, *keys: SignerKey) -> str:
    """The signed note text for ``checkpoint``."""
    if not checkpoint.origin or "\n" in checkpoint.origin:
        raise CheckpointError("a checkpoint origin is one non-empty line")
    body = checkpoint.body()
    lines = []
    for key in keys:
        blob = key.verifier.key_id + key.sign(body.encode())
        lines.append(f"{SIGNATURE_PREFIX}{key.name} {base64.b64encode(blob).decode()}\n")
    return body + "\n" + "".join(lines)


def split_note(note: str) -> tuple[str, list[NoteSignature]]:
    """The body and signature lines of a note, checked for shape only."""
    if "\r" in note or not note.endswith("\n"):
        raise CheckpointError("malformed note: it must use \\n line endings and end with a newline")
    head, sep, tail = note.rpartition("\n\n")
    if not sep or not head:
        raise CheckpointError("malformed note: no blank line between the checkpoint and its signatures")
    body = head + "\n"
    sig_lines = tail.split("\n")[:-1]
    if not sig_lines:
        raise CheckpointError("malformed note: no signature lines")
    if len(sig_lines) > MAX_SIGNATURES:
        raise CheckpointError(f"malformed note: more than {MAX_SIGNATURES} signatures")
    signatures = []
    for line in sig_lines:
        if not line.startswith(SIGNATURE_PREFIX):
            raise CheckpointError("malformed note: a signature line must start with '— '")
        name, _, b64 = line[len(SIGNATURE_PREFIX):].rpartition(" ")
        try:
            blob = base64.b64decode(b64, validate=True)
        except binascii.Error:
            raise CheckpointError("malformed note: a signature is not base64") from None
        if not name or len(blob) < 5:
            raise CheckpointError("malformed note: a signature line lacks a name or key id")
        signatures.append(NoteSignature(name, blob[:4], blob[4:]))
    return body, signatures


def parse_body(body: str) -> Checkpoint:
    lines = body.split("\n")[:-1]
    if len(lines) < 3:
        raise CheckpointError("malformed checkpoint: expected origin, size and root lines")
    origin, size_text, root_text = lines[0], lines[1], lines[2]
    if not origin:
        raise CheckpointError("malformed checkpoint: empty origin")
    if not _SIZE_RE.match(size_text):
        raise CheckpointError("malformed checkpoint: the size must be a decimal number without leading zeros")
    try:
        root = base64.b64decode(root_text, validate=True)
    except binascii.Error:
        raise CheckpointError("malformed checkpoint: the root hash is not base64") from None
    if len(root) != 32:
        raise CheckpointError("malformed checkpoint: the root hash is not 32 bytes")
    if any(not line for line in lines[3:]):
        raise CheckpointError("malformed checkpoint: empty extension line")
    return Checkpoint(origin, int(size_text), root)


def open_checkpoint(note: str, verifiers: Sequence[VerifierKey], origin: str | None = None) -> Checkpoint:
    """Parse and authenticate a note against the trusted ``verifiers``."""
    body, signatures = split_note(note)
    checkpoint = parse_body(body)
    if origin is not None and checkpoint.origin != origin:
        raise CheckpointError(f"checkpoint is for log {checkpoint.origin!r}, not {origin!r}")
    trusted = {(v.name, v.key_id): v for v in verifiers}
    verified = 0
    for sig in signatures:
        key = trusted.get((sig.name, sig.key_id))
        if key is None:
            continue  # unknown signers are ignored, as signed-note requires
        if not key.verify(body.encode(), sig.signature):
            raise CheckpointError(f"checkpoint signature by {sig.name} does not verify")
        verified += 1
    if not verified:
        raise CheckpointError("checkpoint is not signed by any trusted key")
    return checkpoint
