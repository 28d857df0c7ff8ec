"""What a hidden-test driver records about the submission: plain, typed data. Stdlib only.

Runs INSIDE the sandbox, in the judge's driver process, beside the answerer
that imported the submission (``driver.py``). It judges nothing there either:
a driver calls the submission and records what came back (``see``), what a
call did (``call``), or what a block raised (``raised``). The observations leave
the sandbox as canonical data and are compared, on the host, with the
reference solution's observations for the same driver. A submission that
rewrites them gains only if it writes exactly what the reference produced,
which it can learn only by computing it.

Encoding (``encode``) is type-strict and never calls the submission's code:
a value is read only when its type is exactly a builtin type (``bool``,
``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``,
``set``, ``frozenset``, ``None``) or ``decimal.Decimal``; anything else
(a look-alike with its own ``__eq__``, an ``int`` subclass, a proxy) is an
opaque object, recorded only by identity: ``["ref", k]`` is the k-th distinct
object the test observed, so "the same object again" stays checkable.
Exceptions are recorded by their nearest builtin exception class, found in
the real MRO by identity, never by a name the class reports about itself.

Inputs drawn at random come from ``drawn(label)``, never from a fixed seed:
the host gives each submission seeds it cannot know before it is written.

Driver style: guard valid and invalid calls alike with ``call`` or
``raised``, so a submission cannot tell from the harness which calls are
expected to fail. ``within(min_s, max_s, clock=...)`` marks a test whose
time the monitor (the harness server, outside this process) measures: the
code's CPU time from the kernel (``"cpu"``) or the wall time (``"wall"``);
the host reads the bounds from the driver's source, not from here.

``CODE`` is the code's process as the driver knows it: its pid (the server
tells the driver, never the answerer), for drivers that measure the code from
outside, through the kernel (``/proc/<pid>``: its memory, its CPU time), and
``stop()``, which kills it from outside; what the test recorded then stands.
"""

from __future__ import annotations

import builtins
import contextlib
import decimal
import os
import random
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

MAX_NODES = 200_000  # per test: a bigger observation is recorded as too large
MAX_DEPTH = 64
MAX_INT_BITS = 10_000  # beyond: hex, since str(int) stops at 4,300 digits
SEED = 0  # the run's seed for drawn inputs (``drawn``), set by the driver from the request

_mro_of = type.__dict__["__mro__"].__get__
_BUILTIN_EXCEPTIONS = {
    id(cls): name
    for name, cls in vars(builtins).items()
    if isinstance(cls, type) and issubclass(cls, BaseException)
}
_int_repr = int.__repr__
_int_hex = int.__format__
_float_repr = float.__repr__
_decimal_str = decimal.Decimal.__str__
_list_iter = list.__iter__
_dict_items = dict.items
_id = id
_type = type
_isinstance = isinstance
_len = len


class Recorder:
    """The observations of the test that is running; the runner resets it per test."""

    def __init__(self) -> None:
        self.records: list[Any] = []
        self.refs: dict[int, int] = {}
        self.kept: list[Any] = []  # observed objects stay alive, so their ids are not reused
        self.nodes = 0

    def reset(self) -> list[Any]:
        records = self.records
        self.records = []
        self.refs = {}
        self.kept = []
        self.nodes = 0
        return records

    def ref(self, value: Any) -> list[Any]:
        key = _id(value)
        if key not in self.refs:
            self.refs[key] = _len(self.refs)
            self.kept.append(value)
        return ["ref", self.refs[key]]


RECORDER = Recorder()


class CodeProcess:
    """The process that runs the submission (the answerer), as the driver knows it.

    ``pid`` is set by the driver from the server's ``code <pid>`` control line (None until then, and in a
    process that shares the code's). ``stop()`` kills the code's processes from outside (SIGKILL; the
    answerer runs as our uid) and marks the test as stopped by the judge: the call in flight ends as
    ``Lost``, and the test's observations still count, as those of a test the judge ended on purpose (a call
    over its CPU cap). ``held()`` counts the code's objects that have crossed to the judge as references:
    the answerer keeps each of them alive for as long as it runs (``wire.Peer.objects``; the protocol has
    no release), memory the code itself no longer holds. The code's processes are ``pids()``: every
    process in the box but this one and its ancestors (the box has its own pid namespace, and the server
    sweeps it after each run), so a child or a double-forked daemon of the code is the code's too."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.stopped = False
        self.held: Callable[[], int] = lambda: 0  # how many of the code's objects the judge holds (driver.py)
        self.judge: set[int] | None = None  # this process and its ancestors, read once: they do not change

    def pids(self) -> list[int]:
        """The code's processes: the answerer first, then every other process that is not the judge's."""
        if self.pid is None:
            return []
        if self.judge is None:
            self.judge = _ancestors(os.getpid())
        judge = self.judge
        others = [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) not in judge and int(e) != self.pid]
        return [self.pid, *sorted(others)]

    def stop(self) -> None:
        self.stopped = True
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, the state letter first (``[0]``; the parent's
    pid ``[1]``); None once ``pid`` is gone or the kernel refuses it. Read as bytes, up to the last ``)``: the
    name, which a process sets for itself, may hold spaces, parentheses and bytes that are not text."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].decode("ascii").split()
    except (OSError, UnicodeDecodeError):
        return None


def _ancestors(pid: int) -> set[int]:
    """``pid`` and its ancestors, read from ``/proc`` (the judge's processes: this driver, the server, bwrap)."""
    seen = {0, 1}
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            pid = int((stat_fields(pid) or [])[1])
        except (ValueError, IndexError):
            break
    return seen


CODE = CodeProcess()


def exception_name(exc: BaseException, group: tuple[type[BaseException], ...] = ()) -> str:
    """``A|B`` when ``exc`` is an instance of a class in ``group``, else its nearest builtin exception class."""
    mro = _mro_of(_type(exc))
    ids = {_id(cls) for cls in mro}
    if group and any(_id(cls) in ids for cls in group):
        return "|".join(sorted(_BUILTIN_EXCEPTIONS.get(_id(cls), "?") for cls in group))
    for cls in mro:
        name = _BUILTIN_EXCEPTIONS.get(_id(cls))
        if name is not None:
            return name
    return "?"


def encode(value: Any, recorder: Recorder = RECORDER) -> Any:
    """``value`` as canonical, typed JSON data (see the module docstring)."""
    return _encode(value, recorder, 0, set())


def _encode(value: Any, rec: Recorder, depth: int, open_ids: set[int]) -> Any:
    rec.nodes += 1
    if rec.nodes > MAX_NODES:
        raise _TooLarge
    kind = _type(value)
    if value is None:
        return ["none"]
    if kind is bool:
        return ["bool", value is True]
    if kind is int:
        if value.bit_length() > MAX_INT_BITS:
            return ["int", "0x" + _int_hex(value, "x")]
        return ["int", _int_repr(value)]
    if kind is float:
        return ["float", _float_repr(value)]
    if kind is str:
        return ["str", value]
    if kind is bytes:
        return ["bytes", value.hex()]
    if kind is decimal.Decimal:
        return ["decimal", _decimal_str(value)]
    if kind in (list, tuple, dict, set, frozenset):
        if depth >= MAX_DEPTH:
            return ["too-deep"]
        key = _id(value)
        if key in open_ids:
            return ["cycle"]
        open_ids.add(key)
        try:
            if kind is dict:
                items = [[_encode(k, rec, depth + 1, open_ids), _encode(v, rec, depth + 1, open_ids)]
                         for k, v in _dict_items(value)]
                return ["dict", items]
            parts = [_encode(item, rec, depth + 1, open_ids) for item in _list_iter(list(value))]
            return [kind.__name__, parts]
        finally:
            open_ids.discard(key)
    return rec.ref(value)


class _TooLarge(Exception):
    pass


def _record(observation: Any) -> None:
    RECORDER.records.append(observation)


def see(value: T) -> T:
    """Record ``value`` (exactly as typed) and hand it back."""
    try:
        _record(["value", encode(value)])
    except _TooLarge:
        _record(["too-large"])
    return value


def call(func: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
    """Call ``func``; record what it returned or the exception it raised (which is swallowed)."""
    try:
        result = func(*args, **kwargs)
    except BaseException as exc:
        _record(["raised", exception_name(exc)])
        return None
    try:
        _record(["returned", encode(result)])
    except _TooLarge:
        _record(["too-large"])
    return result


@contextmanager
def raised(*group: type[BaseException]) -> Iterator[None]:
    """Record whether the block raised, and what; the exception is swallowed.

    ``raised(TypeError, ValueError)`` records one label for either class, for
    contracts that allow several.
    """
    try:
        yield
    except BaseException as exc:
        _record(["raised", exception_name(exc, group)])
    else:
        _record(["no-raise"])


def recursion(func: Callable[..., Any], *args: Any) -> list[Any]:
    """``[func(*args), d]`` where ``d`` counts, up to 2, the activations of one function of the submission's
    file that overlapped during the call (1: it never calls itself). ``func`` is the submission's: the
    measure is taken in the process that runs it, which the driver only asks (``wire.py``)."""
    measured: list[Any] = func._lm_recursion(*args)  # type: ignore[attr-defined]
    return measured


def drawn(label: str) -> random.Random:
    """A random source for a test's inputs, seeded by the run's seed (the host draws one per submission and
    battle: ``tasks/hidden_suite.py``) and ``label``. It records ``["drawn", label]``, so the host knows which
    tests' observations depend on the seed and runs the reference on those with the submission's seed."""
    _record(["drawn", str(label)])
    return random.Random(f"{SEED}:{label}")


def within(min_s: float | None = None, max_s: float | None = None, clock: str | None = None) -> Callable[[T], T]:
    """Mark a test's time bounds and the clock they are read on (``"cpu"``: the code's CPU time, for work;
    ``"wall"``: for waiting). A no-op here: the host reads the literal bounds from the source."""

    def mark(func: T) -> T:
        return func

    return mark
