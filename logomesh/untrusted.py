"""Bytes that came back from the sandbox, read on the host with limits: the one way to parse them.

Everything the box prints was written by, or next to, code that may read our source and forge it: the
harness server's events and the records inside them (a driver's observations, a probe driver's trials).
``parse`` reads such text with a cap on its size and on its nesting, checked before the JSON parser runs
(so no recursion limit is ever reached); the field readers below read one field of a parsed record with
the type it must have. Anything else raises ``Malformed``, which every reader turns into a failed observation
(a finding, a failed test), never into a host exception and never into "clean".

The harness server keeps its own copy of the depth rule (``harness/server.py``: ``parse_record`` and
``shallow``), as it must stay stdlib-only inside the box.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

MAX_DEPTH = 200  # values nest at most this deep (observe.py stops at 64; the server's MAX_DEPTH is 200)
ENVELOPE_DEPTH = 8  # the records around a value: event, result, outcomes, outcome, trial, result, ...
MAX_RECORD_BYTES = 1 << 20  # one record line (a probe driver's trial): above any honest one
# A string runs to its closing quote or, unclosed, to the end: every match attempt succeeds, so the scan is linear.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class Malformed(ValueError):
    """Box bytes that are not the record they claim to be: too big, too deep, not JSON, a wrong type."""


def parse(data: str | bytes, max_bytes: int = MAX_RECORD_BYTES, max_depth: int = MAX_DEPTH + ENVELOPE_DEPTH) -> Any:
    """The JSON value in ``data``, at most ``max_bytes`` long and nested at most ``max_depth`` deep."""
    if len(data) > max_bytes:
        raise Malformed(f"{len(data)} bytes, over the cap of {max_bytes}")
    text = _decoded(data)
    depth = nesting(text)
    if depth > max_depth:
        raise Malformed(f"nested {depth} deep, over the cap of {max_depth}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"not JSON ({str(exc)[:80]})") from None


def parse_object(data: str | bytes, max_bytes: int = MAX_RECORD_BYTES,
                 max_depth: int = MAX_DEPTH + ENVELOPE_DEPTH) -> dict[str, Any]:
    """``parse``, where the value must be a JSON object."""
    value = parse(data, max_bytes, max_depth)
    if not isinstance(value, dict):
        raise Malformed(f"a JSON {type(value).__name__}, not an object")
    return value


def _decoded(data: str | bytes) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"not UTF-8 (byte {exc.start})") from None


def nesting(text: str) -> int:
    """How deep the brackets of JSON ``text`` nest outside its strings, counted without recursion."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets)), default=0))


# -- one field of a parsed record, with the type it must have ------------------------------------------------
def _field(record: Mapping[str, Any], key: str, kinds: type | tuple[type, ...], default: Any) -> Any:
    if key not in record:
        if default is None:
            raise Malformed(f"no {key!r}")
        return default
    value = record[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _kinds(kinds)):
        raise Malformed(f"{key!r} is a {type(value).__name__}")
    return value


def _kinds(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def text(record: Mapping[str, Any], key: str, default: str | None = None, limit: int = 500) -> str:
    """A string field, cut to ``limit`` characters; missing is ``default`` (None: required)."""
    return str(_field(record, key, str, default))[:limit]


def optional_text(record: Mapping[str, Any], key: str, limit: int = 500) -> str | None:
    """A string field that may be missing or null."""
    if record.get(key) is None:
        return None
    return text(record, key, limit=limit)


def number(record: Mapping[str, Any], key: str, default: float | None = None) -> float:
    """A finite-or-not number field (an int or a float, never a bool); missing is ``default``."""
    return float(_field(record, key, (int, float), default))


def optional_number(record: Mapping[str, Any], key: str) -> float | None:
    """A number field that may be missing or null."""
    return None if record.get(key) is None else number(record, key)


def integer(record: Mapping[str, Any], key: str, default: int | None = None) -> int:
    """An int field (never a bool); missing is ``default`` (None: required)."""
    value: int = _field(record, key, int, default)
    return value


def optional_integer(record: Mapping[str, Any], key: str) -> int | None:
    """An int field that may be missing or null."""
    return None if record.get(key) is None else integer(record, key)


def flag(record: Mapping[str, Any], key: str, default: bool | None = None) -> bool:
    """A bool field; missing is ``default`` (None: required)."""
    value: bool = _field(record, key, bool, default)
    return value


def items(record: Mapping[str, Any], key: str, default: list[Any] | None = None) -> list[Any]:
    """A list field; missing is ``default`` (None: required)."""
    value: list[Any] = _field(record, key, list, default)
    return value


def mapping(record: Mapping[str, Any], key: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object field; missing is ``default`` (None: required)."""
    value: dict[str, Any] = _field(record, key, dict, default)
    return value


def texts(record: Mapping[str, Any], key: str, default: list[Any] | None = None, limit: int = 500) -> tuple[str, ...]:
    """A list of strings, each cut to ``limit``; missing is ``default`` (None: required)."""
    found = items(record, key, default)
    if not all(isinstance(v, str) for v in found):
        raise Malformed(f"{key!r} holds a value that is not a string")
    return tuple(v[:limit] for v in found)


def objects(record: Mapping[str, Any], key: str, default: list[Any] | None = None) -> tuple[dict[str, Any], ...]:
    """A list of objects; missing is ``default`` (None: required)."""
    found = items(record, key, default)
    if not all(isinstance(v, dict) for v in found):
        raise Malformed(f"{key!r} holds a value that is not an object")
    return tuple(found)
