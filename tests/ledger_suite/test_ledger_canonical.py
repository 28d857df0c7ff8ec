"""RFC 8785 canonical JSON against the official vectors, and refusal of what it cannot represent."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest
import rfc8785
from jcs_floats import mismatches

from ledger.canonical import canonical_sha256, canonicalize, is_canonical, reference_canonicalize
from ledger.errors import LedgerError

VECTORS = Path(__file__).resolve().parents[1] / "data" / "jcs"
NUMBER_SAMPLES = Path(__file__).resolve().parents[1] / "data" / "jcs-numbers.tsv"
RANDOM_FLOATS = 1_000_000
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
    assert rfc8785.dumps(value) == expected  # the package the floats are compared with agrees on the vectors


def _number_samples() -> list[tuple[float, str]]:
    rows = [line.split("\t") for line in NUMBER_SAMPLES.read_text().splitlines() if not line.startswith("#")]
    return [(struct.unpack(">d", bytes.fromhex(bits))[0], text) for bits, text in rows]


def test_rfc8785_appendix_b_number_samples() -> None:
    """Every number sample of RFC 8785 Appendix B, alone and inside an array, in both implementations."""
    samples = _number_samples()
    assert len(samples) == 26
    for value, text in samples:
        if text == "error":
            with pytest.raises(LedgerError):
                canonicalize(value)
            continue
        assert canonicalize(value) == text.encode(), value
        assert canonicalize([value, {"n": value}]) == b'[%s,{"n":%s}]' % (text.encode(), text.encode())
        assert rfc8785.dumps(value) == text.encode()


@pytest.mark.slow
def test_a_million_random_floats_match_the_rfc8785_package() -> None:
    """Bit patterns uniform over all finite doubles, plus integral values 2^53..1e22 and the formatting boundaries.

    The fast path once wrote whole floats in (2^53, 1e16) as ``9007199254740992.0``.
    """
    assert mismatches(seed=8785, count=RANDOM_FLOATS) == []


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


def _random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-(2**53) + 1, 2**53 - 1)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.0, 0.5, 1e-7, 1e-4, 0.0001234, 123456.789, 1e16, 1e21, 2.5e-5, 1e300])
    if kind == 3:
        return rng.uniform(-1e6, 1e6) * rng.choice([1, 1e-10, 1e12, 1e20])
    if kind == 4:
        return round(rng.random(), rng.randrange(1, 8))
    if kind == 5:
        return "".join(rng.choice(["a", "é", "\n", '"', "\\", "\u2028", "\x7f", "\U0001f600", "\x01"])
                       for _ in range(rng.randrange(6)))
    if kind == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["a", "B", "_", "key", "\u20ac", "\U0001f600", "\ufb33", "10", "1"]
    return {rng.choice(keys) + str(i): _random_value(rng, depth + 1) for i in range(rng.randrange(5))}


def test_fast_path_matches_reference_on_random_values() -> None:
    rng = random.Random(8785)
    for _ in range(3000):
        value = _random_value(rng)
        assert canonicalize(value) == reference_canonicalize(value), value
