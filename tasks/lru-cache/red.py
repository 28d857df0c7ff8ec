"""Red-agent scenarios for lru-cache. Stdlib only; runs INSIDE the sandbox as ``_lm_task.py``.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

import solution


def race(args: dict[str, Any], seed: int, run_threads: Any) -> list[str]:
    """Threads put and get over a few keys: values stay under their keys, the size within capacity."""
    capacity = int(args.get("capacity", 3))
    ops = int(args.get("ops", 60))
    cache = solution.LRUCache(capacity)
    violations: list[str] = []

    def work(index: int, rng: random.Random) -> None:
        for i in range(ops):
            key = rng.randrange(capacity + 2)
            if rng.random() < 0.5:
                cache.put(key, (key, index, i))
            else:
                got = cache.get(key)
                if got is not None and (not isinstance(got, tuple) or got[0] != key):
                    violations.append(f"get({key}) returned {got!r}, a value stored under another key")

    violations += run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    size = len(cache)
    if size > capacity:
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


def model(rng: random.Random, steps: int) -> list[str]:
    """Random put/get against an OrderedDict model; returns the call sequence up to the first divergence."""
    capacity = rng.randint(1, 3)
    cache = solution.LRUCache(capacity)
    shadow: OrderedDict[int, int] = OrderedDict()
    calls = [f"c = LRUCache({capacity})"]
    for step in range(steps):
        key = rng.randrange(capacity + 2)
        if rng.random() < 0.5:
            calls.append(f"c.put({key}, {step})")
            cache.put(key, step)
            shadow[key] = step
            shadow.move_to_end(key)
            if len(shadow) > capacity:
                shadow.popitem(last=False)
        else:
            calls.append(f"c.get({key})")
            got = cache.get(key)
            want = shadow.get(key)
            if key in shadow:
                shadow.move_to_end(key)
            if got != want:
                return [*calls, f"# returned {got!r}; an LRU cache returns {want!r}"]
    return []
