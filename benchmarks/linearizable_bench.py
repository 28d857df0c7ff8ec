"""The linearizability checker's cost: model steps and wall time beside a sequential replay, in one run.

Usage: python benchmarks/linearizable_bench.py [--rounds N] [--json]

Workloads (a counter: ``inc`` adds one and answers nothing, ``get`` answers the count):
  concurrent-ok    8 processes x 5 increments, every process's n-th call overlapping all the others'
                   n-th calls (and no other), then one read of 40: linearizable
  concurrent-bad   the same with the read answering 41, which no order gives: the search must visit
                   every set of placed increments it can reach before saying no
The floor is a sequential replay of the same calls through the model in one valid order (what checking
would cost if the order were known); ratio is the checker's time over the floor's. Each is the best of
--rounds runs (on a shared machine noise only slows a run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Hashable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.red.linearizable import Operation, check  # noqa: E402

PROCESSES, ROUNDS = 8, 5
Call = Operation[str, int]


class Counter:
    def init(self) -> int:
        return 0

    def step(self, state: int, input: str, output: int) -> tuple[bool, int]:
        if input == "inc":
            return True, state + 1
        return output == state, state

    def key(self, state: int) -> Hashable:
        return state


def history(final: int) -> list[Call]:
    calls = [Operation(p, 100 * k, 100 * k + 90, "inc", 0) for k in range(ROUNDS) for p in range(PROCESSES)]
    return [*calls, Operation(PROCESSES, 100 * ROUNDS, 100 * ROUNDS + 10, "get", final)]


def replay(calls: list[Call]) -> int:
    """The floor: every call once through the model, in the order given (a valid one for the good history)."""
    model, state, steps = Counter(), Counter().init(), 0
    for call in calls:
        _, state = model.step(state, call.input, call.output)
        steps += 1
    return steps


def best_s(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    for name, final in (("concurrent-ok", PROCESSES * ROUNDS), ("concurrent-bad", PROCESSES * ROUNDS + 1)):
        calls = history(final)
        outcome = check(calls, Counter())
        check_s = best_s(partial(check, calls, Counter()), args.rounds)
        floor_s = best_s(partial(replay, calls), args.rounds)
        figures[name] = {
            "ops": len(calls), "linearizable": outcome.linearizable, "steps": outcome.steps,
            "floor_steps": replay(calls), "check_ms": round(check_s * 1e3, 3), "floor_ms": round(floor_s * 1e3, 4),
            "ratio": round(check_s / floor_s, 1),
        }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, row in figures.items():
        print(f"{name:16} " + "  ".join(f"{key}={value}" for key, value in row.items()))


if __name__ == "__main__":
    main()
