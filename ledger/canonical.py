"""RFC 8785 (JCS) canonical JSON, the only serialization that is hashed or signed.

Plain ``json.dumps(sort_keys=True)`` differs from RFC 8785 on number formatting
(``1e+21``, ``-0``) and key order (UTF-16 code units, not code points), so two
honest implementations could hash the same value differently. Values JCS cannot
represent (NaN, infinities, integers beyond 2^53) are rejected, not coerced:
a caller who needs them stores them as strings.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from ledger.errors import LedgerError


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value``; :class:`LedgerError` if it has no JCS form."""
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise LedgerError(f"value cannot be canonicalized (RFC 8785): {exc}; store it as a string") from None
    except TypeError as exc:
        raise LedgerError(f"value is not JSON: {exc}") from None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(value: Any) -> str:
    """``H(Δ)``: hex SHA-256 of the canonical JSON of ``value``."""
    return sha256_hex(canonicalize(value))


def parse(data: str | bytes) -> Any:
    """Parse JSON, rejecting the non-standard constants Python would otherwise accept."""

    def no_constant(name: str) -> Any:
        raise LedgerError(f"JSON contains {name}, which RFC 8785 forbids")

    return json.loads(data, parse_constant=no_constant)


def is_canonical(data: bytes) -> bool:
    """True when ``data`` is exactly the canonical form of what it encodes."""
    try:
        return canonicalize(parse(data)) == data
    except (LedgerError, ValueError):
        return False
