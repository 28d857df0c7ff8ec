"""A race scenario's client-side history, judged on the host: is it linearizable, with the reference as model?

The race probe's threads call the code from the driver, a process the code
cannot reach, and the driver's wire keeps every call it makes with its
arguments, the answer or exception that came back, and the driver's clock at
invocation and completion (``wire._note``, ``probes/library.probe_race``).
That record is the only observation: what the code prints or claims is not in
it. The task's invariants (``check_race``) judge what the scenario recorded;
this judges the calls themselves, as Jepsen's Knossos does. The calls on the
shared object are linearizable when some serial order of them, consistent
with their real-time order, gives every answer they got; the model that says
what a serial order gives is the task's reference, run serially over the same
calls on an object the task's ``subject(args)`` builds from it
(``scenarios.TaskRed.subject``). The search is ``linearizable.check``.

Every byte of the history came out of the box, so it is read with limits
(``MAX_CALLS``, ``MAX_VALUE_DEPTH``, ``MAX_VALUE_NODES``). An answer that is
not plain data is one no serial order of the reference gives (``Odd``); a
history cut short, or whose arguments are not plain data (the scenario's
own choice), is left unjudged, and the task's invariants still hold.
"""

from __future__ import annotations

import builtins
import collections
import decimal
import math
import operator
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from logomesh.red.linearizable import Operation, Outcome, check

MAX_CALLS = 5_000  # calls of one history judged; a scenario makes a few hundred
MAX_VALUE_DEPTH = 20
MAX_VALUE_NODES = 10_000
BUDGET = 30_000  # model steps the search may take before it gives up (no verdict, never a guess)
SPECIAL: dict[str, Callable[..., Any]] = {
    "__len__": len, "__bool__": bool, "__contains__": operator.contains, "__getitem__": operator.getitem,
    "__setitem__": operator.setitem, "__delitem__": operator.delitem,
}
_EXCEPTIONS = {cls: name for name, cls in vars(builtins).items()
               if isinstance(cls, type) and issubclass(cls, BaseException)}


class Unjudged(Exception):
    """The history cannot be judged: unreadable, cut short, or a call that is not plain data."""


@dataclass(frozen=True)
class Call:
    """One call on the shared object: a method (``callattr``) or a special method (``special``)."""

    op: str
    name: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]

    def __str__(self) -> str:
        shown = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        if self.op == "special":
            return f"{self.name}(obj{''.join(', ' + s for s in shown)})"[:120]
        return f"obj.{self.name}({', '.join(shown)})"[:120]


Answer = tuple[str, Any]  # ("return", value) or ("raise", the nearest builtin exception class's name)


def linearizability(raw: Any, subject: Callable[[], Any]) -> list[str] | None:
    """The violation, if any, of the race history ``raw`` (as ``probe_race`` sent it) against the reference
    object ``subject()`` builds: one line naming the calls no serial order explains; ``[]`` when some order
    explains every answer, or the history cannot be judged; None when the search ran out of budget."""
    try:
        calls = operations(raw)
    except Unjudged:
        return []
    try:
        outcome = check(calls, ReferenceModel(subject), budget=BUDGET)
    except ValueError:  # one thread's calls overlap: a call made from inside another (a callback's)
        return []
    if outcome.linearizable is None:
        return None
    if outcome.linearizable:
        return []
    return [_explain(calls, outcome)]


def operations(raw: Any) -> list[Operation[Call, Answer]]:
    """The history's calls, all on one object of the code's; ``Unjudged`` for anything else."""
    if not isinstance(raw, list) or not raw or len(raw) > MAX_CALLS:
        raise Unjudged("no history, or too long")
    target: Any = None
    out: list[Operation[Call, Answer]] = []
    for entry in raw:
        if not (isinstance(entry, list) and len(entry) == 5 and all(type(v) is int for v in entry[:3])
                and isinstance(entry[3], list) and len(entry[3]) == 5 and isinstance(entry[4], list)):
            raise Unjudged("a malformed entry, or the history was cut short")
        thread, invoked, completed, (op, on, name, args, kwargs), answer = entry
        if op not in ("callattr", "special") or (op == "special" and name not in SPECIAL) or type(name) is not str:
            raise Unjudged(f"a call the model cannot replay ({op})")
        if target is None:
            target = on
        if on != target or not (isinstance(on, list) and len(on) == 2 and on[0] == "a"):
            raise Unjudged("calls on more than one object")
        if completed < invoked:
            raise Unjudged("a call completed before it was made")
        call = Call(op, name, tuple(plain(a) for a in _items(args)),
                    tuple((str(k), plain(v)) for k, v in (_pair(p) for p in _items(kwargs))))
        out.append(Operation(thread, invoked, completed, call, _answer(answer)))
    return out


def _items(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise Unjudged("malformed arguments")
    return value


def _pair(value: Any) -> tuple[str, Any]:
    if not (isinstance(value, list) and len(value) == 2 and type(value[0]) is str):
        raise Unjudged("a malformed keyword argument")
    return value[0], value[1]


@dataclass(frozen=True)
class Odd:
    """An answer that is not plain data (an object of the code's, a value past the limits): no serial order of
    the reference gives it, so it is a failed observation, never a pass; the benign control, answered the same
    way, keeps code that always answers so from being blamed for a race (``Verdict.needs_clean_control``)."""

    what: str

    def __repr__(self) -> str:
        return self.what


def _answer(value: Any) -> Answer:
    if isinstance(value, list) and len(value) == 2 and value[0] == "return":
        try:
            return "return", plain(value[1])
        except Unjudged as exc:
            return "return", Odd(f"<{exc}>")
    if isinstance(value, list) and len(value) == 2 and value[0] == "raise" and type(value[1]) is str:
        return "raise", value[1][:80]
    raise Unjudged("a malformed answer")


def plain(encoded: Any, depth: int = 0, nodes: list[int] | None = None) -> Any:
    """A value as the wire encoded it (``wire.Peer.encode``), decoded to exactly-builtin data; ``Unjudged`` for a
    reference to an object (the model cannot replay it) or anything malformed."""
    nodes = nodes if nodes is not None else [0]
    nodes[0] += 1
    if depth > MAX_VALUE_DEPTH or nodes[0] > MAX_VALUE_NODES:
        raise Unjudged("a value too deep or too large")
    if not (isinstance(encoded, list) and encoded and type(encoded[0]) is str):
        raise Unjudged("a malformed value")
    tag, rest = encoded[0], encoded[1:]
    if tag == "none" and not rest:
        return None
    if len(rest) != 1:
        raise Unjudged(f"a value the model cannot replay ({tag})")
    item = rest[0]
    try:
        scalar = _scalar(tag, item)
    except (ValueError, ArithmeticError, TypeError):
        raise Unjudged("a malformed value") from None
    if scalar is not _NOT_SCALAR:
        return scalar
    if tag in ("list", "tuple", "set", "frozenset") and isinstance(item, list):
        items = [plain(v, depth + 1, nodes) for v in item]
        try:
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        except TypeError:
            raise Unjudged("an unhashable member") from None
    if tag == "dict" and isinstance(item, list):
        try:
            return {plain(k, depth + 1, nodes): plain(v, depth + 1, nodes) for k, v in (_kv(p) for p in item)}
        except TypeError:
            raise Unjudged("an unhashable key") from None
    raise Unjudged(f"a value the model cannot replay ({tag})")


_NOT_SCALAR = object()


def _scalar(tag: str, item: Any) -> Any:
    if tag == "bool" and type(item) is bool:
        return item
    if tag == "str" and type(item) is str:
        return item
    if tag == "int" and type(item) is str and len(item) <= 64:
        return int(item, 16)
    if tag == "float" and type(item) is str and len(item) <= 40:
        return float(item)
    if tag == "decimal" and type(item) is str and len(item) <= 100:
        return decimal.Decimal(item)
    if tag == "bytes" and type(item) is str:
        return bytes.fromhex(item)
    return _NOT_SCALAR


def _kv(pair: Any) -> tuple[Any, Any]:
    if not (isinstance(pair, list) and len(pair) == 2):
        raise Unjudged("a malformed dict")
    return pair[0], pair[1]


def same(a: Any, b: Any) -> bool:
    """Equal and of exactly the same types throughout (``True`` is not ``1``; NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


class ReferenceModel:
    """The reference run serially: a state is a reference object after some calls, built by the search.

    A state is a number; ``objects`` holds the object of each state the search went on from, and a step copies
    it (``clone``) and makes the call on the copy. Where the reference cannot be copied, a state's object is
    replayed from a fresh ``subject()`` along its calls (``parents``).
    """

    def __init__(self, subject: Callable[[], Any]) -> None:
        self.subject = subject
        self.parents: list[tuple[int, Call] | None] = [None]
        self.keys: dict[int, Hashable] = {}
        self.objects: dict[int, Any] = {}
        self.copyable = True

    def init(self) -> int:
        self.objects[0] = self.subject()
        return 0

    def step(self, state: int, call: Call, answer: Answer) -> tuple[bool, int]:
        obj = self._fresh(state)
        ok = _same_answer(apply(obj, call), answer)
        after = len(self.parents)
        self.parents.append((state, call))
        if ok and self.copyable and len(self.objects) < MAX_OBJECTS:
            self.objects[after] = obj  # only a state the search goes on from is stepped from again
        elif ok:
            self.keys[after] = _key(obj, after)
        return ok, after

    def key(self, state: int) -> Hashable:
        found = self.keys.get(state)
        if found is None:
            found = self.keys[state] = _key(self._object(state), state)
        return found

    def _object(self, state: int) -> Any:
        kept = self.objects.get(state)
        return kept if kept is not None else self._replayed(state)

    def _fresh(self, state: int) -> Any:
        """A new object in ``state``, which the caller may step on."""
        kept = self.objects.get(state) if self.copyable else None
        if kept is not None:
            try:
                return clone(kept, {})
            except Uncopyable:
                self.copyable = False
                self.objects.clear()
        return self._replayed(state)

    def _replayed(self, state: int) -> Any:
        calls: list[Call] = []
        at = self.parents[state]
        while at is not None:
            calls.append(at[1])
            at = self.parents[at[0]]
        obj = self.subject()
        for call in reversed(calls):
            apply(obj, call)
        return obj



MAX_OBJECTS = 100_000  # states whose objects the model keeps; past it, older states are replayed
_IMMUTABLE = frozenset({int, float, complex, bool, str, bytes, decimal.Decimal, type(None), range})


class Uncopyable(Exception):
    """A value ``clone`` does not know how to copy exactly."""


def clone(value: Any, memo: dict[int, Any]) -> Any:
    """An independent copy of a reference object's state: what ``copy.deepcopy`` makes, with each lock a fresh
    one (free between serial calls; ``deepcopy`` refuses locks), immutable values shared, and ``Uncopyable`` for
    anything it cannot copy exactly (the model then replays). About 4x faster than ``deepcopy`` on the library's
    references, which keeps the search's cost inside the race probe's (``benchmarks/judge_cost.py``)."""
    kind = type(value)
    if kind in _IMMUTABLE or kind.__name__ in ("function", "builtin_function_or_method", "method"):
        return value  # a function is shared as deepcopy shares it: the reference's clock, a factory
    found = memo.get(id(value))
    if found is not None:
        return found
    if kind is tuple or kind is frozenset:
        if all(type(v) in _IMMUTABLE for v in value):
            return value
        items = [clone(v, memo) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else kind(items)
    if kind.__module__ == "_thread" and "lock" in kind.__name__.lower():
        made: Any = threading.RLock() if "RLock" in kind.__name__ else threading.Lock()
    elif kind in (list, set) or kind is collections.deque:
        made = kind() if kind is not collections.deque else collections.deque(maxlen=value.maxlen)
        memo[id(value)] = made
        items = [clone(v, memo) for v in value]
        if kind is set:
            made.update(items)
        else:
            made.extend(items)
        return made
    elif kind is dict or kind is collections.OrderedDict:
        made = kind()
        memo[id(value)] = made
        for k, v in value.items():
            made[clone(k, memo)] = clone(v, memo)
        return made
    elif isinstance(getattr(value, "__dict__", None), dict) and not hasattr(kind, "__slots__") \
            and kind.__module__ not in ("builtins", "threading", "_thread") and not callable(value):
        made = object.__new__(kind)
        memo[id(value)] = made
        made.__dict__.update({k: clone(v, memo) for k, v in vars(value).items()})
        return made
    elif kind.__module__ == "threading" and kind.__name__ == "Condition":
        made = threading.Condition(clone(value._lock, memo))
    else:
        raise Uncopyable(kind.__qualname__)
    memo[id(value)] = made
    return made


def _key(obj: Any, state: int) -> Hashable:
    try:
        return shape(obj)
    except Unjudged:
        return "state", state  # exact, though no two orders share it


def apply(obj: Any, call: Call) -> Answer:
    """``call`` made on ``obj``: what came back, or the nearest builtin class of what it raised."""
    try:
        if call.op == "special":
            return "return", SPECIAL[call.name](obj, *call.args)
        return "return", getattr(obj, call.name)(*call.args, **dict(call.kwargs))
    except Exception as exc:
        return "raise", next((_EXCEPTIONS[c] for c in type(exc).__mro__ if c in _EXCEPTIONS), "BaseException")


def _same_answer(got: Answer, recorded: Answer) -> bool:
    return got[0] == recorded[0] and same(got[1], recorded[1])


def shape(value: Any, depth: int = 0) -> Hashable:
    """A hashable description of an object's whole state, for memoising the search: equal shapes must mean
    states no call can tell apart, so anything it cannot describe fully raises ``Unjudged`` (the state itself is
    then the key). Locks are left out: between serial calls they are always free."""
    if depth > MAX_VALUE_DEPTH:
        raise Unjudged("too deep to describe")
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes, decimal.Decimal):
        return kind.__name__, value
    if kind in (list, tuple, collections.deque):
        return kind.__name__, tuple(shape(v, depth + 1) for v in value)
    if isinstance(value, dict):  # insertion order is state (an LRU's recency)
        return kind.__name__, tuple((shape(k, depth + 1), shape(v, depth + 1)) for k, v in value.items())
    if kind in (set, frozenset):
        return kind.__name__, frozenset(shape(v, depth + 1) for v in value)
    if kind.__module__ == "_thread" or kind.__name__ in ("Condition", "RLock", "Semaphore", "BoundedSemaphore"):
        return "lock", None
    if callable(value) and hasattr(value, "__code__"):
        cells = tuple(shape(c.cell_contents, depth + 1) for c in (value.__closure__ or ()))
        return "function", value.__code__.co_qualname, cells
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and not hasattr(kind, "__slots__"):
        return kind.__qualname__, tuple((k, shape(v, depth + 1)) for k, v in sorted(fields.items()))
    raise Unjudged(f"cannot describe a {kind.__name__}")


def _explain(calls: list[Operation[Call, Answer]], outcome: Outcome) -> str:
    """One line: the calls that no serial order explains, after how many the search could place."""
    stuck = [calls[i] for i in outcome.stuck[:3]]
    shown = "; ".join(f"{op.input} -> {_shown(op.output)}" for op in stuck)
    return (f"not linearizable: after {len(outcome.prefix)} of {len(calls)} calls in a serial order the reference "
            f"agrees with, no order explains the next answer ({shown})")[:400]


def _shown(answer: Answer) -> str:
    kind, value = answer
    return f"raised {value}" if kind == "raise" else repr(value)[:60]
