"""Cancel tokens: how a caller (console, Ctrl-C, the green's ``tasks/cancel``) stops a battle mid-stage.

A battle polls its token between steps (``check``) and registers hooks for the
waits it cannot poll: the purple agent's HTTP exchange is abandoned and an open
sandbox is killed from outside. Hooks run on a thread of their own, so
``cancel`` returns at once whichever thread calls it (the UI thread, a signal
handler, the green's event loop). A cancelled battle is recorded with status
``cancelled`` and the stage it stopped in (see ``logomesh.battle``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

CANCEL_REASON = "cancelled by the user"

Hook = Callable[[], None]
T = TypeVar("T")


class Cancelled(Exception):
    """Raised inside a battle once its token is cancelled; the battle is recorded as cancelled."""

    def __init__(self, reason: str = CANCEL_REASON) -> None:
        super().__init__(reason)
        self.reason = reason


class CancelToken:
    """A one-way switch shared by the caller and every stage of one battle.

    ``CancelToken.never()`` is the one token nobody can cancel: the default wherever a caller gives none.
    """

    @staticmethod
    def never() -> CancelToken:
        """The shared token nobody can cancel (its ``cancel`` raises ``TypeError``); a caller that may cancel
        makes a ``CancelToken()`` of its own."""
        return _NEVER

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._hooks: dict[int, Hook] = {}
        self._next_key = 0
        self.reason = CANCEL_REASON

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = CANCEL_REASON) -> None:
        """Cancel (once; later calls do nothing) and start the registered hooks on their own thread."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            hooks = list(self._hooks.values())
        if hooks:
            threading.Thread(target=_run_all, args=(hooks,), name="logomesh-cancel", daemon=True).start()

    def check(self) -> None:
        """Raise ``Cancelled`` if the token was cancelled: the battle's poll between steps."""
        if self._event.is_set():
            raise Cancelled(self.reason)

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until cancelled or ``timeout_s`` passed; whether it was cancelled."""
        return self._event.wait(timeout_s)

    @contextmanager
    def hook(self, action: Hook) -> Iterator[None]:
        """Run ``action`` if the token is cancelled while the block runs (at once if it already is)."""
        with self._lock:
            key = self._next_key
            self._next_key += 1
            already = self._event.is_set()
            if not already:
                self._hooks[key] = action
        if already:
            action()
        try:
            yield
        finally:
            with self._lock:
                self._hooks.pop(key, None)


class _Uncancellable(CancelToken):
    """``CancelToken.never()``: shared by every caller that gave no token, so it must never fire."""

    def cancel(self, reason: str = CANCEL_REASON) -> None:
        raise TypeError("CancelToken.never() cannot be cancelled: give the battle a CancelToken() of its own")


_NEVER: CancelToken = _Uncancellable()


def _run_all(hooks: list[Hook]) -> None:
    for action in hooks:
        try:
            action()
        except Exception:  # one failing hook must not keep the others from stopping their stage
            continue


def abandon_on_cancel(work: Callable[[], T], cancel: CancelToken, name: str = "logomesh-work") -> T:
    """``work()`` on a thread of its own: its value, or ``Cancelled`` as soon as ``cancel`` is cancelled.

    A cancelled ``work`` is left to finish on its own: use it only for work that computes and holds
    nothing outside the process (scoring), never for work that must be stopped (a sandbox run). Its
    thread is not a daemon, so the interpreter waits for it at exit: a native library killed mid-call
    at exit aborts the process (ONNX Runtime did: "terminate called without an active exception").
    """
    cancel.check()
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            done.set()

    with cancel.hook(done.set):
        threading.Thread(target=run, daemon=False, name=name).start()
        done.wait()
    if "error" in outcome:
        raise outcome["error"]
    if "value" not in outcome:
        raise Cancelled(cancel.reason)
    value: T = outcome["value"]
    return value


@contextmanager
def cancel_on_sigint(cancel: CancelToken) -> Iterator[None]:
    """While the block runs (on the main thread), Ctrl-C cancels ``cancel``; a second Ctrl-C interrupts as usual."""

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if cancel.cancelled:
            raise KeyboardInterrupt
        cancel.cancel()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
