"""What a judge the code can neither recognise nor rewrite costs: hidden-suite and red time per task, before/after.

Usage: python benchmarks/judge_cost.py [--baseline REV] [--after REV] [--tasks ID,ID] [--sandbox docker|bwrap]
                                      [--repeat N] [--json]

"Before" is this repository at ``--baseline`` (default: the last commit before the neutral observer, the
audit hook, the plain rerun and the host-side oracles), unpacked with ``git archive`` into a temporary
folder; "after" is the working tree. For every task, each side measures, in its own process and its own
box, the ``good`` submission's hidden suite (``run_hidden``, the reference's observations computed
beforehand and not timed), a red attack on it (``attack``, default budget, seed 0) and its own tests (the
purple's suite, ``run_suite``; reported apart, not in the judging sum); the two sides
alternate task by task and repeat by repeat, so both see the same load. Prints the median seconds of each,
the ratio after/before, and the ratio of their sum (what a battle's judging costs), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "7e47623"  # main before issue 21's judge work
MEASURE = r"""
import json, sys, time
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden
from logomesh.red.agent import attack
from logomesh.sandbox.choose import open_sandbox
from logomesh.tasks import load_task
from logomesh.context import BattleContext
task_id, sandbox = sys.argv[1], sys.argv[2]
task = load_task(task_id)
source = task.labelled_submission("good").submission.source
with open_sandbox(sandbox) as box:
    cache = ReferenceCache(None)
    cache.get(box, task)  # the reference's observations: computed once, not measured
    started = time.perf_counter()
    run = run_hidden(box, task, source, cache=cache)
    hidden = time.perf_counter() - started
    started = time.perf_counter()
    report = attack(task, source, box, BattleContext(seed=0), budget_s=3.0)
    red = time.perf_counter() - started
    own_tests = task.labelled_submission("good").submission.tests
    started = time.perf_counter()
    own_run = box.run_suite(source, {"test_solution.py": own_tests}, 60.0) if own_tests else None
    own = time.perf_counter() - started
print(json.dumps({"hidden": hidden, "red": red, "own": own, "passed": run.suite.passed, "total": run.suite.total,
                  "own_passed": own_run.passed if own_run else 0, "findings": len(report.findings)}))
"""


def unpack(rev: str, into: Path) -> Path:
    """The tree of ``rev``, from ``git archive`` (no checkout, no worktree left behind)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def measure(tree: Path, task_id: str, sandbox: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", MEASURE, task_id, sandbox], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"judge_cost: measuring {task_id} in {tree} failed: {done.stderr.strip()[-300:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--after", default="", help="a revision instead of the working tree (to isolate a change)")
    parser.add_argument("--tasks", default="")
    parser.add_argument("--sandbox", default="docker", choices=("docker", "bwrap"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from logomesh.tasks import all_tasks

    wanted = [t for t in args.tasks.split(",") if t]
    task_ids = [t.id for t in all_tasks() if not wanted or t.id in wanted]
    rows = []
    with tempfile.TemporaryDirectory(prefix="logomesh-baseline-") as folder:
        before_tree = unpack(args.baseline, Path(folder) / "before")
        after_tree = unpack(args.after, Path(folder) / "after") if args.after else ROOT
        for task_id in task_ids:
            samples: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
            for _ in range(args.repeat):
                samples["before"].append(measure(before_tree, task_id, args.sandbox))
                samples["after"].append(measure(after_tree, task_id, args.sandbox))
            row: dict[str, Any] = {"task": task_id}
            for side, runs in samples.items():
                for part in ("hidden", "red", "own"):
                    row[f"{part}_{side}"] = round(statistics.median(r[part] for r in runs), 3)
                row[f"passed_{side}"] = f"{runs[0]['passed']}/{runs[0]['total']}"
            for part in ("hidden", "red", "own"):
                row[f"{part}_ratio"] = round(row[f"{part}_after"] / max(row[f"{part}_before"], 1e-9), 2)
            row["total_ratio"] = round((row["hidden_after"] + row["red_after"])
                                       / max(row["hidden_before"] + row["red_before"], 1e-9), 2)
            rows.append(row)
            if not args.json:
                print(f"{task_id:16} hidden {row['hidden_before']:7.2f} -> {row['hidden_after']:7.2f} s "
                      f"(x{row['hidden_ratio']:.2f})  red {row['red_before']:7.2f} -> {row['red_after']:7.2f} s "
                      f"(x{row['red_ratio']:.2f})  both x{row['total_ratio']:.2f}  own tests "
                      f"{row['own_before']:5.2f} -> {row['own_after']:5.2f} s (x{row['own_ratio']:.2f})  "
                      f"passed {row['passed_before']} -> {row['passed_after']}", flush=True)
    if args.json:
        print(json.dumps({"baseline": args.baseline, "sandbox": args.sandbox, "repeat": args.repeat,
                          "rows": rows}, indent=2))
    else:
        worst = max(rows, key=lambda r: r["total_ratio"])
        print(f"load average {os.getloadavg()[0]:.1f}; "
              f"worst task by judging time: {worst['task']} x{worst['total_ratio']:.2f}; "
              f"worst hidden suite x{max(r['hidden_ratio'] for r in rows):.2f}; "
              f"worst red x{max(r['red_ratio'] for r in rows):.2f}; "
              f"worst own tests x{max(r['own_ratio'] for r in rows):.2f}")


if __name__ == "__main__":
    main()
