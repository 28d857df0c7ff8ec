"""Red-agent scenarios for ticket-counter. Stdlib only.

``race`` and ``model`` run INSIDE the sandbox, in the judge's driver process, and
record what the code answered; ``check_race`` and ``check_model`` judge the records
on the host.
The interface is in docs/tasks.md, "Red-agent scenarios".
"""

from __future__ import annotations

import random
from typing import Any

import solution


def subject(args: dict[str, Any]) -> Any:
    """The counter the race threads share; the host builds it from the reference to judge their history."""
    return solution.TicketCounter()


def race(args: dict[str, Any], seed: int, run_threads: Any) -> dict[str, Any]:
    counter = subject(args)
    tickets: list[Any] = []

    def work(index: int, rng: random.Random) -> None:
        for _ in range(int(args.get("takes", 50))):
            got = counter.take()
            tickets.append(got if type(got) is int else repr(got))

    errors = run_threads(int(args.get("threads", 6)), seed, float(args.get("chance", 0.05)), work)
    return {"tickets": tickets, "errors": errors}


def check_race(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    # On the host: any serial order of the takes hands out 1, 2, ..., n, each once.
    tickets = observed["tickets"]
    violations = [str(e) for e in observed["errors"]]
    twice = len(tickets) - len({repr(t) for t in tickets})
    if twice:
        violations.append(f"{twice} of {len(tickets)} tickets handed out twice")
    return violations


def model(rng: random.Random, steps: int) -> dict[str, Any]:
    start = rng.randint(0, 3)
    counter = solution.TicketCounter(start)
    calls = []
    for _ in range(steps):
        method = "take" if rng.random() < 0.7 else "issued"
        got = getattr(counter, method)()
        calls.append([method, got if type(got) is int else repr(got)])
    return {"start": start, "calls": calls}


def check_model(args: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    start, taken = observed["start"], 0
    shown = [f"c = TicketCounter({start})"]
    for method, got in observed["calls"]:
        shown.append(f"c.{method}()")
        if method == "take":
            taken += 1
            if got != start + taken:
                return [*shown, f"# returned {got!r}; the next ticket is {start + taken}"]
        elif got != taken:
            return [*shown, f"# returned {got!r}; {taken} tickets were taken"]
    return []
