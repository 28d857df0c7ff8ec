"""Red-agent scenarios for connection-pool. Stdlib only; runs INSIDE the sandbox as ``_lm_task.py``.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import solution


def race(args: dict[str, Any], seed: int, run_threads: Any) -> list[str]:
    """Threads acquire and release: never more than max_size connections, never one held twice."""
    created: list[object] = []
    held: set[int] = set()
    guard = threading.Lock()
    violations: list[str] = []

    def factory() -> object:
        conn = object()
        created.append(conn)
        return conn

    max_size = int(args.get("max_size", 2))
    pool = solution.ConnectionPool(factory, max_size)

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("ops", 15))):
            try:
                conn = pool.acquire(timeout=5.0)
            except TimeoutError:
                continue
            with guard:
                if id(conn) in held:
                    violations.append("one connection handed to two threads at once")
                held.add(id(conn))
            time.sleep(0)
            with guard:
                held.discard(id(conn))
            pool.release(conn)

    violations += run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    if len(created) > max_size:
        violations.append(f"{len(created)} connections created; max_size is {max_size}")
    return violations


def grow(size: int) -> Any:
    """Acquire and release one connection over and over: the bookkeeping stays O(max_size)."""
    pool = solution.ConnectionPool(object, 2)
    for _ in range(size):
        pool.release(pool.acquire(timeout=1.0))
    return pool
