"""Boxes opened one battle ahead, for a process that plays battles one after another (a campaign worker).

Opening a box costs 0.3-0.45 s with Docker and 0.1-0.2 s with bubblewrap here, on the path of every battle.
A worker that keeps its boxes warm (``keep_warm``) opens the next one in a thread of its own while the current
battle runs, so its next battle starts with a box already up. Each box still serves one battle and is closed
with it, never reused: a warm box is only a fresh one opened earlier, and nothing of a battle is in it before
its battle starts. Every other process (``logomesh battle run``, ``score``, the console) opens its box when
its battle needs it, as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from logomesh.sandbox.base import Sandbox


def _open(kind: str) -> Sandbox:
    """``logomesh.sandbox.open_sandbox``, looked up when called: the one place a box opens (tests watch it)."""
    from logomesh import sandbox

    return sandbox.open_sandbox(kind)


class WarmBoxes:
    """Boxes of one kind, the next one opened ahead in a thread."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._opener = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-box")
        self._next: Future[Sandbox] | None = None

    def take(self) -> Sandbox:
        """A fresh box: the one opened ahead if it opened (else one opened now, which raises as
        ``open_sandbox`` does); the next starts opening at once."""
        ahead, self._next = self._next, None
        box = None
        if ahead is not None:
            with contextlib.suppress(Exception):  # a box that failed to open ahead: try once more, now
                box = ahead.result()
        if box is None:
            box = _open(self.kind)
        self._next = self._opener.submit(_open, self.kind)
        return box

    def close(self) -> None:
        """Close the box still waiting for a battle, if any."""
        ahead, self._next = self._next, None
        if ahead is not None:
            with contextlib.suppress(Exception):
                ahead.result().close()
        self._opener.shutdown(wait=True)


_warm: WarmBoxes | None = None


@contextlib.contextmanager
def keep_warm(kind: str) -> Iterator[WarmBoxes]:
    """While the block runs, ``fresh_box(kind)`` in this process takes boxes opened one ahead."""
    global _warm
    boxes, previous = WarmBoxes(kind), _warm
    _warm = boxes
    try:
        yield boxes
    finally:
        _warm = previous
        boxes.close()


def fresh_box(kind: str) -> Sandbox:
    """A box for one battle: opened ahead where this process keeps boxes of ``kind`` warm, else opened now."""
    if _warm is not None and _warm.kind == kind:
        return _warm.take()
    return _open(kind)
