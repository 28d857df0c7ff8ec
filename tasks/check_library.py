#!/usr/bin/env python3
"""Check the task library on the host: run every hidden suite against the
reference and every labelled submission, and each submission's own tests
against its source.

Usage:  python3 tasks/check_library.py [TASK_ID ...] [-v]

Expectations checked (exit status 1 if any is broken):
  * the reference passes every hidden test, and there are >= 12 of them;
  * ``good`` submissions (and any with ``behaviour_defect: false`` except
    ``race``, whose failures may be timing-dependent) pass every hidden test;
  * ``behaviour_defect: true`` submissions fail at least one hidden test;
  * ``good`` submissions pass their own ``testCode``.

This runs the library's own trusted files directly on the host (no sandbox),
so it is meant for the people who write the tasks, not for scoring.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent
MIN_HIDDEN = 12
RUN_TIMEOUT = 120.0

# Runs inside the temp dir: discover test_*.py, report counts as one JSON line.
_RUNNER = r"""
import io, json, sys, unittest
sys.path.insert(0, ".")
suite = unittest.defaultTestLoader.discover(".", pattern=sys.argv[1])
result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
bad = [(str(t), "failure") for t, _ in result.failures] + [(str(t), "error") for t, _ in result.errors]
bad += [(str(t), "unexpected-success") for t in result.unexpectedSuccesses]
print("@@RESULT@@" + json.dumps({"total": result.testsRun, "bad": bad}))
"""


@dataclass
class RunResult:
    total: int
    bad: list[list[str]]
    seconds: float
    problem: str | None = None

    @property
    def failed(self) -> int:
        return len(self.bad)

    @property
    def all_pass(self) -> bool:
        return self.problem is None and self.total > 0 and not self.bad


def run_suite(source: str, tests: dict[str, str], pattern: str) -> RunResult:
    """Write solution.py and the test files to a temp dir and run them in a child python."""
    with tempfile.TemporaryDirectory(prefix="logomesh-check-") as tmp:
        work = Path(tmp)
        (work / "solution.py").write_text(source, encoding="utf-8")
        for name, text in tests.items():
            (work / name).write_text(text, encoding="utf-8")
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", _RUNNER, pattern],
                cwd=work, capture_output=True, text=True, timeout=RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return RunResult(0, [], time.perf_counter() - started, f"timed out after {RUN_TIMEOUT:.0f} s")
        seconds = time.perf_counter() - started
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("@@RESULT@@"):
            data = json.loads(line[len("@@RESULT@@"):])
            return RunResult(int(data["total"]), data["bad"], seconds)
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return RunResult(0, [], seconds, f"runner crashed (exit {proc.returncode}): {tail[0]}")


def check_task(root: Path, verbose: bool) -> list[str]:
    """Return the list of broken expectations for one task folder."""
    problems: list[str] = []
    spec = tomllib.loads((root / "task.toml").read_text(encoding="utf-8"))
    hidden = {p.name: p.read_text(encoding="utf-8") for p in sorted((root / "hidden").glob("test_*.py"))}
    reference = (root / "reference" / "solution.py").read_text(encoding="utf-8")

    ref = run_suite(reference, hidden, "test_*.py")
    print(f"{spec['id']}: reference {ref.total - ref.failed}/{ref.total} hidden pass ({ref.seconds:.2f} s)")
    if not ref.all_pass:
        problems.append(f"{spec['id']}: reference fails hidden tests: {ref.problem or ref.bad}")
    if ref.total < MIN_HIDDEN:
        problems.append(f"{spec['id']}: only {ref.total} hidden tests (need >= {MIN_HIDDEN})")

    for path in sorted((root / "submissions").glob("*.json")):
        sub = json.loads(path.read_text(encoding="utf-8"))
        label, defect = sub["label"], bool(sub["behaviour_defect"])
        res = run_suite(sub["sourceCode"], hidden, "test_*.py")
        own = run_suite(sub["sourceCode"], {"test_submission.py": sub["testCode"]}, "test_submission.py")
        where = f"{spec['id']}/{path.stem} [{label}, defect={defect}]"
        print(
            f"  {path.stem:<22} {label:<17} hidden {res.total - res.failed:>2}/{res.total:<2} "
            f"own {own.total - own.failed}/{own.total}  ({res.seconds:.2f} s)"
            + (f"  {res.problem}" if res.problem else "")
        )
        if verbose and res.bad:
            for name, kind in res.bad:
                print(f"      {kind}: {name}")
        if defect and (res.problem is None and not res.bad):
            problems.append(f"{where}: marked behaviour_defect but passes every hidden test")
        if not defect and not res.all_pass:
            message = f"{where}: not marked behaviour_defect but fails hidden tests: {res.problem or res.bad}"
            if label == "race":
                print(f"  warning (timing-dependent?): {message}")
            else:
                problems.append(message)
        if label == "good" and not own.all_pass:
            problems.append(f"{where}: its own testCode does not pass: {own.problem or own.bad}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="task ids (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="name each failing hidden test")
    args = parser.parse_args(argv)
    roots = [TASKS_DIR / t for t in args.tasks] if args.tasks else sorted(
        p for p in TASKS_DIR.iterdir() if (p / "task.toml").is_file()
    )
    problems: list[str] = []
    for root in roots:
        if not (root / "task.toml").is_file():
            problems.append(f"{root.name}: no such task (no {root / 'task.toml'})")
            continue
        problems.extend(check_task(root, args.verbose))
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for p in problems:
            print(f"  - {p}")
        return 1
    print(f"\nall {len(roots)} task(s) OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
