"""Seeded float samples for comparing :func:`ledger.canonical.canonicalize` with the ``rfc8785`` package.

Two populations: 64-bit patterns drawn uniformly over every finite double (so
each exponent, subnormals included, is as likely as any other), and bands
where number formatting changes: integral values from 2^53 to 1e16 (where a
float prints as ``9007199254740992.0`` in Python but as an integer in JCS),
integral values up to and past 1e21 (where ECMAScript switches to exponent
form), and the doubles next to 1e-7, 1e-4, 2^53, 1e16 and 1e21.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator

import rfc8785

from ledger.canonical import canonicalize

BOUNDARIES = (1e-7, 1e-6, 1e-4, 1.0, 2.0**53, 1e16, 1e17, 1e21)
_EXPONENT_MASK = 0x7FF0_0000_0000_0000


def finite_from_bits(rng: random.Random) -> float:
    """A finite double whose bit pattern is uniform over all finite doubles (NaN/inf patterns redrawn)."""
    while True:
        bits = rng.getrandbits(64)
        if bits & _EXPONENT_MASK != _EXPONENT_MASK:
            return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])


def integral_in_band(rng: random.Random) -> float:
    """An integral double: uniform integers in [2^53, 1e16] or [1e16, 1e22], or a power of ten times a digit."""
    pick = rng.randrange(3)
    if pick == 0:
        value = float(rng.randint(2**53, 10**16))
    elif pick == 1:
        value = float(rng.randint(10**16, 10**22))
    else:
        value = float(rng.randint(1, 99) * 10 ** rng.randint(14, 22))
    return value


def near_boundary(rng: random.Random) -> float:
    """A double within 1000 ulps of a formatting boundary."""
    value = rng.choice(BOUNDARIES)
    direction = math.inf if rng.random() < 0.5 else -math.inf
    for _ in range(rng.randrange(1000)):
        value = math.nextafter(value, direction)
    return value


def sample_floats(seed: int, count: int) -> Iterator[float]:
    """``count`` floats: 70% uniform bit patterns, 30% the bands, each sign equally likely."""
    rng = random.Random(seed)
    for _ in range(count):
        draw = rng.random()
        if draw < 0.7:
            yield finite_from_bits(rng)
            continue
        value = integral_in_band(rng) if draw < 0.9 else near_boundary(rng)
        yield -value if rng.random() < 0.5 else value


def mismatches(seed: int, count: int, limit: int = 10) -> list[tuple[float, bytes, bytes]]:
    """Floats whose canonical bytes differ from ``rfc8785.dumps``, alone and inside an object (up to ``limit``)."""
    found: list[tuple[float, bytes, bytes]] = []
    for value in sample_floats(seed, count):
        ours, theirs = canonicalize(value), rfc8785.dumps(value)
        if ours != theirs or canonicalize({"v": value}) != b'{"v":' + theirs + b"}":
            found.append((value, ours, theirs))
            if len(found) >= limit:
                break
    return found
