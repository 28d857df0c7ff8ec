"""Red-agent scenarios for rate-limiter. Stdlib only; runs INSIDE the sandbox as ``_lm_task.py``.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import random
from typing import Any

import solution


def race(args: dict[str, Any], seed: int, run_threads: Any) -> list[str]:
    """Threads call allow('k') at one clock reading: exactly min(calls, limit) grants, never more."""
    limit = int(args.get("limit", 5))
    calls = int(args.get("calls", 4))
    threads = int(args.get("threads", 8))
    limiter = solution.RateLimiter(limit, 1000.0, clock=lambda: 5.0)
    granted: list[bool] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(calls):
            granted.append(bool(limiter.allow("k")))

    errors = run_threads(threads, seed, float(args.get("chance", 0.05)), work)
    total = sum(granted)
    expected = min(limit, threads * calls)
    violations = list(errors)
    if total != expected:
        violations.append(f"{total} grants for one key at one clock reading; the limit is {expected}")
    return violations


def grow(size: int) -> Any:
    """Distinct keys arrive steadily; about 100 are live at any time, the rest have expired."""
    now = [0.0]
    limiter = solution.RateLimiter(2, 1.0, clock=lambda: now[0])
    for i in range(size):
        now[0] += 0.01
        limiter.allow(f"key-{i}")
    return limiter


def model(rng: random.Random, steps: int) -> list[str]:
    """Integer clock readings against an exact sliding-window model."""
    limit = rng.randint(1, 3)
    window = rng.randint(2, 4)
    now = [0]
    limiter = solution.RateLimiter(limit, float(window), clock=lambda: float(now[0]))
    grants: dict[str, list[int]] = {}
    calls = [f"t = 0; r = RateLimiter({limit}, {float(window)}, clock=lambda: t)"]
    for _ in range(steps):
        if rng.random() < 0.4:
            now[0] += rng.randint(1, 2)
            calls.append(f"t = {now[0]}")
        key = rng.choice("ab")
        calls.append(f"r.allow({key!r})")
        got = limiter.allow(key)
        live = [g for g in grants.get(key, []) if g > now[0] - window]
        want = len(live) < limit
        if want:
            live.append(now[0])
        grants[key] = live
        if bool(got) != want:
            return [*calls, f"# returned {got!r}; the sliding window allows {want!r}"]
    return []
