"""Byte identity with the red agent on: does scoring a submission twice give the same result JSON?

Usage: python benchmarks/determinism.py [--tasks ID,ID] [--sandbox docker|bwrap] [--seed N] [--burn N] [--json]

For every labelled submission of the library (``tasks/*/submissions/*.json``), runs
``python -m logomesh score --task T --submission F --sandbox docker --json --seed 0``
(red agent on, default budget) twice, each in its own process, one after the other, and
compares the stdout bytes. Prints identical/differs per submission and a total; on a
difference, the result fields (dotted JSON paths) that differ.

``--burn N`` runs N busy-loop processes during the second scoring only, so the two runs
differ by a known load: a verdict that follows the machine's load shows up as a difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.tasks import all_tasks  # noqa: E402


def score_once(task_id: str, path: Path, sandbox: str, seed: int) -> tuple[bytes, float]:
    """One ``logomesh score`` in a fresh process: its stdout bytes and wall seconds."""
    command = [sys.executable, "-m", "logomesh", "score", "--task", task_id, "--submission", str(path),
               "--sandbox", sandbox, "--json", "--seed", str(seed)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no stderr"]
        return f"exit {done.returncode}: {tail[0]}".encode(), seconds
    return done.stdout, seconds


def _burn() -> None:
    while True:
        pass


def score_loaded(task_id: str, path: Path, sandbox: str, seed: int, burners: int) -> tuple[bytes, float]:
    """``score_once`` while ``burners`` processes spin on the CPU."""
    spinning = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(burners)]
    for process in spinning:
        process.start()
    try:
        return score_once(task_id, path, sandbox, seed)
    finally:
        for process in spinning:
            process.kill()
            process.join()


def differing_fields(left: Any, right: Any, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ (lists compared element by element)."""
    if isinstance(left, dict) and isinstance(right, dict):
        fields: list[str] = []
        for key in sorted(set(left) | set(right)):
            where = f"{path}.{key}" if path else str(key)
            if key not in left or key not in right:
                fields.append(where)
            else:
                fields += differing_fields(left[key], right[key], where)
        return fields
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return [f"{path}[len {len(left)} vs {len(right)}]"]
        fields = []
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            fields += differing_fields(a, b, f"{path}[{index}]")
        return fields
    return [] if left == right else [path or "<root>"]


def compare(first: bytes, second: bytes) -> list[str]:
    if first == second:
        return []
    try:
        return differing_fields(json.loads(first), json.loads(second)) or ["<bytes only: key order or spacing>"]
    except ValueError:
        return ["<not JSON>: " + first[:120].decode(errors="replace") + " | " + second[:120].decode(errors="replace")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every task)")
    parser.add_argument("--sandbox", default="docker", choices=("docker", "bwrap"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--burn", type=int, default=0, help="busy-loop processes during the second run")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON on stdout")
    args = parser.parse_args()
    wanted = {t for t in args.tasks.split(",") if t}
    known = {t.id for t in all_tasks()}
    if wanted - known:
        print(f"error: unknown task id(s) {', '.join(sorted(wanted - known))}; known: {', '.join(sorted(known))}",
              file=sys.stderr)
        raise SystemExit(2)
    rows: list[dict[str, Any]] = []
    for task in all_tasks():
        if wanted and task.id not in wanted:
            continue
        for name in task.submission_names():
            path = task.root / "submissions" / f"{name}.json"
            first, first_s = score_once(task.id, path, args.sandbox, args.seed)
            second, second_s = score_loaded(task.id, path, args.sandbox, args.seed, args.burn)
            fields = compare(first, second)
            row = {"task": task.id, "submission": name, "identical": not fields, "differing_fields": fields,
                   "sha256": hashlib.sha256(first).hexdigest()[:16], "seconds": [round(first_s, 1), round(second_s, 1)],
                   "load": round(os.getloadavg()[0], 1)}
            rows.append(row)
            verdict = "identical" if not fields else "DIFFERS " + ", ".join(fields)
            print(f"{task.id:<16} {name:<20} {verdict}  ({first_s:.0f} s, {second_s:.0f} s, load {row['load']})",
                  file=sys.stderr, flush=True)
    same = sum(r["identical"] for r in rows)
    if args.json:
        print(json.dumps({"seed": args.seed, "sandbox": args.sandbox, "burn": args.burn, "identical": same,
                          "total": len(rows), "rows": rows}, indent=2))
    else:
        print(f"identical: {same}/{len(rows)} submissions (two processes each, red agent on, seed {args.seed}, "
              f"{args.burn} busy loops during the second)")
    if same != len(rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
