"""What watching the code's writes and connections costs a hidden-suite run (``harness/egress.py``).

Usage: python benchmarks/egress_cost.py [--tasks ID,ID] [--sandbox docker|bwrap] [--repeat N] [--json]

For each task, in one box, the ``good`` submission's hidden drivers run ``observe_suite`` unwatched and watched
(``Watch``: the canary planted, inotify on the writable places, the seccomp filter and its supervisor),
alternating run by run so both see the same load. Prints the median seconds of each and the ratio watched /
unwatched, per task and over all, and the load average. Only the injection oracles ask for a watch: a battle's
runs are unwatched and cost what they did.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from logomesh.sandbox.base import Watch
from logomesh.sandbox.choose import open_sandbox
from logomesh.tasks import all_tasks

WATCH = Watch((("LM_API_TOKEN", "lm0123456789abcdef01234567"),))


def measure(sandbox: str, task_ids: list[str], repeat: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    tasks = [t for t in all_tasks() if not task_ids or t.id in task_ids]
    with open_sandbox(sandbox) as box:
        for task in tasks:
            source = task.labelled_submission("good").submission.source
            box.observe_suite(source, task.hidden_tests)  # warm: the first run of a box pays its start
            plain: list[float] = []
            watched: list[float] = []
            for _ in range(repeat):
                for watch, into in ((None, plain), (WATCH, watched)):
                    started = time.perf_counter()
                    box.observe_suite(source, task.hidden_tests, watch=watch)
                    into.append(time.perf_counter() - started)
            rows.append({"task": task.id, "plain_s": statistics.median(plain), "watched_s": statistics.median(watched),
                         "ratio": statistics.median(watched) / statistics.median(plain)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every built-in task)")
    parser.add_argument("--sandbox", default="docker", choices=("docker", "bwrap"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    rows = measure(options.sandbox, [t for t in options.tasks.split(",") if t], options.repeat)
    plain = sum(float(str(r["plain_s"])) for r in rows)
    watched = sum(float(str(r["watched_s"])) for r in rows)
    summary = {"sandbox": options.sandbox, "repeat": options.repeat, "rows": rows, "plain_s": plain,
               "watched_s": watched, "ratio": watched / plain, "load": os.getloadavg()}
    if options.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{'task':20} {'unwatched s':>12} {'watched s':>10} {'ratio':>6}")
    for row in rows:
        print(f"{row['task']:20} {row['plain_s']:12.3f} {row['watched_s']:10.3f} {row['ratio']:6.2f}")
    print(f"{'all':20} {plain:12.3f} {watched:10.3f} {watched / plain:6.2f}   "
          f"({options.sandbox}, median of {options.repeat}, load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
