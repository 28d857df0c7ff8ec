"""Red-agent scenarios for connection-pool. Stdlib only.

The scenarios run INSIDE the sandbox, in the judge's driver process, where
``solution`` is the answerer's proxies: they record what the code answered;
``check_race`` judges the race record on the host.

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


class Connection:
    """A connection that equals every other and cannot be hashed: the contract says track them by identity."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


def model(rng: random.Random, steps: int) -> dict[str, Any]:
    """acquire(timeout=0) and release() with the same connection again, an object the pool never handed out,
    a connection of another pool, and a factory that sometimes fails; records what each call returned (a
    connection by the number the factory gave it, -1 for one it never made) or the exception class it
    raised, and how many connections the factory had made after it."""
    made: list[object] = []
    failing = [False]

    def factory() -> object:
        if failing[0]:
            raise ConnectionRefusedError("the factory failed")  # a builtin class: it crosses processes as itself
        conn = Connection()
        made.append(conn)
        return conn

    def number(conn: object) -> int:
        return next((i for i, m in enumerate(made) if m is conn), -1)

    max_size = rng.randint(1, 3)
    pool = solution.ConnectionPool(factory, max_size)
    try:
        stranger = solution.ConnectionPool(Connection, 1).acquire(timeout=0)
    except Exception:
        stranger = Connection()  # the other pool failed: its connection is then just an object it never made
    given: list[int] = []  # every connection the pool handed out, in order (some released since)
    record: list[list[Any]] = []
    for _ in range(steps):
        roll = rng.random()
        failing[0] = rng.random() < 0.15
        if roll < 0.45:
            call, target = "acquire", None
        elif roll < 0.75 and given:
            call, target = "release", rng.choice(given)  # out, or already back: a second release
        else:
            call, target = "release", rng.choice(["object", "other-pool"])
        try:
            if call == "acquire":
                got: Any = number(pool.acquire(timeout=0))
                given.append(got)
            elif isinstance(target, int):
                pool.release(made[target])
                got = None
            else:
                pool.release(object() if target == "object" else stranger)
                got = None
        except (TimeoutError, ValueError, ConnectionRefusedError) as exc:
            got = type(exc).__name__
        except Exception as exc:
            got = "other: " + type(exc).__name__[:40]
        record.append([call, target, failing[0], got, len(made)])
    return {"max_size": max_size, "steps": record}


def check_model(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: the calls up to the first answer the contract does not allow: a connection handed out
    twice at once, one the factory never made, a new one made while one was idle, more than max_size made,
    a TimeoutError while one was free, a release of what is not checked out accepted (or of what is,
    refused), or a failed factory that used up a slot or did not reach the caller."""
    max_size = int(observed["max_size"])
    out: set[int] = set()
    made = 0
    calls = [f"pool = ConnectionPool(factory, {max_size})",
             "other_pool_connection = ConnectionPool(Connection, 1).acquire(timeout=0)"]
    for call, target, failing, got, made_after in observed["steps"]:
        fails = "  # the factory raises" if failing else ""
        if call == "acquire":
            calls.append(f"{f'c{got} = ' if isinstance(got, int) else ''}pool.acquire(timeout=0){fails}")
            idle = made - len(out)
            if idle > 0:
                want: Any = "a connection"
            elif made < max_size:
                want = "ConnectionRefusedError" if failing else "a new connection"
            else:
                want = "TimeoutError"
            if isinstance(got, int):
                if want not in ("a connection", "a new connection"):
                    return [*calls, f"# returned a connection; the contract says {want}"]
                if got < 0:
                    return [*calls, "# returned an object the factory never made"]
                if got in out:
                    return [*calls, f"# returned connection {got}, which is already checked out"]
                if want == "a connection" and made_after > made:
                    return [*calls, f"# made a new connection while {idle} idle"]
                out.add(got)
            elif got != want:
                return [*calls, f"# raised {got}; the contract says {want}"]
        else:
            shown = {"object": "object()", "other-pool": "other_pool_connection"}.get(str(target), f"c{target}")
            calls.append(f"pool.release({shown})")
            checked_out = isinstance(target, int) and target in out
            if checked_out and got is not None:
                return [*calls, f"# raised {got} releasing a checked-out connection"]
            if not checked_out and got != "ValueError":
                said = "returned normally" if got is None else f"raised {got}"
                return [*calls, f"# {said}; releasing what is not checked out raises ValueError"]
            if checked_out:
                out.discard(int(target))
        if int(made_after) > max_size:
            return [*calls, f"# {made_after} connections made; max_size is {max_size}"]
        made = int(made_after)
    return []
