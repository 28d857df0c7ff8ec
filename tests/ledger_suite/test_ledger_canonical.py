"""RFC 8785 canonical JSON against the official vectors, and refusal of what it cannot represent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.canonical import canonical_sha256, canonicalize, is_canonical
from ledger.errors import LedgerError

VECTORS = Path(__file__).resolve().parents[1] / "data" / "jcs"
NAMES = sorted(p.name for p in (VECTORS / "input").glob("*.json"))


def test_all_vectors_present() -> None:
    assert len(NAMES) == 6


@pytest.mark.parametrize("name", NAMES)
def test_official_vectors(name: str) -> None:
    value = json.loads((VECTORS / "input" / name).read_text(encoding="utf-8"))
    expected = (VECTORS / "output" / name).read_bytes().rstrip(b"\n")
    assert canonicalize(value) == expected
    hex_text = (VECTORS / "outhex" / name.replace(".json", ".txt")).read_text().split()
    assert canonicalize(value).hex() == "".join(hex_text)


def test_plain_json_dumps_would_differ_on_vectors() -> None:
    """The reason for RFC 8785: sort_keys JSON is not canonical for these inputs."""
    differing = 0
    for name in NAMES:
        value = json.loads((VECTORS / "input" / name).read_text(encoding="utf-8"))
        plain = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        differing += plain != canonicalize(value)
    assert differing >= 2


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 2**53 + 1, -(2**60), {1: "non-string key"}, b"bytes"])
def test_unrepresentable_values_are_rejected(bad: object) -> None:
    with pytest.raises(LedgerError):
        canonicalize({"v": bad})


def test_hash_is_stable_and_order_free() -> None:
    assert canonical_sha256({"b": 1, "a": [1.0, 0.1]}) == canonical_sha256({"a": [1, 0.1], "b": 1.0})
    assert is_canonical(b'{"a":1}') and not is_canonical(b'{ "a": 1 }')
