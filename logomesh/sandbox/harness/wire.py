"""The wire between the judge's process and the code's process: one typed message protocol. Stdlib only.

Runs INSIDE the sandbox, in both processes of a hidden-suite run (``server.py``
starts them): the *driver* (``driver.py``: the judge, holds the result channel
and the nonces, loads ``observe`` and the drivers) and the *answerer*
(``answerer.py``: imports the submission and answers calls, nothing more).
Each side is a ``Peer``; the driver never runs the submission's code, it only
reads data from this wire.

Connections. Every thread that asks the other side something has a
connection of its own (an AF_UNIX stream socketpair): the asking side makes
the pair and hands one end over the *control* socket (AF_UNIX seqpacket, one
``b"attach"`` datagram carrying the fd, ``socket.send_fds``); the other side
serves it in a thread of its own. So concurrent driver threads make
concurrent calls, and code that calls a driver's callback from a thread of
its own gets a connection too. The driver's main thread's connection is the
first one sent (``b"main"``); the answerer serves it in its main thread.

Frames: a 4-byte big-endian length, then a JSON list ``[op, target, name,
args, kwargs]`` (``Message``), at most ``MAX_MESSAGE`` bytes. Requests:

- ``getattr`` / ``setattr`` / ``delattr`` ``target.name`` (setattr: ``args == [value]``);
- ``call`` ``target(*args, **kwargs)``; ``callattr`` ``target.name(*args, **kwargs)``;
- ``special`` one of ``SPECIAL`` (``len``, ``iter``, ``==``, ``[]``, ``with`` …) on ``target``;
- ``import`` / ``reload`` the submission; ``imported`` and ``test`` (one of the
  purple agent's own tests, by name: ``runner.py``) (answerer only).

Replies: ``return`` (``args == [value]``) or ``raise`` (``name`` = the nearest
builtin exception class, ``exception_name``; from the answerer, ``args`` = the
exception's message and the ``function:line`` of its traceback's frames in
``solution.py``, plain bounded strings, so a finding can quote them; the
driver sends none of its own). While a side waits for its
reply it serves the other side's requests on the same connection (a
callback, nested as deep as ``MAX_NESTING``).

Values (``args``, ``kwargs`` values, ``return``): plain data is encoded
type-strictly as in ``observe.py`` (a value is read only when its type is
exactly a builtin or ``Decimal``) and decoded into exactly-builtin values;
builtin classes cross by name (``["class", "ValueError"]``); anything else
stays where it lives and crosses as a reference, ``["a", n]`` (the
answerer's n-th object; ``["a", n, [names]]`` the first time, with the
methods its class defines) or ``["d", n]`` (the driver's), and the other
side holds a ``Proxy`` that turns attribute reads, calls and the common
special methods into requests. ``["m", n, name]`` is the answerer's object
n's bound method ``name``. An exception class of the code crosses as
``["exc", n, name, base]`` and the asking side makes a local class of that
name deriving from the builtin ``base`` (``Peer._mirror``); a ``raise`` of
one of its instances names it in the reply's target, so ``except`` and
``pytest.raises`` catch the code's own classes. A side refuses requests about its own objects
that its ``allowed`` check refuses (the driver serves only calls, public
attributes and ``SPECIAL``: nothing of the judge is reachable through a
callback). Anything malformed (size, depth, tag, unknown object) breaks the
connection: the waiting side raises ``Lost``, which a driver records as a
failed test.

A *guarded* answerer (the code of a run of the purple's own tests, whose asking
side is untrusted: ``answerer.py``) serves public names only (``public``),
hands out nothing but what the code defines (``reachable``) and sends an
exception's message without its frames.
"""

from __future__ import annotations

import _thread
import builtins
import decimal
import importlib.machinery as machinery
import json
import json.encoder
import json.scanner
import operator
import random
import socket
import struct
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

MAX_MESSAGE = 8 << 20  # bytes in one frame (200,000 encoded values take about 3 MB)
MAX_DEPTH = 100  # containers nest at most this deep on the wire (observe.py records "too-deep" past 64)
MAX_NODES = 250_000  # values in one message (observe.py records "too-large" past 200,000)
MAX_NESTING = 64  # requests nested inside requests on one connection
MAX_DETAIL = 200  # characters of an exception's message, or of one of its frames, that cross
MAX_WHERE = 3  # frames of an exception's traceback in solution.py that cross
MAX_HISTORY = 20_000  # calls a kept history holds (``Peer.history``; a race scenario makes a few hundred)
MAX_CONNECTIONS = 512  # connections from the answerer the driver serves at once (one per live code thread)
HEADER = struct.Struct("!I")
PR_SET_DUMPABLE = 4
REQUESTS = frozenset({"getattr", "setattr", "delattr", "call", "callattr", "special", "import", "reload", "imported",
                      "test"})
REPLIES = frozenset({"return", "raise"})
_OPS = REQUESTS | REPLIES

_BUILTIN_CLASSES: dict[str, type] = {name: value for name, value in vars(builtins).items()
                                     if isinstance(value, type) and not name.startswith("_")}
_CLASS_NAMES: dict[int, str] = {id(cls): name for name, cls in _BUILTIN_CLASSES.items()}
_EXCEPTIONS: dict[int, str] = {id(cls): name for name, cls in _BUILTIN_CLASSES.items()
                               if issubclass(cls, BaseException)}
_mro_of = type.__dict__["__mro__"].__get__
# One encoder and one scanner, made once: ``json.dumps`` (and ``JSONEncoder.encode``) build the C encoder on every
# call. The frames' JSON is exactly ``json.dumps(raw, separators=(",", ":"))`` (no cycles: ``encode`` refuses them).
_c_encoder: Callable[[Any, int], Any] = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
_join = "".join
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_pack, _unpack_from = HEADER.pack, HEADER.unpack_from
_type, _id, _len, _isinstance = type, id, len, isinstance
_int_format, _float_repr, _decimal_str = int.__format__, float.__repr__, decimal.Decimal.__str__
_dict_items, _list_iter = dict.items, list.__iter__
_function_type = _type(lambda: None)
_MISSING = object()
# What a guarded answerer never hands out (``reachable``): the machinery a test could read the code itself through.
_INTERNALS = frozenset(map(_id, (types.FrameType, types.CodeType, types.TracebackType, types.CellType)))
_ROUTINES = frozenset(map(_id, (types.FunctionType, types.BuiltinFunctionType, types.MethodWrapperType,
                                types.WrapperDescriptorType, types.MethodDescriptorType)))
# Modules a test may reach through the code's names, so that it can fake them (``mock.patch("solution.time.time")``).
FAKEABLE = frozenset({"time", "random", "datetime", "math"})

SPECIAL: dict[str, Callable[..., Any]] = {
    "__len__": len, "__iter__": iter, "__next__": next, "__bool__": bool, "__hash__": hash,
    "__str__": str, "__repr__": repr,
    "__getitem__": operator.getitem, "__setitem__": operator.setitem, "__delitem__": operator.delitem,
    "__contains__": operator.contains,
    "__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
    "__gt__": operator.gt, "__ge__": operator.ge,
    "__enter__": lambda obj: _type(obj).__enter__(obj),
    "__exit__": lambda obj, *exc: _type(obj).__exit__(obj, *exc),
    "__instancecheck__": lambda obj, other: _isinstance(other, obj),
    "__recursion__": lambda obj, *args: _recursion(obj, *args),
    "__schedule__": lambda obj, seed, chance: _schedule(int(seed), float(chance)),
}
ANSWERER_ONLY = frozenset({"__recursion__", "__schedule__"})  # specials the driver never serves
# Bound when this module loads, before the submission is imported: code that rewrites them cannot steer
# where its own thread yields.
_settrace, _gettrace, _Random, _sleep = sys.settrace, sys.gettrace, random.Random, time.sleep
_monotonic_ns, _get_ident = time.monotonic_ns, threading.get_ident
_schedules = threading.local()
_WIRE = globals()  # this module's namespace: the frames whose globals it is run the judge's code
_start_new_thread = _thread.start_new_thread


def spawn(function: Callable[..., Any], *args: Any) -> None:
    """Run ``function(*args)`` in a new thread, through the interpreter's own primitive bound when this module
    loaded: code that rewrites ``threading`` (to run threads one at a time, say) cannot stop the answerer
    serving connections at once."""
    _start_new_thread(function, args)

YIELD_S = 0.0001  # how long a perturbed thread sleeps at a chosen opcode: long enough for another to run


def _solution_file() -> str | None:
    """The submission's file, as its frames name it (None before it is imported)."""
    return getattr(sys.modules.get("solution"), "__file__", None)


def _schedule(seed: int, chance: float) -> bool:
    """From now on, this thread (serving one driver connection) yields at seeded random opcodes of every frame
    but the wire's own, with probability ``chance`` each (0: stop). True if the schedule set before, if any,
    stayed in force: the code can lift it, and the race probe counts a lifted schedule as a hit.

    Which frames are perturbed is decided by identity (a frame runs the wire's code when its globals are this
    module's namespace), never by what the code says of itself: a ``co_filename`` is the code's to choose, and
    code that named its methods after a library file hid its races from a schedule keyed on ``solution.py``.
    Lifted means the thread's trace function changed, or a frame the schedule traced turned its own tracing
    off (``f_trace_opcodes``) or dropped its tracer (``f_trace``: its return was never seen).

    This is the one instrument the judge puts in the code's process, and it only moves the scheduler:
    the history of calls and answers is recorded by the driver's threads. CPython's lock on the interpreter
    lets a thread switch only where the running one checks for a request, so a check-then-act window a few
    opcodes wide is never entered by a second thread when calls only arrive over the wire (0 of 2,000
    rounds of 8 concurrent clients, with or without CPU pressure; docs/sandbox.md, "Races")."""
    state = _schedules
    previous = getattr(state, "tracer", None)
    intact = previous is None or (_gettrace() is previous and not state.lifted and state.open == 0)
    if chance <= 0:
        state.tracer = None
        _settrace(None)
        return intact
    draw = _Random(seed).random
    state.lifted, state.open = False, 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            if draw() < chance:
                _sleep(YIELD_S)
        elif event == "return":
            state.open -= 1
            if not frame.f_trace_opcodes:
                state.lifted = True
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_globals is _WIRE:
            return None
        state.open += 1
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    state.tracer = tracer
    _settrace(tracer)
    return intact


def _recursion(func: Callable[..., Any], *args: Any) -> list[Any]:
    """``[func(*args), d]``: the most activations of one function of the submission's file that overlapped
    during the call, counted up to 2 (``observe.recursion``; measured where the code runs, an answer)."""
    filename = _solution_file()
    depth: dict[Any, int] = {}
    deepest = [0]

    def profiler(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if code.co_filename != filename:
            return
        if event == "call":
            depth[code] = depth.get(code, 0) + 1
            deepest[0] = max(deepest[0], depth[code])
        elif event == "return":
            depth[code] = depth.get(code, 1) - 1

    sys.setprofile(profiler)
    try:
        value = func(*args)
    finally:
        sys.setprofile(None)
    return [value, min(deepest[0], 2)]


def public(op: str, name: str) -> bool:
    """What a side may ask of objects it does not own when it is not trusted (the code of the driver's objects,
    the purple's tests of the code's): calls, special methods (the wire refuses ``ANSWERER_ONLY`` to both) and
    public attributes: the interface, never a private name, whose presence tells one implementation from
    another without running it."""
    attribute = op in ("getattr", "setattr", "delattr", "callattr")
    return op in ("call", "special") or (attribute and not name.startswith("_"))


def non_dumpable() -> bool:
    """Make this process non-dumpable: another process of the same uid (the code's) can then neither ptrace it
    nor read its memory or open its ``/proc`` fds. False when the kernel refused."""
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reachable(value: Any) -> bool:
    """Whether a guarded answerer may hand ``value`` out: what the code defines (its functions, classes and their
    instances), plain objects it returns, and the ``FAKEABLE`` modules; never a module, a frame, a code object or
    a function of anything else, through which a test could read the code rather than run it."""
    kind = _type(value)
    if kind is types.ModuleType:
        return _ours(getattr(value, "__name__", None))
    if _id(kind) in _INTERNALS:
        return False
    if _id(kind) in _ROUTINES or _isinstance(value, type):
        return _ours(getattr(value, "__module__", None))
    return True


def _ours(module: Any) -> bool:
    return module == "solution" or module in FAKEABLE


def _exception_base(cls: type) -> str | None:
    """The name of ``cls``'s nearest builtin exception class, when ``cls`` is an exception class (else None)."""
    for base in _mro_of(cls):
        name = _EXCEPTIONS.get(_id(base))
        if name is not None:
            return name
    return None


class Lost(BaseException):
    """The other side broke the protocol or went away; a driver records the test as ended by it."""


class Malformed(Exception):
    """A frame that is not a well-formed message."""


class TooBig(Exception):
    """A value too large or too deep for the wire: it crosses as a reference instead."""


class Message:
    """One frame: ``[op, target, name, args, kwargs]`` on the wire (see the module docstring).

    (A plain class: this source is exec'd in a namespace that is not a module, where ``dataclass`` fails.)
    """

    __slots__ = ("args", "kwargs", "name", "op", "target")

    def __init__(self, op: str, target: Any = None, name: str = "", args: tuple[Any, ...] = (),
                 kwargs: tuple[tuple[str, Any], ...] = ()) -> None:
        self.op = op
        self.target = target  # an encoded reference (requests about an object), else None
        self.name = name  # attribute, special method, or (raise) exception class
        self.args = args  # encoded values
        self.kwargs = kwargs  # (name, encoded value)

    def to_bytes(self) -> bytes:
        return frame([self.op, self.target, self.name, list(self.args), [list(kv) for kv in self.kwargs]])

    @classmethod
    def parse(cls, data: bytes | bytearray) -> Message:
        try:
            text = data.decode()
            raw, end = _scan(text, 0)
        except (ValueError, StopIteration, RecursionError, MemoryError) as exc:
            raise Malformed("not JSON") from exc
        if end != _len(text):
            raise Malformed("not JSON")
        if _type(raw) is not list or _len(raw) != 5:
            raise Malformed("not a message")
        op, target, name, args, kwargs = raw
        if _type(op) is not str or op not in _OPS:  # a list here is unhashable: check the type first
            raise Malformed("unknown op")
        if _type(name) is not str or _type(args) is not list or _type(kwargs) is not list:
            raise Malformed("bad fields")
        if not kwargs:  # the usual case
            return cls(op, target, name, tuple(args))
        pairs = []
        for pair in kwargs:
            if _type(pair) is not list or _len(pair) != 2 or _type(pair[0]) is not str:
                raise Malformed("bad keyword")
            pairs.append((pair[0], pair[1]))
        return cls(op, target, name, tuple(args), tuple(pairs))


def frame(raw: list[Any]) -> bytes:
    """``raw`` (``[op, target, name, args, kwargs]``) as one frame: its length, then its JSON."""
    data = _join(_c_encoder(raw, 0)).encode()
    return _pack(_len(data)) + data


def exception_name(exc: BaseException) -> str:
    """The nearest builtin exception class of ``exc``, found by identity in its real MRO (as observe.py)."""
    return _exception_base(_type(exc)) or "BaseException"


class Connection:
    """One end of a stream socketpair carrying frames."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.depth = 0  # requests being served inside a wait on this connection
        self.buffer: bytes | bytearray = b""  # received past the last frame (one recv usually brings a whole frame)
        self.scratch = bytearray(8 << 10)  # what recv_into fills (recv(64 KiB) allocates that much every frame)

    def send(self, message: Message) -> None:
        self.send_frame(message.to_bytes())

    def send_frame(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise Lost(f"the other side closed the connection ({exc.__class__.__name__})") from None

    def receive(self) -> Message:
        buffer = self.buffer
        if not buffer:  # one recv usually brings the whole frame: take it without going round _exactly
            try:
                got = self.sock.recv_into(self.scratch)
            except OSError:
                got = 0
            if not got:
                raise Lost("the other side closed the connection")
            self.buffer = buffer = self.scratch[:got]
        if _len(buffer) >= 4 and _len(buffer) >= (size := _unpack_from(buffer)[0]) + 4 and size <= MAX_MESSAGE:
            self.buffer = buffer[size + 4:]
            data = buffer[4:size + 4]
        else:
            data = self._frame()
        try:
            return Message.parse(data)
        except Malformed as exc:
            raise Lost(f"a malformed message ({exc})") from None

    def _frame(self) -> bytes | bytearray:
        header = self._exactly(HEADER.size)
        (size,) = HEADER.unpack(header)
        if size > MAX_MESSAGE:
            raise Lost("a message over the size cap")
        return self._exactly(size)

    def _exactly(self, size: int) -> bytes | bytearray:
        buffer = self.buffer
        while _len(buffer) < size:
            try:
                chunk = self.sock.recv(max(size - _len(buffer), 1 << 16))
            except OSError:
                chunk = b""
            if not chunk:
                raise Lost("the other side closed the connection")
            buffer += chunk
        self.buffer = buffer[size:]
        return buffer[:size]


class Proxy:
    """An object of the other side: attribute reads, calls and special methods become requests."""

    __slots__ = ("_lm_methods", "_lm_peer", "_lm_ref")

    def __init__(self, peer: Peer, ref: list[Any], methods: frozenset[str]) -> None:
        object.__setattr__(self, "_lm_peer", peer)
        object.__setattr__(self, "_lm_ref", ref)
        object.__setattr__(self, "_lm_methods", methods)

    def _lm_special(self, name: str, *args: Any) -> Any:
        return self._lm_peer.request("special", self._lm_ref, name, args, None)

    def __getattr__(self, name: str) -> Any:
        if name in self._lm_methods:
            return BoundProxy(self, name)
        return self._lm_peer.request("getattr", self._lm_ref, name, (), None)

    def __setattr__(self, name: str, value: Any) -> None:
        self._lm_peer.request("setattr", self._lm_ref, name, (value,), None)

    def __delattr__(self, name: str) -> None:
        self._lm_peer.request("delattr", self._lm_ref, name, (), None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._lm_peer.request("call", self._lm_ref, "", args, kwargs)

    def __len__(self) -> int:
        return self._lm_special("__len__")  # type: ignore[no-any-return]

    def __iter__(self) -> Any:
        return self._lm_special("__iter__")

    def __next__(self) -> Any:
        return self._lm_special("__next__")

    def __bool__(self) -> bool:
        return self._lm_special("__bool__")  # type: ignore[no-any-return]

    def __hash__(self) -> int:
        return self._lm_special("__hash__")  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self._lm_special("__str__")  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return self._lm_special("__repr__")  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        return self._lm_special("__getitem__", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._lm_special("__setitem__", key, value)

    def __delitem__(self, key: Any) -> None:
        self._lm_special("__delitem__", key)

    def __contains__(self, item: Any) -> bool:
        return self._lm_special("__contains__", item)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> Any:
        return self._lm_special("__eq__", other)

    def __ne__(self, other: object) -> Any:
        return self._lm_special("__ne__", other)

    def __lt__(self, other: Any) -> Any:
        return self._lm_special("__lt__", other)

    def __le__(self, other: Any) -> Any:
        return self._lm_special("__le__", other)

    def __gt__(self, other: Any) -> Any:
        return self._lm_special("__gt__", other)

    def __ge__(self, other: Any) -> Any:
        return self._lm_special("__ge__", other)

    def __enter__(self) -> Any:
        return self._lm_special("__enter__")

    def __exit__(self, *exc: Any) -> Any:
        return self._lm_special("__exit__", *exc)

    def __instancecheck__(self, other: Any) -> bool:
        return self._lm_special("__instancecheck__", other)  # type: ignore[no-any-return]

    def _lm_recursion(self, *args: Any) -> Any:
        return self._lm_special("__recursion__", *args)


class BoundProxy:
    """``proxy.name`` where ``name`` is a method of the other side's object: calling it is one request."""

    __slots__ = ("name", "owner")

    def __init__(self, owner: Proxy, name: str) -> None:
        self.owner = owner
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        owner = self.owner
        return owner._lm_peer.request("callattr", owner._lm_ref, self.name, args, kwargs)


def _class_methods(value: Any) -> list[str]:
    """The names of the plain functions ``value``'s class (and its Python bases) define, read without calling code."""
    names: list[str] = []
    for cls in _mro_of(_type(value)):
        if _id(cls) in _CLASS_NAMES:
            continue
        namespace = type.__dict__["__dict__"].__get__(cls)
        names += [k for k, v in namespace.items() if _type(v) is _function_type and _type(k) is str]
    return names


class Peer:
    """One side of the wire: its objects by number, the other side's proxies, a connection per thread.

    ``side`` is ``"a"`` (answerer) or ``"d"`` (driver); ``allowed(op, name)`` says which requests about this
    side's own objects it serves; ``actions`` are extra requests it serves with no target (``import``, ``test``). The
    driver serves at most ``MAX_CONNECTIONS`` of the answerer's connections at once; the answerer, whose
    connections come from the driver's own threads, serves every one. A ``guarded`` answerer serves a side that
    must learn the code's answers and nothing of the code itself: what it hands out passes ``reachable``, its
    specials exclude ``ANSWERER_ONLY``, and an exception crosses without its frames.
    """

    def __init__(self, side: str, control: socket.socket, allowed: Callable[[str, str], bool],
                 actions: dict[str, Callable[..., Any]] | None = None, guarded: bool = False) -> None:
        self.side = side
        self.guarded = guarded  # serving a side that must learn only answers (``reachable``; no frames of a raise)
        self.other = "d" if side == "a" else "a"
        self.control = control
        self.allowed = allowed
        self.actions = actions or {}
        self.lock = threading.Lock()
        self.objects: dict[int, Any] = {}  # number -> our object (kept alive, so ids are not reused)
        self.numbers: dict[int, int] = {}  # id(our object) -> number
        self.proxies: dict[int, Proxy] = {}  # number -> the proxy of the other side's object
        self.local = threading.local()
        self.lost: str | None = None
        self.serving = 0  # connections handed over by the other side, being served
        self.history: list[Any] | None = None  # this side's calls and their answers, while one is kept
        self.mirrors: dict[int, type] = {}  # number -> the local class standing for the other side's exception class
        self.mirror_numbers: dict[int, int] = {}  # id(mirror class) -> its number on the other side

    # ---- connections --------------------------------------------------------------------------

    def connection(self) -> Connection:
        """This thread's connection: the one it serves, or a new one handed to the other side."""
        conn: Connection | None = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.hand_over(b"attach")
        return conn

    def hand_over(self, kind: bytes) -> Connection:
        ours, theirs = socket.socketpair()
        try:
            with self.lock:
                socket.send_fds(self.control, [kind], [theirs.fileno()])
        except OSError:
            ours.close()
            self.lost = self.lost or "the other side is gone"
            raise Lost(self.lost) from None
        finally:
            theirs.close()
        conn = Connection(ours)
        self.local.conn = conn
        return conn

    def accept(self) -> tuple[bytes, Connection] | None:
        """The next connection the other side hands over (None when the control socket closes)."""
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self.control, 16, 4)
            except OSError:
                return None
            if not data and not fds:
                return None
            if len(fds) != 1 or (self.side == "d" and self.serving >= MAX_CONNECTIONS):
                for fd in fds:
                    socket.close(fd)
                continue
            try:
                sock = socket.socket(fileno=fds[0])
            except OSError:
                socket.close(fds[0])
                continue
            with self.lock:
                self.serving += 1
            return data, Connection(sock)

    def serve(self, conn: Connection) -> None:
        """Answer requests on ``conn`` (handed over by ``accept``) until it closes, in this thread, which then
        asks on it too."""
        self.local.conn = conn
        try:
            while True:
                request = conn.receive()
                if request.op not in REQUESTS:
                    return
                conn.send_frame(self.perform(request))
        except Lost:
            return
        finally:
            conn.sock.close()
            with self.lock:
                self.serving -= 1

    def serve_in_thread(self, conn: Connection) -> None:
        spawn(self.serve, conn)

    # ---- asking -------------------------------------------------------------------------------

    def ask(self, request: Message, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        """Send ``request`` with ``args``/``kwargs`` encoded; serve nested requests until its reply comes."""
        return self.request(request.op, request.target, request.name, args, kwargs)

    def request(self, op: str, target: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
        """``ask`` without a ``Message``: the proxies' path, one frame built straight from its fields."""
        if self.lost is not None:
            raise Lost(self.lost)
        conn: Connection | None = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.connection()
        encode = self.encode
        sent = [op, target, name, [encode(a) for a in args],
                [[k, encode(v)] for k, v in kwargs.items()] if kwargs else []]
        data = frame(sent)
        history = self.history
        invoked = _monotonic_ns() if history is not None else 0
        try:
            conn.send_frame(data)
            while True:
                reply = conn.receive()
                if reply.op == "return" and len(reply.args) == 1:
                    if history is not None:
                        _note(history, sent, ["return", reply.args[0]], invoked)
                    return self.decode(reply.args[0])
                if reply.op == "raise":
                    if history is not None:
                        _note(history, sent, ["raise", reply.name], invoked)
                    raise _exception(reply.name, reply.args, self._mirror_of(reply.target))
                if reply.op not in REQUESTS or conn.depth >= MAX_NESTING:
                    raise Lost("an unexpected or too deeply nested message")
                conn.depth += 1
                try:
                    answer = self.perform(reply)
                finally:
                    conn.depth -= 1
                conn.send_frame(answer)
        except Lost as exc:
            self.lost = self.lost or str(exc)
            raise

    # ---- serving ------------------------------------------------------------------------------

    def perform(self, request: Message) -> bytes:
        """The reply frame to one request about this side's objects (every exception becomes a ``raise``)."""
        op, name = request.op, request.name
        try:
            if request.target is None:
                action = self.actions.get(op)
                if action is None:
                    raise PermissionError(op)
                return frame(["return", None, "", [self.encode(action(*[self.decode(a) for a in request.args]))], []])
            if not self.allowed(op, name) or (op == "special" and name in ANSWERER_ONLY
                                              and (self.side == "d" or self.guarded)):
                raise (AttributeError if op == "getattr" else PermissionError)(f"{op} {name}")
            decode = self.decode
            target = decode(request.target)
            args = [decode(a) for a in request.args]
            kwargs = {k: decode(v) for k, v in request.kwargs} if request.kwargs else {}
            if op == "callattr":
                result = getattr(target, name)(*args, **kwargs)
            elif op == "getattr":
                result = getattr(target, name)
                if self.side == "a" and _type(result) is _type(self.perform) and result.__self__ is target \
                        and name in _class_methods(target):
                    return frame(["return", None, "", [["m", self.number(target), name]], []])
            elif op == "setattr":
                setattr(target, name, *args[:1])
                result = None
            elif op == "delattr":
                delattr(target, name)
                result = None
            elif op == "call":
                result = target(*args, **kwargs)
            else:
                result = SPECIAL[name](target, *args)
            return frame(["return", None, "", [self.encode(result)], []])
        except Lost:
            raise
        except BaseException as exc:
            if self.side == "d":
                return frame(["raise", None, exception_name(exc), [], []])
            return frame(["raise", self._raised_class(exc), exception_name(exc), _account(exc, not self.guarded), []])

    def _raised_class(self, exc: BaseException) -> Any:
        """The encoded class of an exception the code raised, when it is not a builtin one (else None)."""
        try:
            cls = _type(exc)
            return None if _id(cls) in _EXCEPTIONS else self._exception_class(cls)
        except BaseException:
            return None

    # ---- values -------------------------------------------------------------------------------

    def number(self, value: Any) -> int:
        with self.lock:
            key = _id(value)
            number = self.numbers.get(key)
            if number is None:
                number = self.numbers[key] = _len(self.objects)
                self.objects[number] = value
            return number

    def encode(self, value: Any) -> Any:
        kind = _type(value)
        if kind is str:  # the commonest arguments and answers, without the container machinery
            return ["str", value]
        if kind is bool:
            return ["bool", value is True]
        if kind is int:
            return ["int", _int_format(value, "x")]
        if value is None:
            return ["none"]
        try:
            return self._encode(value, 0, [0], set())
        except (TooBig, RecursionError):
            return self._reference(value)

    def _reference(self, value: Any) -> Any:
        if _type(value) is Proxy:
            return value._lm_ref
        if _type(value) is BoundProxy:
            return ["m", value.owner._lm_ref[1], value.name]
        mirrored = self.mirror_numbers.get(_id(value))
        if mirrored is not None:
            return [self.other, mirrored]
        known = _id(value) in self.numbers
        if self.guarded and not known and not reachable(value):
            raise PermissionError("the tests reach only what the code defines")
        number = self.number(value)
        if self.side == "a" and not known:
            return ["a", number, _class_methods(value)]
        return [self.side, number]

    def _encode(self, value: Any, depth: int, nodes: list[int], open_ids: set[int]) -> Any:
        nodes[0] += 1
        if nodes[0] > MAX_NODES or depth > MAX_DEPTH:
            raise TooBig
        kind = _type(value)
        if value is None:
            return ["none"]
        if kind is bool:
            return ["bool", value is True]
        if kind is int:
            return ["int", _int_format(value, "x")]
        if kind is float:
            return ["float", _float_repr(value)]
        if kind is str:
            return ["str", value]
        if kind is bytes:
            return ["bytes", value.hex()]
        if kind is decimal.Decimal:
            return ["decimal", _decimal_str(value)]
        if kind in (list, tuple, dict, set, frozenset):
            key = _id(value)
            if key in open_ids:
                raise TooBig  # a cycle: the whole value crosses as a reference
            open_ids.add(key)
            try:
                if kind is dict:
                    return ["dict", [[self._encode(k, depth + 1, nodes, open_ids),
                                      self._encode(v, depth + 1, nodes, open_ids)] for k, v in _dict_items(value)]]
                items = [self._encode(item, depth + 1, nodes, open_ids) for item in _list_iter(list(value))]
                return [kind.__name__, items]
            finally:
                open_ids.discard(key)
        if kind is type and _id(value) in _CLASS_NAMES:
            return ["class", _CLASS_NAMES[_id(value)]]
        if kind is type and self.side == "a" and _exception_base(value) is not None:
            return self._exception_class(value)
        return self._reference(value)

    def _exception_class(self, cls: type) -> list[Any]:
        """``["exc", n, name, base]``: an exception class of the code, which the other side raises and catches as
        a class of its own (``_mirror``) deriving from ``base``, its nearest builtin exception class."""
        if self.guarded and _id(cls) not in self.numbers and not reachable(cls):
            raise PermissionError("the tests reach only what the code defines")
        name = type.__dict__["__name__"].__get__(cls)
        return ["exc", self.number(cls), name[:100], _exception_base(cls) or "Exception"]

    def decode(self, data: Any, depth: int = 0) -> Any:
        """Exactly-builtin values, our own objects, or proxies; ``Lost`` on anything malformed."""
        if _type(data) is list and _len(data) == 2:  # the commonest answers first
            tag, item = data
            if tag == "bool" and _type(item) is bool:
                return item
            if tag == "str" and _type(item) is str:
                return item
            if tag == self.side and _type(item) is int:  # our own object: a call's target
                found = self.objects.get(item, _MISSING)
                if found is not _MISSING:
                    return found
            if tag == "int" and _type(item) is str and _len(item) <= 64:
                try:
                    return int(item, 16)
                except ValueError:
                    pass  # _decode says it is malformed
        elif _type(data) is list and _len(data) == 1 and data[0] == "none":
            return None
        try:
            return self._decode(data, depth)
        except Lost:
            raise
        except Exception as exc:  # a bad literal, an unhashable key: the other side broke the protocol
            raise Lost(f"a malformed value ({exc.__class__.__name__})") from None

    def _decode(self, data: Any, depth: int) -> Any:
        if _type(data) is not list or not data or _type(data[0]) is not str or depth > MAX_DEPTH + 1:
            raise Lost("a malformed value")
        tag, rest = data[0], data[1:]
        if tag == "none" and not rest:
            return None
        if len(rest) == 1:
            item = rest[0]
            kind = _type(item)
            if tag == "bool" and kind is bool:
                return item
            if tag == "int" and kind is str:
                return int(item, 16)
            if tag == "float" and kind is str and len(item) <= 40:
                return float(item)
            if tag == "str" and kind is str:
                return item
            if tag == "bytes" and kind is str:
                return bytes.fromhex(item)
            if tag == "decimal" and kind is str:
                return decimal.Decimal(item)
            if tag == "class" and kind is str and item in _BUILTIN_CLASSES:
                return _BUILTIN_CLASSES[item]
            if kind is list and tag in ("list", "tuple", "set", "frozenset"):
                items = [self._decode(v, depth + 1) for v in item]
                return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
            if kind is list and tag == "dict":
                pairs = []
                for pair in item:
                    if _type(pair) is not list or len(pair) != 2:
                        raise Lost("a malformed dict")
                    pairs.append((self._decode(pair[0], depth + 1), self._decode(pair[1], depth + 1)))
                return dict(pairs)
        if tag == self.side and len(rest) == 1 and _type(rest[0]) is int:
            if rest[0] not in self.objects:
                raise Lost("a reference to an object that does not exist")
            return self.objects[rest[0]]
        if tag == "exc" and self.side == "d" and len(rest) == 3 and _type(rest[0]) is int:
            return self._mirror(*rest)
        if tag == self.other and len(rest) in (1, 2) and _type(rest[0]) is int:
            mirror = self.mirrors.get(rest[0])
            return mirror if mirror is not None else self._proxy(rest[0], rest[1] if len(rest) == 2 else [])
        if tag == "m" and len(rest) == 2 and _type(rest[0]) is int and _type(rest[1]) is str:
            if self.side == "a":
                if rest[0] not in self.objects:
                    raise Lost("a reference to an object that does not exist")
                return getattr(self.objects[rest[0]], rest[1])
            return BoundProxy(self._proxy(rest[0], []), rest[1])
        raise Lost("a malformed value")

    def _mirror(self, number: int, name: Any, base: Any) -> type:
        """The local class standing for the other side's exception class ``number``: raised in place of its
        instances and sent back as that class, so ``except`` and ``pytest.raises`` name the code's classes."""
        mirror = self.mirrors.get(number)
        if mirror is not None:
            return mirror
        base_class = _BUILTIN_CLASSES.get(base) if _type(base) is str else None
        if _type(name) is not str or not name.isidentifier() or base_class is None \
                or _id(base_class) not in _EXCEPTIONS:
            raise Lost("a malformed exception class")
        with self.lock:
            mirror = self.mirrors.get(number)
            if mirror is None:
                mirror = type(name, (base_class,), {"__module__": "solution", "__qualname__": name})
                self.mirrors[number] = mirror
                self.mirror_numbers[_id(mirror)] = number
        return mirror

    def _mirror_of(self, target: Any) -> type | None:
        """The mirror class a ``raise`` names, if it names one well-formed (else the builtin class is raised)."""
        if _type(target) is not list or _len(target) != 4 or target[0] != "exc" or _type(target[1]) is not int:
            return None
        try:
            return self._mirror(*target[1:])
        except Lost:
            return None

    def _proxy(self, number: int, methods: Any) -> Proxy:
        proxy = self.proxies.get(number)
        if proxy is None:
            names = frozenset(m for m in methods if _type(m) is str) if _type(methods) is list else frozenset()
            proxy = self.proxies.setdefault(number, Proxy(self, [self.other, number], names))
        return proxy


class SolutionFinder:
    """``import solution`` on the asking side (the driver, or the purple's tests: ``answerer.py``): a module whose
    attributes are the answerer's (``reload`` reloads there)."""

    def __init__(self, peer: Peer, origin: str) -> None:
        self.peer = peer
        self.origin = origin

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> machinery.ModuleSpec | None:
        if name != "solution":
            return None
        spec = machinery.ModuleSpec(name, self, origin=self.origin)  # type: ignore[arg-type]
        spec.has_location = True
        return spec

    def create_module(self, spec: machinery.ModuleSpec) -> types.ModuleType:
        return RemoteModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        op = "reload" if "_lm_remote" in module.__dict__ else "import"
        module.__dict__["_lm_remote"] = self.peer.request(op, None, "", (), None)


class RemoteModule(types.ModuleType):
    """The asking side's ``solution``: its attributes are read from the answerer's module each time."""

    def __getattr__(self, name: str) -> Any:
        remote = self.__dict__.get("_lm_remote")
        if remote is not None and name == "__all__":  # ``from solution import *``: the names the answerer lists
            try:
                return [n for n in remote if _type(n) is str and not n.startswith("_")]
            except Exception:
                raise AttributeError(name) from None
        if remote is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(remote, name)


def _note(history: list[Any], sent: list[Any], answer: list[Any], invoked: int) -> None:
    """One completed call in a kept history: ``[thread, invoked_ns, completed_ns, [op, target, name, args,
    kwargs], ["return", value] | ["raise", class name]]``, in the encoded forms that crossed; at most
    ``MAX_HISTORY`` calls (past that a ``None`` ends the history, and the host checks none of it)."""
    if _len(history) < MAX_HISTORY:
        history.append([_get_ident(), invoked, _monotonic_ns(), sent, answer])
    elif history[-1] is not None:
        history.append(None)


def _exception(name: str, details: tuple[Any, ...] = (), mirror: type | None = None) -> BaseException:
    """An instance of the builtin exception class ``name`` (``Lost`` for anything else), or of ``mirror`` (the
    code's own class) when that derives from it, made without its __init__, carrying the message and the
    ``solution.py`` frames the answerer sent (``_lm_message``, ``_lm_where``)."""
    cls = _BUILTIN_CLASSES.get(name)
    if cls is None or not issubclass(cls, BaseException):
        return Lost(f"an unknown exception class {name[:40]!r}")
    if mirror is not None and issubclass(mirror, cls):
        cls = mirror
    exc = cls.__new__(cls)
    texts = [d[:MAX_DETAIL] for d in details[:1 + MAX_WHERE] if _type(d) is str]
    if texts:
        exc.args = (texts[0],)
        exc._lm_message = texts[0]  # type: ignore[attr-defined]
        exc._lm_where = texts[1:]  # type: ignore[attr-defined]
    return exc


def _account(exc: BaseException, where_from: bool = True) -> list[str]:
    """What the answerer says about an exception of the code: its message, bounded (a message that cannot be
    made is empty), then (``where_from``) the ``function:line`` of the last ``MAX_WHERE`` frames in
    ``solution.py``."""
    try:
        message = str(exc)
        message = message[:MAX_DETAIL] if _type(message) is str else ""
    except BaseException:
        message = ""
    if not where_from:
        return [message]
    filename = _solution_file()
    where: list[str] = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            where.append(f"{code.co_name}:{tb.tb_lineno}"[:MAX_DETAIL])
        tb = tb.tb_next
    return [message, *where[-MAX_WHERE:]]