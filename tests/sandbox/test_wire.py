"""The wire between driver and answerer (``harness/wire.py``), on the host: two peers in one process.

The harness runs it in the box in two processes; the protocol itself (typed values, references,
nested callbacks, capped and checked frames) is the same with both peers here, each served by threads.
"""

from __future__ import annotations

import decimal
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from wire_pair import WIRE, wire_pair


class Counter:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, value: Any) -> int:
        self.items.append(value)
        return len(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def apply(self, func: Any, *args: Any) -> Any:
        return func(*args)

    def from_thread(self, func: Any) -> Any:
        out: list[Any] = []
        thread = threading.Thread(target=lambda: out.append(func()))
        thread.start()
        thread.join()
        return out[0]

    def fail(self) -> None:
        raise KeyError("missing")

    def read(self, obj: Any, name: str) -> Any:
        return getattr(obj, name)


@pytest.fixture()
def pair() -> Iterator[tuple[Any, Any]]:
    """(driver peer, the answerer's Counter class as the driver sees it)."""
    with wire_pair(lambda: Counter) as made:
        yield made


def test_plain_values_cross_as_exactly_builtin_values(pair: tuple[Any, Any]) -> None:
    _, counter_class = pair
    counter = counter_class()
    values = [None, True, 7, -2**80, 0.1, float("inf"), "s\ud800", b"\x00", decimal.Decimal("1.50"),
              [1, (2, {3: frozenset({4})})], {"k": {5}}, ValueError]
    for value in values:
        back = counter.apply(lambda v: v, value)
        assert type(back) is type(value) and (back == value or back is value), value
    assert str(counter.apply(lambda v: v, decimal.Decimal("1.50"))) == "1.50"


def test_objects_stay_where_they_live_and_keep_their_identity(pair: tuple[Any, Any]) -> None:
    _, counter_class = pair
    counter = counter_class()
    assert type(counter) is WIRE["Proxy"]
    token = object()
    assert counter.add(token) == 1 and len(counter) == 1
    assert counter.apply(lambda: counter) is counter  # the answerer's object comes back as the same proxy
    assert counter.apply(lambda t: t, token) is token  # the driver's object goes and comes back as itself


def test_callbacks_nest_and_come_from_the_codes_own_threads(pair: tuple[Any, Any]) -> None:
    _, counter_class = pair
    counter = counter_class()
    assert counter.apply(lambda f: f(20) + 1, lambda x: counter.apply(lambda: x * 2)) == 41
    assert counter.from_thread(lambda: "from a code thread") == "from a code thread"


def test_exceptions_arrive_as_their_nearest_builtin_class(pair: tuple[Any, Any]) -> None:
    _, counter_class = pair
    counter = counter_class()
    with pytest.raises(KeyError) as caught:
        counter.fail()
    assert type(caught.value) is KeyError and caught.value.args == ("'missing'",)  # the answerer's str(exc)


def test_the_code_may_only_call_the_drivers_objects(pair: tuple[Any, Any]) -> None:
    """Here the driver serves calls only: reading an attribute of its object is refused, as an AttributeError
    (so ``hasattr`` says False)."""
    _, counter_class = pair
    counter = counter_class()
    mine = Counter()
    with pytest.raises(AttributeError):
        counter.read(mine, "items")
    assert counter.apply(len, mine) == 0  # calling what the driver handed over is allowed


@pytest.mark.parametrize("frame", [
    struct.pack("!I", 1 << 30),  # over the size cap
    struct.pack("!I", 4) + b"\xff\xff\xff\xff",  # not JSON
    struct.pack("!I", 2) + b"{}",  # not a message
    struct.pack("!I", 23) + b'["return",null,"",[],[]',  # short
    struct.pack("!I", 31) + b'["return",null,"",[["a",99]],[]]',  # a reference to nothing
    struct.pack("!I", 38) + b'["raise",null,"NotAnException",[],[]]',  # no such builtin exception
    struct.pack("!I", 26) + b'[["return"],null,"",[],[]]',  # an op that is not a string (unhashable)
    struct.pack("!I", 25) + b'["return",null,"",[],[]]x',  # trailing bytes after the message
    struct.pack("!I", 6) + b"\xff" * 6,  # not UTF-8
])
def test_a_malformed_frame_ends_the_call_as_lost(frame: bytes) -> None:
    ours, theirs = socket.socketpair()
    driver = WIRE["Peer"]("d", socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)[0], lambda op, name: False)
    driver.local.conn = WIRE["Connection"](ours)
    theirs.sendall(frame)
    theirs.shutdown(socket.SHUT_WR)
    with pytest.raises(WIRE["Lost"]):
        driver.ask(WIRE["Message"]("import"))
    assert driver.lost
    with pytest.raises(WIRE["Lost"]):  # and every later call, at once
        driver.ask(WIRE["Message"]("import"))
