"""Sandbox speed: container start, per-run harness overhead, hidden-suite wall time per task.

Usage: python benchmarks/sandbox_bench.py [--backend docker|bwrap|both] [--repeat N] [--json]

Figures (medians over --repeat runs):
  start          open_sandbox() until the harness answers (Docker: create + start + attach)
  bare_run       `docker run --rm <image> python3 -c pass`, the cost of a container per run
  docker_exec    `docker exec <box> python3 -S -c pass` through the engine API (no harness)
  in_box_exec    fork + exec of `python3 -S -c pass` measured inside the box
  run_script     box.run_script({}, "pass") seen from the host
  overhead       run_script - in_box_exec: what the harness adds to a run
  suite[task]    the hidden suite on the reference, three ways, side by side (medians):
                   before: the pre-observation suite (git PRE_OBSERVATION) judged in the box
                   cold:   run_hidden with an empty reference cache (reference run + submission run)
                   warm:   run_hidden with the reference's observations cached (what a battle pays)
Targets from the issues: start <= 0.5 s, overhead <= 10 ms, any suite <= 3 s, warm <= 1.5x before.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.sandbox import Sandbox, open_sandbox  # noqa: E402
from logomesh.sandbox.image import image_tag  # noqa: E402
from logomesh.tasks import TaskError, TaskSpec, default_tasks_dir, load_task_dir  # noqa: E402
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden  # noqa: E402

IN_BOX_EXEC = """
import os, statistics, sys, time
samples = []
for _ in range({n}):
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.execv(sys.executable, ['python3', '-S', '-c', 'pass'])
    os.waitpid(pid, 0)
    samples.append(time.perf_counter() - t)
print(statistics.median(samples))
"""


PRE_OBSERVATION = "972ef13"  # the last commit whose hidden suites were judged inside the box


def suite_before(task: TaskSpec) -> dict[str, str] | None:
    """The task's hidden suite as it was before observation drivers, from git; None without git history."""
    where = f"tasks/{task.id}/hidden"
    try:
        names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{PRE_OBSERVATION}:{where}"],
                               capture_output=True, text=True, check=True).stdout.split()
        return {name: subprocess.run(["git", "-C", str(ROOT), "show", f"{PRE_OBSERVATION}:{where}/{name}"],
                                     capture_output=True, text=True, check=True).stdout for name in names}
    except (OSError, subprocess.CalledProcessError):
        return None


def loadable_tasks() -> list[TaskSpec]:
    """Every task that loads; a task still being written is reported and skipped."""
    found = []
    for folder in sorted(p for p in default_tasks_dir().iterdir() if (p / "task.toml").is_file()):
        try:
            found.append(load_task_dir(folder))
        except TaskError as exc:
            print(f"skipped: {exc}", file=sys.stderr)
    return found


def median_of(repeat: int, action: Callable[[], Any]) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def suite_row(box: Sandbox, task: TaskSpec, repeat: int) -> dict[str, float]:
    """Median seconds of the three ways to run the task's hidden suite, measured in alternating rounds."""
    before = suite_before(task)
    warm = ReferenceCache()
    run = run_hidden(box, task, task.reference, cache=warm).suite
    if run.passed != run.total:
        print(f"warning: {task.id} reference {run.passed}/{run.total} in {box.backend}", file=sys.stderr)
    samples: dict[str, list[float]] = {"before": [], "cold": [], "warm": []}
    for _ in range(repeat):
        if before is not None:
            samples["before"].append(timed(lambda: box.run_suite(task.reference, before, timeout_s=60)))
        samples["cold"].append(timed(lambda: run_hidden(box, task, task.reference, cache=ReferenceCache())))
        samples["warm"].append(timed(lambda: run_hidden(box, task, task.reference, cache=warm)))
    return {name: statistics.median(values) for name, values in samples.items() if values}


def timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def bench_backend(kind: str, repeat: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"backend": kind}
    figures["start_s"] = median_of(max(3, repeat // 5), lambda: open_sandbox(kind).close())
    box: Sandbox = open_sandbox(kind)
    try:
        figures["image_id"] = box.image_id
        box.run_script({}, "pass")  # warm
        figures["run_script_s"] = median_of(repeat, lambda: box.run_script({}, "pass"))
        probe = box.run_script({}, IN_BOX_EXEC.format(n=repeat), timeout_s=60)
        figures["in_box_exec_s"] = float(probe.stdout.strip())
        figures["overhead_s"] = figures["run_script_s"] - figures["in_box_exec_s"]
        if kind == "docker":
            container = getattr(box, "container_id", "")
            figures["docker_exec_s"] = median_of(
                max(3, repeat // 3),
                lambda: subprocess.run(["docker", "exec", container, "python3", "-S", "-c", "pass"], check=True),
            )
            figures["bare_run_s"] = median_of(
                max(3, repeat // 5),
                lambda: subprocess.run(
                    ["docker", "run", "--rm", "--network", "none", image_tag(), "python3", "-c", "pass"], check=True
                ),
            )
        suites = {task.id: suite_row(box, task, max(3, repeat // 10)) for task in loadable_tasks()}
        figures["suite_s"] = suites
    finally:
        box.close()
    return figures


def report(figures: dict[str, Any]) -> None:
    kind = figures["backend"]
    ms = 1000.0
    print(f"== {kind}  ({figures['image_id']})")
    print(f"start              {figures['start_s']:.3f} s   (target <= 0.5 s)")
    if "bare_run_s" in figures:
        print(f"bare docker run    {figures['bare_run_s']:.3f} s   (a container per run)")
        print(f"docker exec        {figures['docker_exec_s'] * ms:.1f} ms")
    print(f"in-box fork+exec   {figures['in_box_exec_s'] * ms:.1f} ms  (python3 -S -c pass)")
    print(f"run_script('pass') {figures['run_script_s'] * ms:.1f} ms")
    print(f"harness overhead   {figures['overhead_s'] * ms:.1f} ms  (target <= 10 ms)")
    if "bare_run_s" in figures:
        print(f"ratio bare docker run / run_script   {figures['bare_run_s'] / figures['run_script_s']:.1f}x")
        print(f"ratio docker exec / run_script       {figures['docker_exec_s'] / figures['run_script_s']:.1f}x")
    print(f"{'suite':<24}{'before':>10}{'cold':>10}{'warm':>10}{'warm/before':>13}{'cold/before':>13}")
    for task_id, row in sorted(figures["suite_s"].items()):
        before = row.get("before")
        ratios = (f"{row['warm'] / before:>12.2f}x{row['cold'] / before:>12.2f}x" if before else "")
        shown = f"{before * ms:8.0f}ms" if before else f"{'n/a':>10}"
        print(f"{task_id:<24}{shown}{row['cold'] * ms:8.0f}ms{row['warm'] * ms:8.0f}ms{ratios}")
    worst = max((row["warm"] for row in figures["suite_s"].values()), default=0.0)
    print(f"slowest suite (warm) {worst:.2f} s   (target <= 3 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["docker", "bwrap", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kinds = ["docker", "bwrap"] if args.backend == "both" else [args.backend]
    results = [bench_backend(kind, args.repeat) for kind in kinds]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for figures in results:
            report(figures)


if __name__ == "__main__":
    main()
