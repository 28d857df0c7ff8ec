"""Red-agent scenarios for connection-pool. Stdlib only.

The scenarios run INSIDE the sandbox as ``_lm_task.py`` and record what the code
did; ``check_race`` judges the race record on the host, where the code cannot
reach it.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import solution


def race(args: dict[str, Any], seed: int, run_threads: Any) -> dict[str, Any]:
    """Threads acquire and release; records, in one order, who took and gave back which connection."""
    created: list[object] = []
    events: list[list[Any]] = []  # [thread, "take" | "give", connection number], in the order they happened
    guard = threading.Lock()

    def factory() -> object:
        conn = object()
        created.append(conn)
        return conn

    def number(conn: object) -> int:
        for i, made in enumerate(created):
            if made is conn:
                return i
        return -1  # not a connection the factory made

    max_size = int(args.get("max_size", 2))
    pool = solution.ConnectionPool(factory, max_size)

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("ops", 15))):
            try:
                conn = pool.acquire(timeout=5.0)
            except TimeoutError:
                continue
            with guard:
                events.append([index, "take", number(conn)])
            time.sleep(0)
            with guard:
                events.append([index, "give", number(conn)])
            pool.release(conn)

    errors = run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    return {"created": len(created), "events": events, "errors": errors}


def check_race(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: never more than max_size connections made, none handed out twice at once, only the
    factory's connections handed out."""
    violations = [str(e) for e in observed["errors"]]
    max_size = int(args.get("max_size", 2))
    held: dict[int, int] = {}
    for thread, kind, conn in observed["events"]:
        if kind == "take":
            if conn < 0:
                violations.append("acquire() returned an object the factory never made")
            elif conn in held:
                violations.append(f"connection {conn} handed to thread {thread} while thread {held[conn]} held it")
            held[conn] = thread
        else:
            held.pop(conn, None)
    if int(observed["created"]) > max_size:
        violations.append(f"{observed['created']} connections created; max_size is {max_size}")
    return violations


def grow(size: int) -> Any:
    """Acquire and release one connection over and over: the bookkeeping stays O(max_size)."""
    pool = solution.ConnectionPool(object, 2)
    for _ in range(size):
        pool.release(pool.acquire(timeout=1.0))
    return pool
