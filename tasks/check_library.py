#!/usr/bin/env python3
"""Check the task library through a real sandbox, judging hidden tests as battles do.

Usage:  .venv/bin/python tasks/check_library.py [TASK_ID ...] [--sandbox auto|docker|bwrap]

For each task (``logomesh.tasks.check``): the hidden drivers judge nothing
themselves; the reference completes every driver, twice, with byte-identical
observations; ``good`` and every label without a behaviour defect pass every
hidden test (``race`` may fail, being timing-dependent); each labelled
``behaviour_defect: true`` submission fails at least one. Exit status 1 if
anything is broken, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logomesh.sandbox import SandboxUnavailable, open_sandbox  # noqa: E402
from logomesh.tasks.check import check_task  # noqa: E402
from logomesh.tasks import TaskError, all_tasks, load_task  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="task ids (default: all)")
    parser.add_argument("--sandbox", default="auto", choices=["auto", "docker", "bwrap"])
    args = parser.parse_args(argv)
    try:
        tasks = [load_task(t) for t in args.tasks] if args.tasks else all_tasks()
    except TaskError as exc:
        print(f"check_library: {exc}", file=sys.stderr)
        return 2
    problems: list[str] = []
    try:
        with open_sandbox(args.sandbox) as box:
            for task in tasks:
                check = check_task(box, task, min_hidden=12)  # the built-in library's floor (tasks/README.md)
                print("\n".join(check.lines))
                problems += check.problems
    except SandboxUnavailable as exc:
        print(f"check_library: {exc}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    print(f"{len(tasks)} task(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
