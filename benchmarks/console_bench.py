"""Benchmark: how fast the console drains a burst of 20 000 engine events, and its worst frame gap.

Run: ``.venv/bin/python benchmarks/console_bench.py [--events N] [--size 80x24]``. Prints the figures and
their ratio to the targets (drain under 5 s, no gap between UI ticks over 200 ms). The "frame gap" is the
longest the UI event loop went without running a 10 ms ticker: a frame cannot be painted inside such a
stall, so it bounds the worst gap between frames.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "tui"))  # the scripted engine the console tests drive

from scripted_engine import ScriptedEngine, make_task, search_events  # noqa: E402

from logomesh.events import BattleFinished, Event, MctsNodeAdded  # noqa: E402
from tui.app import ConsoleApp  # noqa: E402
from tui.widgets.battle.mcts_tree import MctsTree  # noqa: E402

DRAIN_TARGET_S = 5.0
GAP_TARGET_S = 0.200


def burst(count: int, battle_id: str = "bench") -> list[Event]:
    events: list[Event] = []
    nodes = 64
    while len(events) < count - 1:
        events = search_events(battle_id, nodes, seed=11)
        nodes *= 2
    return [*events[: count - 1], BattleFinished(battle_id, 0.5, "scored")]


async def measure(count: int, size: tuple[int, int]) -> dict[str, float]:
    events = burst(count)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        app = ConsoleApp(root / "home", tasks=[make_task(root / "task")], engine=ScriptedEngine(events))
        async with app.run_test(size=size) as pilot:
            screen = app.battle_screen
            gaps: list[float] = []
            last = time.perf_counter()

            def tick() -> None:
                nonlocal last
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

            ticker = app.set_interval(0.01, tick)
            started = time.perf_counter()
            await pilot.press("ctrl+r")
            while screen.last_ending is None:
                await asyncio.sleep(0.005)
            drained = time.perf_counter() - started
            await pilot.pause()
            ticker.stop()
            nodes_shown = len(screen.query_one(MctsTree).stats)
    expected_nodes = sum(isinstance(e, MctsNodeAdded) for e in events)
    if nodes_shown != expected_nodes:
        raise SystemExit(f"lost node events: showed {nodes_shown} of {expected_nodes}")
    ordered = sorted(gaps)
    return {"events": float(len(events)), "nodes": float(nodes_shown), "drain_s": drained,
            "worst_gap_s": ordered[-1] if ordered else 0.0,
            "p95_gap_s": ordered[int(0.95 * (len(ordered) - 1))] if ordered else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--size", default="80x24")
    parser.add_argument("--repeat", type=int, default=1, help="runs; each is reported, then the worst")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.split("x"))
    runs = [asyncio.run(measure(args.events, (width, height))) for _ in range(args.repeat)]
    for figures in runs:
        print(f"events {int(figures['events'])}  nodes {int(figures['nodes'])}  screen {args.size}  "
              f"drain {figures['drain_s']:.2f} s  worst gap {figures['worst_gap_s'] * 1000:.0f} ms  "
              f"p95 gap {figures['p95_gap_s'] * 1000:.0f} ms")
    drain = max(r["drain_s"] for r in runs)
    gap = max(r["worst_gap_s"] for r in runs)
    print(f"worst of {len(runs)}: drain {drain:.2f} s (target {DRAIN_TARGET_S:.1f} s, "
          f"ratio {drain / DRAIN_TARGET_S:.2f})"
          f"  gap {gap * 1000:.0f} ms (target {GAP_TARGET_S * 1000:.0f} ms, ratio {gap / GAP_TARGET_S:.2f})")


if __name__ == "__main__":
    main()
