"""Red-agent scenarios for rate-limiter. Stdlib only.

The scenarios run INSIDE the sandbox, in the judge's driver process, where
``solution`` is the answerer's proxies: they record what the code answered;
``check_race`` judges the race record on the host.

The interface is in docs/tasks.md, "Red-agent scenarios"; the [red] tables of
task.toml say which of these the red agent uses and how it describes them.
"""

from __future__ import annotations

import random
from typing import Any

import solution


def subject(args: dict[str, Any]) -> Any:
    """The object the race threads share; the host builds it from the reference to judge their history."""
    return solution.RateLimiter(int(args.get("limit", 5)), 1000.0, clock=lambda: 5.0)


def race(args: dict[str, Any], seed: int, run_threads: Any) -> dict[str, Any]:
    """Threads call allow('k') at one clock reading; records every answer (judged by ``check_race``)."""
    limit = int(args.get("limit", 5))
    calls = int(args.get("calls", 4))
    threads = int(args.get("threads", 8))
    limiter = subject(args)
    answers: list[Any] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(calls):
            got = limiter.allow("k")
            answers.append(got if type(got) is bool else repr(got)[:40])

    errors = run_threads(threads, seed, float(args.get("chance", 0.05)), work)
    return {"answers": answers, "errors": errors}


def check_race(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: every call of any serial order at one clock reading gets True until the limit, then False,
    so the answers must hold exactly min(calls, limit) True and nothing but booleans."""
    limit = int(args.get("limit", 5))
    total_calls = int(args.get("threads", 8)) * int(args.get("calls", 4))
    answers = list(observed["answers"])
    violations = [str(e) for e in observed["errors"]]
    odd = [a for a in answers if type(a) is not bool]
    if odd:
        violations.append(f"allow() answered {odd[0]!r}, not a bool")
    if len(answers) != total_calls and not violations:
        violations.append(f"{len(answers)} answers recorded for {total_calls} calls")
    granted = sum(1 for a in answers if a is True)
    if granted != min(limit, total_calls):
        violations.append(f"{granted} grants for one key at one clock reading; the limit is "
                          f"{min(limit, total_calls)}")
    return violations


def grow(size: int) -> Any:
    """Distinct keys arrive steadily; about 100 are live at any time, the rest have expired."""
    now = [0.0]
    limiter = solution.RateLimiter(2, 1.0, clock=lambda: now[0])
    for i in range(size):
        now[0] += 0.01
        limiter.allow(f"key-{i}")
    return limiter


START_TIMES = (0, 0, 1_000_000, 1_000_000_000)  # where the clock starts: a host up for days reads large values


def model(rng: random.Random, steps: int) -> dict[str, Any]:
    """Integer clock steps, now and then a jump past the window, from a start that may be large (a long-running
    host's monotonic clock), and allow() calls on keys made afresh each call (equal, never the same object);
    records each answer exactly as typed (judged by ``check_model``)."""
    limit = rng.randint(1, 3)
    window = rng.randint(2, 4)
    start = rng.choice(START_TIMES)
    now = [0]
    limiter = solution.RateLimiter(limit, float(window), clock=lambda: float(start + now[0]))
    record: list[list[Any]] = []
    for _ in range(steps):
        if rng.random() < 0.4:
            now[0] += rng.randint(1, 2) if rng.random() < 0.9 else rng.randint(window, 3 * window)
            record.append(["t", now[0]])
        key = "".join(["k", rng.choice("ab")])
        got = limiter.allow(key)
        record.append(["allow", key, got if type(got) is bool else repr(got)[:40]])
    return {"limit": limit, "window": window, "start": start, "steps": record}


def check_model(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """On the host: the calls up to the first answer an exact sliding window would not give, or that is not a
    bool; [] if none."""
    limit, window, start = int(observed["limit"]), int(observed["window"]), int(observed.get("start", 0))
    calls = [f"t = {start}; r = RateLimiter({limit}, {float(window)}, clock=lambda: t)"]
    now = 0
    grants: dict[str, list[int]] = {}
    for step in observed["steps"]:
        if step[0] == "t":
            now = int(step[1])
            calls.append(f"t = {start + now}")
            continue
        key, got = str(step[1]), step[2]
        calls.append(f"r.allow({key!r})")
        live = [g for g in grants.get(key, []) if g > now - window]
        want = len(live) < limit
        if want:
            live.append(now)
        grants[key] = live
        if type(got) is not bool or got != want:  # what is not a bool was recorded as its repr
            shown = got if type(got) is str else repr(got)
            return [*calls, f"# returned {shown}; the sliding window allows {want!r}"]
    return []
