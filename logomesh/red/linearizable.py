"""Whether a recorded history of concurrent calls to one object is linearizable, decided on the host.

The judge records, client side, when each call was sent and when its answer came back. A history is
linearizable when each call can be given one instant inside its interval such that the calls, run one at a
time in the order of those instants through a sequential model, give exactly the answers recorded. This is
the Wing & Gong search with Lowe's memoisation (the "WGL" algorithm of Knossos and Porcupine): the calls
and returns sit in one doubly linked list ordered by time; the search lifts out a call whose return has
not yet been passed (it may take effect now), and backtracks when it meets a return whose call nobody
could place. A set of (calls placed, model state) pairs already explored cuts the search to one visit of
each such configuration.

Two readings keep the verdict on the side of the code under test:
  * one call is before another only when it completed strictly before the other was invoked; equal times
    are concurrent (a clock too coarse to order two events must not turn a correct answer into a fault);
  * a search that runs out of its budget says ``None``, never a guessed verdict.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

I = TypeVar("I")  # noqa: E741 - the input of a call, as in the Porcupine and Knossos papers
O = TypeVar("O")  # noqa: E741 - the output (answer) of a call
S = TypeVar("S")  # the model's state
I_contra = TypeVar("I_contra", contravariant=True)
O_contra = TypeVar("O_contra", contravariant=True)


@dataclass(frozen=True)
class Operation(Generic[I, O]):
    """One recorded call: who made it, when (ns, the recorder's clock), what it asked and what it got."""

    process: int  # the thread that made the call; its calls never overlap each other
    invoke: int  # ns, when the call was sent
    complete: int  # ns, when its answer came back (>= invoke)
    input: I
    output: O


class Model(Protocol[S, I_contra, O_contra]):
    """The sequential specification the history is checked against."""

    def init(self) -> S: ...

    def step(self, state: S, input: I_contra, output: O_contra) -> tuple[bool, S]:
        """Whether ``output`` is an answer the object may give to ``input`` in ``state``, and the next state."""
        ...

    def key(self, state: S) -> Hashable:
        """Equal keys mean equivalent states: the memo treats them as one."""
        ...


@dataclass(frozen=True)
class Outcome:
    linearizable: bool | None  # None: the search budget ran out before a verdict (never guess)
    order: tuple[int, ...] = ()  # when linearizable: indices into the history, a witness order
    prefix: tuple[int, ...] = ()  # when not: the longest linearized prefix the search found (indices)
    stuck: tuple[int, ...] = ()  # when not: the calls that could come next after ``prefix``, all refused
    steps: int = 0  # model steps tried


@dataclass(eq=False, slots=True)
class _Entry:
    """A call or a return in the time-ordered list; a call's ``match`` is its return."""

    op: int  # index into the history
    is_call: bool
    prev: _Entry | None = None
    next: _Entry | None = None
    match: _Entry | None = None


def _validate(history: Sequence[Operation[I, O]]) -> None:
    last: dict[int, Operation[I, O]] = {}
    for index, op in enumerate(history):
        if op.complete < op.invoke:
            raise ValueError(f"operation {index} completes at {op.complete} before its invocation at {op.invoke}")
    for index, op in sorted(enumerate(history), key=lambda pair: (pair[1].invoke, pair[0])):
        before = last.get(op.process)
        if before is not None and op.invoke < before.complete:
            raise ValueError(f"operation {index} overlaps an earlier call of the same process {op.process}")
        last[op.process] = op


def _build_list(history: Sequence[Operation[I, O]]) -> _Entry:
    """The sentinel head of the list: calls and returns by time, a call before a return at the same time."""
    events: list[tuple[int, int, int, int, _Entry]] = []
    for index, op in enumerate(history):
        call, ret = _Entry(index, True), _Entry(index, False)
        call.match = ret
        events.append((op.invoke, 0, op.invoke, index, call))
        events.append((op.complete, 1, op.invoke, index, ret))
    events.sort(key=lambda event: event[:4])
    head = _Entry(-1, False)
    tail = head
    for *_, entry in events:
        tail.next, entry.prev = entry, tail
        tail = entry
    return head


def _lift(call: _Entry) -> None:
    """Take a call and its return out of the list; both keep their links so ``_unlift`` can put them back."""
    for entry in (call, call.match):
        assert entry is not None and entry.prev is not None
        entry.prev.next = entry.next
        if entry.next is not None:
            entry.next.prev = entry.prev


def _unlift(call: _Entry) -> None:
    """Undo ``_lift``: the return first, then the call (the reverse of taking them out)."""
    for entry in (call.match, call):
        assert entry is not None and entry.prev is not None
        entry.prev.next = entry
        if entry.next is not None:
            entry.next.prev = entry


def _candidates(history: Sequence[Operation[I, O]], placed: Sequence[int]) -> tuple[int, ...]:
    """The calls not in ``placed`` that no other unplaced call completed strictly before."""
    done = set(placed)
    rest = [index for index in range(len(history)) if index not in done]
    if not rest:
        return ()
    first_return = min(history[index].complete for index in rest)
    ready = [index for index in rest if history[index].invoke <= first_return]
    return tuple(sorted(ready, key=lambda index: (history[index].invoke, index)))


def check(history: Sequence[Operation[I, O]], model: Model[S, I, O], *, budget: int = 200_000) -> Outcome:
    """Decide whether ``history`` is linearizable with respect to ``model``, trying at most ``budget`` steps.

    Raises ``ValueError`` for a history no recorder writes: a call completing before it was invoked, or two
    overlapping calls of one process.
    """
    _validate(history)
    head = _build_list(history)
    state = model.init()
    placed: list[tuple[_Entry, S]] = []  # the calls linearized so far, each with the state before it
    linearized = 0  # bitset of the history indices in ``placed``
    memo: set[tuple[int, Hashable]] = set()
    best: tuple[int, ...] = ()
    steps = 0
    entry = head.next
    while head.next is not None:
        assert entry is not None  # the last entry is a return, which either backtracks or ends the search
        if not entry.is_call:
            if not placed:
                return Outcome(False, prefix=best, stuck=_candidates(history, best), steps=steps)
            entry, state = placed.pop()
            linearized &= ~(1 << entry.op)
            _unlift(entry)
            entry = entry.next
            continue
        if steps >= budget:
            return Outcome(None, steps=steps)
        op = history[entry.op]
        steps += 1
        accepted, after = model.step(state, op.input, op.output)
        seen = (linearized | (1 << entry.op), model.key(after)) if accepted else None
        if seen is not None and seen not in memo:
            memo.add(seen)
            placed.append((entry, state))
            state, linearized = after, seen[0]
            if len(placed) > len(best):
                best = tuple(call.op for call, _ in placed)
            _lift(entry)
            entry = head.next
        else:
            entry = entry.next
    return Outcome(True, order=tuple(call.op for call, _ in placed), steps=steps)
