"""Red-agent scenarios for lru-cache. Stdlib only.

The scenarios run INSIDE the sandbox, in the judge's driver process, where
``solution`` is the answerer's proxies: they record what the code answered;
``check_race`` judges the race record on the host.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

import solution


def subject(args: dict[str, Any]) -> Any:
    """The object the race threads share; the host builds it from the reference to judge their history."""
    return solution.LRUCache(int(args.get("capacity", 3)))


def race(args: dict[str, Any], seed: int, run_threads: Any) -> dict[str, Any]:
    """Threads put and get over a few keys; records what each get returned and the size after."""
    capacity = int(args.get("capacity", 3))
    ops = int(args.get("ops", 60))
    cache = subject(args)
    gets: list[list[Any]] = []  # [key, what get(key) returned: None, [key, thread, step] or a repr]

    def work(index: int, rng: random.Random) -> None:
        for i in range(ops):
            key = rng.randrange(capacity + 2)
            if rng.random() < 0.5:
                cache.put(key, (key, index, i))
            else:
                got = cache.get(key)
                plain = got is None or (type(got) is tuple and len(got) == 3 and all(type(x) is int for x in got))
                gets.append([key, list(got) if plain and got is not None else (None if plain else repr(got)[:60])])

    errors = run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    size = len(cache)
    return {"gets": gets, "size": size if type(size) is int else repr(size)[:40], "errors": errors}


def check_race(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: every get returned nothing or a value put under that very key, and the size is within
    capacity once the threads are done."""
    violations = [str(e) for e in observed["errors"]]
    capacity = int(args.get("capacity", 3))
    for key, got in observed["gets"]:
        if got is not None and (not isinstance(got, list) or got[0] != key):
            violations.append(f"get({key}) returned {got!r}, a value stored under another key")
            break
    size = observed["size"]
    if not isinstance(size, int) or size > capacity:
        violations.append(f"len(cache) is {size} after the threads finished; capacity is {capacity}")
    return violations


def grow(size: int) -> Any:
    """Hits and overwrites on four resident keys: nothing new to keep."""
    cache = solution.LRUCache(4)
    for i in range(4):
        cache.put(i, i)
    for i in range(size):
        cache.get(i % 4)
        cache.put(i % 4, i)
    return cache


FALSY = (0, "", False)  # values the contract says come back as stored


def model(rng: random.Random, steps: int) -> dict[str, Any]:
    """Random put/get over tuple keys made afresh each call (equal, never the same object), some values falsy,
    the same key put again; records what each get returned and len() after every call (judged against an
    OrderedDict by ``check_model``)."""
    capacity = rng.randint(1, 3)
    cache = solution.LRUCache(capacity)
    record: list[list[Any]] = []
    for step in range(steps):
        key = rng.randrange(capacity + 2)
        if rng.random() < 0.5:
            value: Any = rng.choice(FALSY) if rng.random() < 0.25 else step
            cache.put(("k", key), value)
            record.append(["put", key, value, _length(cache)])
        else:
            got = cache.get(("k", key))
            shown = got if got is None or type(got) in (int, str, bool) else repr(got)[:40]
            record.append(["get", key, shown, _length(cache)])
    return {"capacity": capacity, "steps": record}


def _length(cache: Any) -> Any:
    """len(cache) as typed, or what went wrong."""
    try:
        got = len(cache)
    except Exception as exc:
        return f"len() raised {type(exc).__name__}"
    return got if type(got) is int else repr(got)[:40]


def check_model(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: the calls up to the first get an LRU cache would answer differently (value and exact
    type), or the first len() that is not the number of keys it holds; [] if none."""
    capacity = int(observed["capacity"])
    shadow: OrderedDict[int, Any] = OrderedDict()
    calls = [f"c = LRUCache({capacity})"]
    for step in observed["steps"]:
        kind, key, value, length = step[0], step[1], step[2], step[3]
        if kind == "put":
            calls.append(f"c.put(('k', {key}), {value!r})")
            shadow[key] = value
            shadow.move_to_end(key)
            if len(shadow) > capacity:
                shadow.popitem(last=False)
        else:
            calls.append(f"c.get(('k', {key}))")
            want = shadow.get(key)
            if key in shadow:
                shadow.move_to_end(key)
            if value != want or type(value) is not type(want):
                return [*calls, f"# returned {value!r}; an LRU cache returns {want!r}"]
        if type(length) is not int or length != len(shadow):
            return [*calls, f"len(c)  # {length!r}; the cache holds {len(shadow)} keys"]
    return []
