"""The judge's Ed25519 key, in the C2SP signed-note key formats.

The signer key lives in ``<home>/keys/judge.key`` (mode 0600, never in the
database); the verifier key in ``judge.pub`` is what auditors are given:
``name+hexkeyid+base64(0x01 ‖ pubkey)``, with key id = the first four bytes of
SHA-256(name ‖ 0x0A ‖ 0x01 ‖ pubkey).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from ledger.errors import LedgerError

ED25519_ALG = b"\x01"
DEFAULT_KEY_NAME = "logomesh-judge"
SIGNER_FILE = "judge.key"
NEXT_SIGNER_FILE = "judge.next.key"
RETIRED_DIR = "retired"
VERIFIER_FILE = "judge.pub"
_PRIVATE_PREFIX = "PRIVATE+KEY+"


FINGERPRINT_PREFIX = "sha256:"


def key_digest(name: str, public: bytes) -> bytes:
    """SHA-256(name ‖ 0x0A ‖ 0x01 ‖ pubkey): the C2SP key id is its first four bytes, the fingerprint all of it."""
    return hashlib.sha256(name.encode() + b"\n" + ED25519_ALG + public).digest()


def key_id(name: str, public: bytes) -> bytes:
    """The 4-byte C2SP key id of an Ed25519 key."""
    return key_digest(name, public)[:4]


def check_key_name(name: str) -> str:
    if not name or any(c.isspace() or c == "+" for c in name) or not name.isprintable():
        raise LedgerError(f"bad key name {name!r}: use a non-empty name without spaces or '+'")
    return name


@dataclass(frozen=True)
class VerifierKey:
    """A public key that checks note signatures and DSSE envelopes."""

    name: str
    public: bytes
    _verify: VerifyKey = field(init=False, repr=False, compare=False)
    _digest: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_key_name(self.name)
        if len(self.public) != 32:
            raise LedgerError("an Ed25519 public key is 32 bytes")
        object.__setattr__(self, "_verify", VerifyKey(self.public))
        object.__setattr__(self, "_digest", key_digest(self.name, self.public))

    @property
    def key_id(self) -> bytes:
        return self._digest[:4]

    @property
    def key_id_hex(self) -> str:
        return self._digest[:4].hex()

    @property
    def fingerprint(self) -> str:
        """``sha256:`` and the 64 hex digits of :func:`key_digest`; the first eight are the key id.

        Signed into every entry (schema ``logomesh-dbom/3``), so an entry names the key that signed it.
        """
        return FINGERPRINT_PREFIX + self._digest.hex()

    def encode(self) -> str:
        """``name+hexkeyid+base64(0x01 ‖ pubkey)``."""
        return f"{self.name}+{self.key_id_hex}+{base64.b64encode(ED25519_ALG + self.public).decode()}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            self._verify.verify(message, signature)
        except (BadSignatureError, ValueError):
            return False
        return True


def parse_verifier_key(text: str) -> VerifierKey:
    """Read a C2SP verifier key; :class:`LedgerError` naming what is wrong."""
    parts = text.strip().split("+", 2)
    if len(parts) != 3:
        raise LedgerError("bad verifier key: expected name+hexkeyid+base64key (as printed by 'logomesh keys show')")
    name, hex_id, b64 = parts
    try:
        raw = base64.b64decode(b64, validate=True)
        wanted_id = bytes.fromhex(hex_id)
    except (binascii.Error, ValueError):
        raise LedgerError("bad verifier key: key id must be hex and the key base64") from None
    if len(raw) != 33 or raw[:1] != ED25519_ALG:
        raise LedgerError("bad verifier key: not an Ed25519 key (algorithm byte 0x01 + 32 bytes)")
    key = VerifierKey(name, raw[1:])
    if key.key_id != wanted_id:
        raise LedgerError("bad verifier key: its key id does not match its name and key")
    return key


@dataclass(frozen=True)
class SignerKey:
    """The judge's private key; ``repr`` never shows the seed."""

    name: str
    seed: bytes = field(repr=False)
    _signing: SigningKey = field(init=False, repr=False, compare=False)
    _verifier: VerifierKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_key_name(self.name)
        if len(self.seed) != 32:
            raise LedgerError("an Ed25519 seed is 32 bytes")
        object.__setattr__(self, "_signing", SigningKey(self.seed))
        object.__setattr__(self, "_verifier", VerifierKey(self.name, bytes(self._signing.verify_key)))

    @property
    def verifier(self) -> VerifierKey:
        return self._verifier

    def sign(self, message: bytes) -> bytes:
        return bytes(self._signing.sign(message).signature)

    def encode(self) -> str:
        """``PRIVATE+KEY+name+hexkeyid+base64(0x01 ‖ seed)`` (the note signer-key format)."""
        seed = base64.b64encode(ED25519_ALG + self.seed).decode()
        return f"{_PRIVATE_PREFIX}{self.name}+{self.verifier.key_id_hex}+{seed}"


def parse_signer_key(text: str) -> SignerKey:
    text = text.strip()
    if not text.startswith(_PRIVATE_PREFIX):
        raise LedgerError("bad signer key file: expected PRIVATE+KEY+name+hexkeyid+base64")
    try:
        name, hex_id, b64 = text[len(_PRIVATE_PREFIX):].split("+", 2)
        raw = base64.b64decode(b64, validate=True)
        wanted = bytes.fromhex(hex_id)
    except (binascii.Error, ValueError):
        raise LedgerError("bad signer key file: malformed name, key id or key") from None
    if len(raw) != 33 or raw[:1] != ED25519_ALG:
        raise LedgerError("bad signer key file: not an Ed25519 key")
    key = SignerKey(name, raw[1:])
    if key.verifier.key_id != wanted:
        raise LedgerError("bad signer key file: key id does not match the key")
    return key


def _publish_private(path: Path, text: str) -> bool:
    """Atomically create ``path`` (mode 0600 from the start) unless it exists; False if it did.

    The key is written to a private temporary file and hard-linked into place,
    so a concurrent reader never sees a half-written key and two processes
    racing to create one agree on a single winner.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True


def create_key(keys_dir: Path, name: str = DEFAULT_KEY_NAME, seed: bytes | None = None) -> SignerKey:
    """Write a new judge key (random unless ``seed`` is given, for tests); refuses to overwrite one."""
    keys_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = SignerKey(check_key_name(name), seed if seed is not None else os.urandom(32))
    if not _publish_private(keys_dir / SIGNER_FILE, key.encode()):
        raise LedgerError(f"a judge key already exists in {keys_dir}; it is never overwritten")
    (keys_dir / VERIFIER_FILE).write_text(key.verifier.encode() + "\n")
    return key


def load_key(keys_dir: Path) -> SignerKey:
    """Read the judge key; refuses a key file others can read."""
    path = keys_dir / SIGNER_FILE
    if not path.exists():
        raise LedgerError(f"no judge key in {keys_dir}: run 'logomesh keys init'")
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise LedgerError(f"judge key {path} is readable by others (mode {mode:o}): run 'chmod 600 {path}'")
    return parse_signer_key(path.read_text())


def load_or_create_key(keys_dir: Path, name: str = DEFAULT_KEY_NAME) -> SignerKey:
    """The judge key under ``keys_dir``, created on first use."""
    if not (keys_dir / SIGNER_FILE).exists():
        try:
            return create_key(keys_dir, name)
        except LedgerError:
            pass  # another process created it first
    key = load_key(keys_dir)
    if not (keys_dir / VERIFIER_FILE).exists():
        (keys_dir / VERIFIER_FILE).write_text(key.verifier.encode() + "\n")
    return key


def load_verifier(keys_dir: Path) -> VerifierKey:
    path = keys_dir / VERIFIER_FILE
    if not path.exists() and (keys_dir / SIGNER_FILE).exists():
        return load_key(keys_dir).verifier
    if not path.exists():
        raise LedgerError(f"no judge key in {keys_dir}: run 'logomesh keys init'")
    return parse_verifier_key(path.read_text())


def stage_next_key(keys_dir: Path, name: str, seed: bytes | None = None) -> SignerKey:
    """Write the key a rotation is about to adopt to ``judge.next.key`` (0600), replacing a stale one."""
    (keys_dir / NEXT_SIGNER_FILE).unlink(missing_ok=True)
    key = SignerKey(check_key_name(name), seed if seed is not None else os.urandom(32))
    if not _publish_private(keys_dir / NEXT_SIGNER_FILE, key.encode()):
        raise LedgerError(f"could not stage a new key in {keys_dir}")
    return key


def finish_rotation(keys_dir: Path, adopted: str | None) -> None:
    """Move a staged key into place if the ledger adopted it (``adopted`` is its newest judge key), else drop it.

    A staged key the ledger never recorded belongs to a rotation that did not
    commit; it is discarded. The old private key is kept under ``retired/``.
    """
    staged = keys_dir / NEXT_SIGNER_FILE
    if not staged.exists():
        return
    new = parse_signer_key(staged.read_text())
    if new.verifier.encode() != adopted:
        staged.unlink()
        return
    current_path = keys_dir / SIGNER_FILE
    if current_path.exists():
        old = parse_signer_key(current_path.read_text())
        retired = keys_dir / RETIRED_DIR
        retired.mkdir(mode=0o700, exist_ok=True)
        os.replace(current_path, retired / f"judge-{old.verifier.key_id_hex}.key")
    os.replace(staged, current_path)
    (keys_dir / VERIFIER_FILE).write_text(new.verifier.encode() + "\n")
