"""A bounded, thread-safe object pool with lazy creation and timeouts."""

from __future__ import annotations

import threading
import time
from typing import Callable, Dict, List, Optional


_MISSING = object()  # never a connection, unlike None


class ConnectionPool:
    """Hands out at most ``max_size`` connections, created lazily by ``factory``.

    One condition variable guards all state. Checked-out connections are
    tracked by ``id()`` (connections may be unhashable or equal to each
    other); the dict holds a reference to each, so ids cannot be reused while
    checked out. A slot is reserved before ``factory()`` runs, outside the
    lock, and given back if the factory raises.
    """

    def __init__(self, factory: Callable[[], object], max_size: int) -> None:
        if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
            raise ValueError("max_size must be an integer >= 1")
        self._factory = factory
        self._max_size = max_size
        self._cond = threading.Condition(threading.Lock())
        self._idle: List[object] = []
        self._checked_out: Dict[int, object] = {}
        self._created = 0

    def acquire(self, timeout: Optional[float] = None) -> object:
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must be None or >= 0")
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._idle and self._created >= self._max_size:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError(f"no connection became available within {timeout} s")
                self._cond.wait(remaining)
            if self._idle:
                conn = self._idle.pop()
                self._checked_out[id(conn)] = conn
                return conn
            self._created += 1  # reserve a slot, then build outside the lock
        try:
            conn = self._factory()
        except BaseException:
            with self._cond:
                self._created -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._checked_out[id(conn)] = conn
        return conn

    def release(self, conn: object) -> None:
        with self._cond:
            if self._checked_out.get(id(conn), _MISSING) is not conn:
                raise ValueError("connection is not checked out from this pool")
            del self._checked_out[id(conn)]
            self._idle.append(conn)
            self._cond.notify()
