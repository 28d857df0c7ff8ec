"""The README battle against a bare ``docker run`` of the sandbox image, side by side (issue 39's battle aim).

Usage: python benchmarks/battle_bench.py [--repeat N] [--no-red] [--against DIR] [--json]

Each round runs, in a fresh home and in this order: ``docker run --rm <image> python3 -c pass`` (the floor),
``logomesh battle run --task rate-limiter --mock good --json`` of this checkout, and, with ``--against DIR``,
the same battle with the checkout in ``DIR`` (a worktree of the code before a change; this checkout's
``.venv`` runs both). Prints the median wall of each, the per-stage medians the battles report
(``stage_seconds``), and each battle's median as a ratio to the floor's (aim: at most 8x, red on, default budget).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.sandbox.image import image_tag  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")


def floor_s() -> float:
    started = time.perf_counter()
    subprocess.run(["docker", "run", "--rm", "--network", "none", image_tag(), "python3", "-c", "pass"],
                   check=True, capture_output=True)
    return time.perf_counter() - started


def battle(checkout: Path, red: bool) -> tuple[float, dict[str, float]]:
    """One README battle with ``checkout``'s code: its wall time and the stages it reported."""
    with tempfile.TemporaryDirectory() as home:
        argv = [PYTHON, "-m", "logomesh", "battle", "run", "--task", "rate-limiter", "--mock", "good", "--json"]
        env = {**os.environ, "LOGOMESH_HOME": home, "PYTHONPATH": str(checkout)}
        started = time.perf_counter()
        run = subprocess.run([*argv, *([] if red else ["--no-red"])], capture_output=True, text=True, env=env,
                             cwd=checkout)
        wall = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"battle in {checkout} failed: {run.stderr[-500:]}")
    result: dict[str, Any] = json.loads(run.stdout)
    return wall, {stage: float(s) for stage, s in (result.get("stage_seconds") or {}).items()}


def summary(walls: list[float], stages: list[dict[str, float]], floor: float) -> dict[str, Any]:
    names = sorted({name for got in stages for name in got})
    median = statistics.median(walls)
    return {"wall_s": round(median, 3), "ratio_to_floor": round(median / floor, 2),
            "stages_s": {name: round(statistics.median(got.get(name, 0.0) for got in stages), 3) for name in names}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-red", action="store_true", help="battles without the red agent")
    parser.add_argument("--against", type=Path, help="a checkout of the code before, run alternately")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sides = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    floors: list[float] = []
    walls: dict[str, list[float]] = {side: [] for side in sides}
    stages: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for _ in range(args.repeat):
        floors.append(floor_s())
        for side, checkout in sides.items():
            wall, got = battle(checkout, not args.no_red)
            walls[side].append(wall)
            stages[side].append(got)
    floor = statistics.median(floors)
    report = {"repeat": args.repeat, "red": not args.no_red, "load_average": os.getloadavg(),
              "floor_docker_run_s": round(floor, 3),
              **{side: summary(walls[side], stages[side], floor) for side in sides},
              "raw": {"floor_s": floors, "walls_s": walls, "stages_s": stages}}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"floor, bare docker run: {floor:.2f} s (median of {args.repeat}); red {'on' if not args.no_red else 'off'}")
    for side in sides:
        got = report[side]
        line = " · ".join(f"{name} {s:.2f}" for name, s in got["stages_s"].items())
        print(f"{side:>8}: {got['wall_s']:.2f} s wall, {got['ratio_to_floor']}x the floor; stages {line}")
    print(f"load average {report['load_average']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
