"""The one place where an injection run becomes Textual messages.

``InjectionRunner`` runs ``run_injection`` (what ``logomesh inject run`` calls, or any function of its signature)
in a thread worker. It puts a ``CancelToken``, an ``on_attempt`` and a search observer into the request; those
only copy what they are told into a locked buffer, so the engine never waits on the UI and its outcome is the
same as the command's. A 50 ms timer on the UI thread drains the buffer into ``InjectionNodeAdded``,
``InjectionNodeUpdated`` (repeats for one node in a batch collapse to the last) and ``AttemptJudged``, then posts
``InjectionEnded`` once the engine has returned and everything before it was posted.

Cancel (Esc) cancels the token: the purple agent's request in flight is abandoned, the search adds no further
node, and ``run_injection`` records the run as cancelled after the queries already recorded.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from logomesh.cancel import CANCEL_REASON, Cancelled, CancelToken
from logomesh.inject.attempts import AttemptRecord
from logomesh.inject.run import InjectOutcome, InjectRequest
from logomesh.red.mcts import Node
from tui.messages import AttemptJudged, InjectionEnded, InjectionNodeAdded, InjectionNodeUpdated

InjectEngine = Callable[[InjectRequest], InjectOutcome]

FLUSH_INTERVAL_S = 0.05
MAX_BATCH = 2000  # items posted per tick at most, so a burst cannot freeze a frame


class InjectSetupError(Exception):
    """The run cannot start: the agent does not answer or no sandbox opens (one line, nothing recorded)."""


def default_inject_engine(request: InjectRequest) -> InjectOutcome:
    """What the command does once its options are checked: the environment first, then ``run_injection``."""
    from logomesh.battle.preflight import sandbox_problem
    from logomesh.inject.run import run_injection
    from logomesh.purple.probe import agent_problem

    if request.target.url is not None and (problem := agent_problem(request.target.url, None)):
        raise InjectSetupError(f"the run cannot start: {problem}")
    if problem := sandbox_problem(request.sandbox):
        raise InjectSetupError(f"the run cannot start: {problem}")
    return run_injection(request)


@dataclass(frozen=True)
class AddedNode:
    """What the search said of a node it added, copied on the engine's thread."""

    node_id: int
    parent_id: int | None
    action: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class VisitedNode:
    """A node's figures after a visit, copied on the engine's thread."""

    node_id: int
    visits: int
    mean_value: float


Item = AddedNode | VisitedNode | AttemptRecord


def _choice(action_id: str) -> str:
    """``placement:readme`` → ``readme``: the tree's levels say what kind of choice each is."""
    return action_id.split(":", 1)[-1]


class _TreeCopier:
    """The MCTS's ``SearchObserver``: copies each node's facts at once (the node object keeps changing)."""

    def __init__(self, push: Callable[[Item], None]) -> None:
        self._push = push

    def node_added(self, node: Node) -> None:
        parent = node.parent.id if node.parent is not None else None
        label = node.action.id if node.action is not None else "root"
        self._push(AddedNode(node.id, parent, label, tuple(_choice(a.id) for a in node.path)))

    def node_updated(self, node: Node) -> None:
        self._push(VisitedNode(node.id, node.visits, round(node.mean_value, 6)))


def coalesce(items: Sequence[Item]) -> list[Item]:
    """Drop every node update that a later one for the same node supersedes; keep order."""
    last = {item.node_id: index for index, item in enumerate(items) if isinstance(item, VisitedNode)}
    return [item for index, item in enumerate(items)
            if not isinstance(item, VisitedNode) or last[item.node_id] == index]


def as_message(item: Item) -> Message:
    """The typed message for one buffered item."""
    if isinstance(item, AddedNode):
        return InjectionNodeAdded(item.node_id, item.parent_id, item.action, item.path)
    if isinstance(item, VisitedNode):
        return InjectionNodeUpdated(item.node_id, item.visits, item.mean_value)
    return AttemptJudged(item)


class InjectionRunner:
    """Runs one injection run off the UI thread and feeds what it does to ``target`` as messages."""

    def __init__(self, target: Widget, engine: InjectEngine = default_inject_engine) -> None:
        self._target = target
        self._engine = engine
        self._lock = threading.Lock()
        self._buffer: list[Item] = []
        self._ending: InjectionEnded | None = None
        self._token = CancelToken()
        self._timer: Timer | None = None
        self.running = False
        self.request: InjectRequest | None = None

    def start(self, request: InjectRequest) -> InjectRequest:
        """Start ``request`` in a thread worker (call on the UI thread); returns it as the engine gets it."""
        if self.running:
            raise RuntimeError("an injection run is already running")
        self.running = True
        self._token = CancelToken()
        self._ending = None
        request = dataclasses.replace(request, cancel=self._token, on_attempt=self._push,
                                      observer=_TreeCopier(self._push))
        self.request = request
        self._timer = self._target.set_interval(FLUSH_INTERVAL_S, self.flush)
        self._target.run_worker(lambda: self._run(request), thread=True, group="injection", name=request.task_id)
        return request

    def cancel(self) -> None:
        """Stop the run: cancel its token (see the module docstring); returns at once."""
        if self.running:
            self._token.cancel(CANCEL_REASON)

    @property
    def cancelling(self) -> bool:
        return self.running and self._token.cancelled

    def _push(self, item: Item) -> None:
        with self._lock:
            self._buffer.append(item)

    def _run(self, request: InjectRequest) -> None:
        recorded = request.home is not None
        try:
            ending = InjectionEnded("finished", self._engine(request), recorded=recorded)
        except Cancelled as exc:
            ending = InjectionEnded("cancelled", None, exc.reason, recorded=recorded)
        except Exception as exc:  # the UI must survive any engine failure: it is shown in one line
            ending = InjectionEnded("error", None, f"{type(exc).__name__}: {exc}".splitlines()[0]
                                    if not isinstance(exc, InjectSetupError) else str(exc))
        with self._lock:
            self._ending = ending

    def flush(self) -> None:
        """Post what the engine did since the last tick; once it is done and drained, post ``InjectionEnded``."""
        with self._lock:
            items = self._buffer[:MAX_BATCH]
            del self._buffer[:MAX_BATCH]
            ending = self._ending if not self._buffer else None
        for item in coalesce(items):
            self._target.post_message(as_message(item))
        if ending is not None and self.running:
            self.running = False
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self._target.post_message(ending)
