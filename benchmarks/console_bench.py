"""Benchmark: how fast the console drains a burst of 20 000 engine events, and its worst frame gap;
then how long Esc takes to stop a real battle in each stage, beside the floor measured in the same run.

Run: ``.venv/bin/python benchmarks/console_bench.py [--events N] [--size 80x24] [--cancel-repeat N]
[--backends docker,bwrap] [--skip-drain] [--skip-cancel]``. Prints the figures and their ratio to the
targets (drain under 5 s, no gap between UI ticks over 200 ms). The "frame gap" is the longest the UI
event loop went without running a 10 ms ticker: a frame cannot be painted inside such a stall, so it
bounds the worst gap between frames.

Cancel latency: the console runs the real engine (a purple agent on loopback, a real box of the named
backend, the real ledger); once the battle is busy in a stage (the purple agent never answers; the
hidden suite imports code that sleeps; the red search has nodes; scoring has begun) Esc is pressed; the
time from the cancel it triggers until the console shows the battle ended (recorded as cancelled, with
that stage: checked in the ledger) is the latency. The floor is
what any stop must cost, measured in the same run: the console's own Esc round trip (a scripted engine
that stops at once), appending one entry to the ledger, and, for stages with an open box, closing a box
of that backend. The target is 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "tui"))  # the scripted engine the console tests drive
sys.path.insert(0, str(ROOT / "tests" / "cancel"))  # the agents that keep a battle busy in each stage

from cancel_helpers import SLEEPER, BoxSpy, hanging_purple, make_home, purple_serving  # noqa: E402
from scripted_engine import ScriptedEngine, endless_search, make_task, search_events  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from textual.widgets import Input, Select  # noqa: E402

import logomesh.sandbox  # noqa: E402
from ledger import Ledger  # noqa: E402
from logomesh.battle.record import failed_played  # noqa: E402
from logomesh.battle.request import BattleRequest  # noqa: E402
from logomesh.battle.spine import BattleOutcome, record_battle, run_battle  # noqa: E402
from logomesh.cancel import CANCEL_REASON  # noqa: E402
from logomesh.events import BattleFinished, Event, EventSink, MctsNodeAdded, StageStarted  # noqa: E402
from logomesh.sandbox import SandboxUnavailable  # noqa: E402
from logomesh.tasks import default_tasks_dir, load_task_dir  # noqa: E402
from tui.app import ConsoleApp  # noqa: E402
from tui.engine import Engine  # noqa: E402
from tui.screens.battle import BattleScreen  # noqa: E402
from tui.widgets.battle.mcts_tree import MctsTree  # noqa: E402
from tui.widgets.battle.setup_form import URL_CHOICE  # noqa: E402

DRAIN_TARGET_S = 5.0
GAP_TARGET_S = 0.200
CANCEL_TARGET_S = 1.0
STAGES = ("purple", "sandbox", "red", "scoring")
BOXED = {"sandbox", "red"}  # stages that stop with a box open: the floor includes closing one


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


# ---------------------------------------------------------------- cancel latency


@dataclasses.dataclass
class Agents:
    """The purple agents the cancel battles talk to, all on loopback."""

    hanging: str  # never answers
    serving: str  # the mock, answering "sleeper" with SLEEPER and TASK:VARIANT ids from the library


def pinned(backend: str, stages: dict[str, threading.Event], returned: list[float]) -> Engine:
    """The real engine on ``backend``; each stage's event is set as the engine starts it (the UI may skip one),
    and ``returned`` gets the moment ``run_battle`` returned."""

    def engine(request: BattleRequest, emit: EventSink) -> BattleOutcome:
        def noting(event: Event) -> None:
            if isinstance(event, StageStarted) and event.stage in stages:
                stages[event.stage].set()
            emit(event)

        try:
            return run_battle(dataclasses.replace(request, sandbox=backend), noting)
        finally:
            returned.append(time.perf_counter())

    return engine


async def _until(condition: Callable[[], bool], timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("a cancel benchmark battle did not reach its stage in time")
        await asyncio.sleep(0.002)


async def _escape(pilot: Pilot[None], screen: BattleScreen) -> tuple[float, float] | None:
    """Press Esc; when the cancel it triggers ran and when the console showed the battle ended.

    Pilot's ``press`` returns only once the app is idle (about a second behind a busy screen), so the
    clock starts when the Esc binding reaches the runner's ``cancel`` and stops at the first poll that
    finds the ending shown. ``None`` if the battle had ended before the Esc reached it.
    """
    cancelled_at: list[float] = []
    cancel = screen.runner.cancel

    def timed_cancel() -> None:
        cancelled_at.append(time.perf_counter())
        cancel()

    screen.runner.cancel = timed_cancel  # type: ignore[method-assign]
    press = asyncio.create_task(pilot.press("escape"))
    await _until(lambda: screen.last_ending is not None)
    ended = time.perf_counter()
    await press
    screen.runner.cancel = cancel  # type: ignore[method-assign]
    return (cancelled_at[0], ended) if cancelled_at else None


async def _fill_form(pilot: Pilot[None], screen: BattleScreen, stage: str, agents: Agents) -> str:
    """Set the form for a battle that will be busy in ``stage``; its battle id."""
    form_task, purple, url, battle_id, budget = {
        "purple": ("rate-limiter", URL_CHOICE, agents.hanging, "bench-cancel", "0"),
        "sandbox": ("rate-limiter", URL_CHOICE, agents.serving, "sleeper", "0"),
        "red": ("lru-cache", "no-lock", "", "bench-cancel", "600"),
        "scoring": ("rate-limiter", "good", "", "bench-cancel", "0"),
    }[stage]
    screen.query_one("#task", Select).value = form_task
    await pilot.pause()
    screen.query_one("#purple", Select).value = purple
    await pilot.pause()
    if url:
        screen.query_one("#url", Input).value = url
    screen.query_one("#battle-id", Input).value = battle_id
    screen.query_one("#budget", Input).value = budget
    return battle_id


async def _busy_in(screen: BattleScreen, stage: str, spy: BoxSpy, stages: dict[str, threading.Event]) -> None:
    """Wait until the battle is busy inside ``stage``."""
    if stage == "purple":
        await _until(stages["purple"].is_set)
        await asyncio.sleep(0.3)  # the request is on the wire
    elif stage == "sandbox":
        await _until(spy.opened.is_set)
        await asyncio.sleep(0.5)  # the hidden suite is under way
    elif stage == "red":
        tree = screen.query_one(MctsTree)
        await _until(lambda: len(tree.stats) > 1)
        await asyncio.sleep(0.2)  # a probe is running
    else:
        await _until(stages["scoring"].is_set)  # and Esc at once: scoring lasts a few hundred ms


async def cancel_latency(stage: str, backend: str, agents: Agents, home: Path) -> tuple[float, float] | None:
    """Seconds from the Esc's cancel to the engine returning and to the console showing the battle ended.

    ``None`` if the battle ended otherwise (the Esc came after the stage was over).
    """
    spy = BoxSpy(logomesh.sandbox.open_sandbox)
    stages = {name: threading.Event() for name in STAGES}
    returned: list[float] = []
    real, logomesh.sandbox.open_sandbox = logomesh.sandbox.open_sandbox, spy
    tasks = [load_task_dir(default_tasks_dir() / name) for name in ("rate-limiter", "lru-cache")]
    try:
        app = ConsoleApp(home, tasks=tasks, engine=pinned(backend, stages, returned))
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.battle_screen
            battle_id = await _fill_form(pilot, screen, stage, agents)
            await pilot.press("ctrl+r")
            await _busy_in(screen, stage, spy, stages)
            times = await _escape(pilot, screen)
            ending = screen.last_ending
    finally:
        logomesh.sandbox.open_sandbox = real
    assert ending is not None
    if times is None or ending.status != "cancelled":
        return None
    with Ledger.open(home) as led:
        stored = led.get(battle_id)
    if stored is None or stored.result.get("stage") != stage:
        raise SystemExit(f"the {stage} cancel was recorded as {stored.result if stored else None}")
    cancelled, shown = times
    return returned[0] - cancelled, shown - cancelled


async def console_round_trip() -> float:
    """Esc to ended, for a scripted engine that stops at its next event: the console's own share."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        app = ConsoleApp(root / "home", tasks=[make_task(root / "task")],
                         engine=ScriptedEngine(endless_search("floor"), pause_s=0.002))
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.battle_screen
            await pilot.press("ctrl+r")
            tree = screen.query_one(MctsTree)
            await _until(lambda: len(tree.stats) > 20)
            times = await _escape(pilot, screen)
            assert times is not None
            return times[1] - times[0]


def ledger_append(home: Path, n: int) -> list[float]:
    """Seconds to record a stopped battle's result, on a ledger already open once."""
    times = []
    for i in range(n + 1):
        request = BattleRequest(task_id="rate-limiter", battle_id=f"floor-{i}", seed=0, home=home, mock_variant="good")
        started = time.perf_counter()
        record_battle(home, request.battle_id, failed_played(request, "purple", CANCEL_REASON))
        if i:
            times.append(time.perf_counter() - started)
    return times


def box_close(backend: str, n: int) -> list[float] | None:
    times = []
    for _ in range(n):
        try:
            box = logomesh.sandbox.open_sandbox(backend)
        except SandboxUnavailable as exc:
            print(f"{backend}: unavailable ({exc}); skipped")
            return None
        started = time.perf_counter()
        box.close()
        times.append(time.perf_counter() - started)
    return times


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} / {max(values) * 1000:.0f}"


def measure_cancel(repeat: int, backends: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        console = [asyncio.run(console_round_trip()) for _ in range(repeat)]
        ledger = ledger_append(make_home(root / "floor"), repeat)
        closes = {b: box_close(b, repeat) for b in backends}
        print(f"cancel floor parts (median / max ms over {repeat}): console Esc round trip {_ms(console)}"
              f"  ledger append {_ms(ledger)}"
              + "".join(f"  close {b} box {_ms(t)}" for b, t in closes.items() if t is not None))
        print(f"{'':17}{'engine stopped (ms)':^35}{'console showed it (ms)':^35}")
        print(f"{'backend':<8}{'stage':<9}{'median / max':>15}{'floor':>8}{'ratio':>7}   "
              f"{'median / max':>15}{'floor':>8}{'ratio':>7}{'vs 1 s':>8}  missed")
        with hanging_purple() as hanging, purple_serving(root / "responses", {"sleeper": SLEEPER}) as serving:
            agents = Agents(hanging, serving)
            for backend, close in closes.items():
                if close is None:
                    continue
                for stage in STAGES:
                    engine: list[float] = []
                    shown: list[float] = []
                    missed = 0
                    for i in range(repeat):
                        home = make_home(root / f"{backend}-{stage}-{i}")
                        times = asyncio.run(cancel_latency(stage, backend, agents, home))
                        if times is None:
                            missed += 1
                        else:
                            engine.append(times[0])
                            shown.append(times[1])
                    if not engine:
                        print(f"{backend:<8}{stage:<9}(every Esc came after the stage ended)")
                        continue
                    floor = statistics.median(ledger) + (statistics.median(close) if stage in BOXED else 0.0)
                    seen_floor = floor + statistics.median(console)
                    stop, seen = statistics.median(engine), statistics.median(shown)
                    print(f"{backend:<8}{stage:<9}{_ms(engine):>15}{floor * 1000:8.0f}{stop / floor:7.2f}   "
                          f"{_ms(shown):>15}{seen_floor * 1000:8.0f}{seen / seen_floor:7.2f}"
                          f"{seen / CANCEL_TARGET_S:8.2f}  {missed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--size", default="80x24")
    parser.add_argument("--repeat", type=int, default=1, help="runs; each is reported, then the worst")
    parser.add_argument("--cancel-repeat", type=int, default=3, help="cancels per stage and backend")
    parser.add_argument("--backends", default="docker,bwrap", help="sandbox backends for the cancel battles")
    parser.add_argument("--skip-drain", action="store_true")
    parser.add_argument("--skip-cancel", action="store_true")
    args = parser.parse_args()
    if not args.skip_drain:
        drain_main(args)
    if not args.skip_cancel:
        measure_cancel(args.cancel_repeat, [b for b in args.backends.split(",") if b])


def drain_main(args: argparse.Namespace) -> None:
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
