"""RFC 8785 (JCS) canonical JSON, the only serialization that is hashed or signed.

Plain ``json.dumps(sort_keys=True)`` differs from RFC 8785 on number formatting
(``1e+21``, ``-0``) and key order (UTF-16 code units, not code points), so two
honest implementations could hash the same value differently. Values JCS cannot
represent (NaN, infinities, integers beyond 2^53) are rejected, not coerced:
a caller who needs them stores them as strings.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
from collections.abc import Mapping
from json.encoder import encode_basestring as _encode_string
from typing import Any

import rfc8785

from ledger.errors import LedgerError

_SAFE_INT = 2**53 - 1
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_FAST_FLOAT_MIN = 1e-4
_FAST_FLOAT_MAX = 1e16
_CONTROL_BYTES = bytes(range(0x20))  # escaped by JSON: U+0000 to U+001F


class _NeedsReference(Exception):
    """The value has a part only the reference implementation formats correctly."""


def _fast_form(value: Any) -> Any:
    """``value`` with integral floats turned into ints, or :class:`_NeedsReference`.

    Python's ``repr`` of a float is the shortest round-trip form, as in
    ECMAScript, and both write it positionally for magnitudes in [1e-4, 1e16);
    only integral floats differ (``1.0`` vs ``1``). An integral float below
    1e16 is written as the integer it equals: below 2^53 every integer is a
    double, and in [2^53, 1e16) the doubles are the even integers, so no
    shorter digit string rounds to one (a multiple of 10 is itself a double)
    and ECMAScript's shortest form is all its digits. From 1e16 on the
    shortest digits can end in zeros the exact integer does not have
    (``1e17 + 16`` is ``100000000000000020``): the reference handles those.
    Keys are sorted by code point by ``json``, which equals RFC 8785's UTF-16
    order for ASCII keys. Anything else goes to the reference implementation.

    A container none of whose values changes is returned itself, not copied: most of a result has no
    integral float, and copying every nested object cost as much as encoding it.
    """
    kind = type(value)
    if kind is dict:
        out = None
        for key, item in value.items():
            if type(key) is not str or not key.isascii():
                raise _NeedsReference
            new = _fast_item(item)
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out
    if kind is list or kind is tuple:
        items = [_fast_item(item) for item in value]
        return value if all(map(operator.is_, items, value)) else items
    return _fast_item(value)


def _fast_item(value: Any) -> Any:
    """:func:`_fast_form` of one value: scalars here, containers by recursion (the common case inline)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if -_SAFE_INT <= value <= _SAFE_INT:
            return value
        raise _NeedsReference
    if kind is float:
        magnitude = abs(value)
        if magnitude < _FAST_FLOAT_MAX and value.is_integer():
            return int(value)
        if _FAST_FLOAT_MIN <= magnitude < _FAST_FLOAT_MAX:
            return value
        raise _NeedsReference
    if kind is dict or kind is list or kind is tuple:
        return _fast_form(value)
    raise _NeedsReference  # subclasses and anything else: let the reference decide


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value``; :class:`LedgerError` if it has no JCS form.

    A fast path covers the shapes the ledger stores (ASCII keys, scores and
    counts); everything else, and every error, goes through ``rfc8785``.
    """
    try:
        fast = _fast_form(value)
        return _ENCODER.encode(fast).encode("utf-8")
    except (_NeedsReference, UnicodeEncodeError, ValueError):
        pass
    return reference_canonicalize(value)


def member_bytes(value: Any) -> bytes:
    """Canonical bytes of one value, with shortcuts for the scalars entries are made of.

    A flat object (string keys, string or integer values: an entry's attributes, its intent vector) is
    canonicalized once per distinct value: a ledger's entries repeat a few of them (one vector per task).
    """
    if isinstance(value, str):
        return _encode_string(value).encode("utf-8")
    if value is None:
        return b"null"
    if type(value) is int and -_SAFE_INT <= value <= _SAFE_INT:
        return str(value).encode()
    if type(value) is dict and all(type(v) is str or type(v) is int for v in value.values()):
        # str and int values never compare equal to each other (bool, float are excluded), so equal keys
        # of the memo are equal JSON values.
        return _flat_object(tuple(value.items()))
    return canonicalize(value)


@functools.lru_cache(maxsize=1024)
def _flat_object(items: tuple[tuple[Any, str | int], ...]) -> bytes:
    return canonicalize(dict(items))


def plain_string_bytes(text: str) -> bytes | None:
    """``text`` as a canonical JSON string when it needs no escaping (ASCII, no quote, backslash or control
    character: base64, hex), found without JSON's character-by-character escaper; None otherwise."""
    if not text.isascii():
        return None
    data = text.encode()
    if b'"' in data or b"\\" in data or len(data.translate(None, _CONTROL_BYTES)) != len(data):
        return None
    return b'"' + data + b'"'


def canonical_object(members: Mapping[str, bytes]) -> bytes:
    """The canonical JSON object whose members' values are the given canonical bytes.

    RFC 8785 serializes an object as its members sorted by the UTF-16 code
    units of their names, so an object can be composed from members that were
    canonicalized once, instead of re-walking nested values each time they are
    embedded in something larger (the entry in the statement and in the leaf).
    """
    return b"{" + b",".join([prefix + members[name] for name, prefix in _layout(tuple(members))]) + b"}"


@functools.lru_cache(maxsize=256)
def _layout(names: tuple[str, ...]) -> tuple[tuple[str, bytes], ...]:
    """Each name in RFC 8785 order with its ``"name":`` bytes: worked out once per set of names (every entry
    of a schema has the same), where sorting and escaping them again cost as much as the joining."""
    order = sorted(names) if all(map(str.isascii, names)) else sorted(names, key=_utf16_key)
    return tuple((name, _encode_string(name).encode("utf-8") + b":") for name in order)


def _utf16_key(name: str) -> bytes:
    return name.encode("utf-16-be")


def reference_canonicalize(value: Any) -> bytes:
    """RFC 8785 through the ``rfc8785`` package alone."""
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
