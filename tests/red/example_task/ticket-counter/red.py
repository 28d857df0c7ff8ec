"""Red-agent scenarios for ticket-counter. Stdlib only; runs INSIDE the sandbox as ``_lm_task.py``.

The interface is in docs/tasks.md, "Red-agent scenarios".
"""

from __future__ import annotations

import random
from typing import Any

import solution


def race(args: dict[str, Any], seed: int, run_threads: Any) -> list[str]:
    """Threads take tickets from one counter: no number may come out twice."""
    counter = solution.TicketCounter()
    tickets: list[int] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("takes", 50))):
            tickets.append(counter.take())

    violations: list[str] = run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    twice = len(tickets) - len(set(tickets))
    if twice:
        violations.append(f"{twice} of {len(tickets)} tickets handed out twice")
    return violations


def model(rng: random.Random, steps: int) -> list[str]:
    """take() and issued() against a count; the call sequence up to the first divergence, else []."""
    start = rng.randint(0, 3)
    counter = solution.TicketCounter(start)
    calls = [f"c = TicketCounter({start})"]
    taken = 0
    for _ in range(steps):
        if rng.random() < 0.7:
            calls.append("c.take()")
            got = counter.take()
            taken += 1
            if got != start + taken:
                return [*calls, f"# returned {got!r}; the next ticket is {start + taken}"]
        else:
            calls.append("c.issued()")
            got = counter.issued()
            if got != taken:
                return [*calls, f"# returned {got!r}; {taken} tickets were taken"]
    return []
