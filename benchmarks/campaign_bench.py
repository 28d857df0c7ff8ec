"""Campaign throughput: battles per minute for 1, 2 and 4 local workers, and where the time goes.

Usage: python benchmarks/campaign_bench.py [--workers 1,2,4] [--battles N] [--red-budget S] [--json]
       python benchmarks/campaign_bench.py --humaneval [--workers 2] [--red-budget S] [--limit N] [--json]

Each worker count runs the same campaign (the mock purple agent's good and one
flawed answer over as many tasks as it takes to make N battles, red agent on)
into a fresh ledger, one after the other in this run, through the real local
executor and Docker sandboxes. Figures:
  wall          first job handed out until the last battle recorded, worker start-up included
  per_min       battles / wall
  steady        battles after each worker's first / time after the first battle was recorded
  speedup       per_min / per_min with the fewest workers measured in this run
  stages        share of worker-side time per stage (purple, sandbox, red, scoring) and the driver's ledger time
The host's load average is printed with the figures: these machines are shared.

--humaneval: imports the 164 HumanEval problems into a temporary library
(``logomesh tasks import humaneval``), selects it as ``LOGOMESH_TASKS`` (so the
workers inherit it) and runs the same campaign, ``--mock good`` over every
imported task, on the local executor and then on the Ray executor (a local Ray
instance of the same size, started and stopped inside the measured wall), each
with a fresh reference-observation cache. Same figures, one row per executor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.campaign.executor import Executor  # noqa: E402
from logomesh.campaign.local import LocalExecutor  # noqa: E402
from logomesh.campaign.plan import CampaignPlan, Settings, new_plan, parse_agents, save_plan  # noqa: E402
from logomesh.campaign.runner import CampaignProgress, run_campaign  # noqa: E402
from logomesh.campaign.work import JobDone  # noqa: E402
from logomesh.tasks import all_tasks  # noqa: E402

FLAWED = "off-intent"  # every task has one


def _plan(battles: int, red_budget_s: float, workers: int) -> CampaignPlan:
    tasks = [t.id for t in all_tasks()]
    per_task = 2  # good and flawed
    task_ids = tuple(tasks[: max(1, min(len(tasks), battles // per_task))])
    repeat = max(1, battles // (per_task * len(task_ids)))
    settings = Settings(sandbox="docker", red=True, red_budget_s=red_budget_s)
    return new_plan(parse_agents([], ["good", FLAWED]), task_ids, repeat, 0, settings, f"bench-{workers}")


def measure(workers: int, battles: int, red_budget_s: float) -> dict[str, Any]:
    return run(_plan(battles, red_budget_s, workers), workers, "local")


def _executor(kind: str, workers: int, settings: Settings, home: Path) -> Executor:
    if kind == "ray":
        from logomesh.campaign.ray_executor import RayExecutor

        return RayExecutor(workers, settings, home)
    return LocalExecutor(workers, settings, home, log_file=home / "workers.log")


def run(plan: CampaignPlan, workers: int, kind: str) -> dict[str, Any]:
    """Run ``plan`` on a fresh ledger with the ``kind`` executor; its figures."""
    recorded_at: list[float] = []
    reasons: dict[str, int] = {}

    def observe(progress: CampaignProgress, recorded: JobDone | None) -> None:
        if recorded is not None:
            recorded_at.append(time.perf_counter())
            if recorded.played.failed:
                reason = (recorded.played.result.ending.reason or "?")[:160]
                reasons[reason] = reasons.get(reason, 0) + 1

    with tempfile.TemporaryDirectory(prefix="logomesh-campaign-bench-") as folder:
        home = Path(folder)
        save_plan(home, plan)
        executor = _executor(kind, workers, plan.settings, home)
        started = time.perf_counter()
        progress = run_campaign(plan, home, executor, observe)
        wall = time.perf_counter() - started
    done = progress.done
    later = recorded_at[workers:] if len(recorded_at) > workers else []
    steady = 60.0 * len(later) / (recorded_at[-1] - recorded_at[workers - 1]) if later else 0.0
    spent = sum(progress.stage_seconds.values()) or 1.0
    return {
        "executor": kind,
        "workers": workers,
        "battles": done,
        "failed": progress.failed,
        "failure_reasons": reasons,
        "wall_s": round(wall, 2),
        "per_min": round(60.0 * done / wall, 2),
        "steady_per_min": round(steady, 2),
        "stages": {k: round(v / spent, 3) for k, v in sorted(progress.stage_seconds.items())},
        "stage_seconds": {k: round(v, 2) for k, v in sorted(progress.stage_seconds.items())},
    }


def humaneval(workers: int, red_budget_s: float, limit: int | None) -> list[dict[str, Any]]:
    """``--mock good`` over every imported HumanEval task, local then Ray executor, in this one run."""
    from logomesh.tasks.importers.humaneval import import_humaneval

    rows = []
    with tempfile.TemporaryDirectory(prefix="logomesh-humaneval-") as folder:
        library = Path(folder) / "library"
        task_ids = tuple(import_humaneval(library).tasks[:limit])
        os.environ["LOGOMESH_TASKS"] = str(library)  # the workers, local processes or Ray tasks, inherit it
        settings = Settings(sandbox="docker", red=red_budget_s > 0, red_budget_s=red_budget_s or 1.0)
        for kind in ("local", "ray"):
            os.environ["LOGOMESH_CACHE"] = str(Path(folder) / f"cache-{kind}")  # each executor starts cold
            plan = new_plan(parse_agents([], ["good"]), task_ids, 1, 0, settings, f"bench-humaneval-{kind}")
            rows.append(run(plan, workers, kind))
            print(f"measured {kind}: {rows[-1]['battles']} battles, {rows[-1]['per_min']} battles/min",
                  file=sys.stderr)
    return rows


def print_humaneval(rows: list[dict[str, Any]], red_budget_s: float, as_json: bool) -> None:
    load = os.getloadavg()
    base = rows[0]["per_min"] or 1.0
    for row in rows:
        row["ratio_to_local"] = round(row["per_min"] / base, 2)
    if as_json:
        print(json.dumps({"cpus": os.cpu_count(), "load": load, "red_budget_s": red_budget_s, "rows": rows},
                         indent=2))
        return
    print(f"cpus {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"red budget {red_budget_s} s, mock purple good over imported HumanEval tasks")
    print(f"{'executor':>8} {'workers':>7} {'battles':>7} {'failed':>6} {'wall s':>8} {'per min':>8} {'steady':>8} "
          f"{'ratio':>6}  stage shares")
    for row in rows:
        shares = " ".join(f"{k} {100 * v:.0f}%" for k, v in row["stages"].items())
        print(f"{row['executor']:>8} {row['workers']:>7} {row['battles']:>7} {row['failed']:>6} {row['wall_s']:>8} "
              f"{row['per_min']:>8} {row['steady_per_min']:>8} {row['ratio_to_local']:>6}  {shares}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1,2,4", help="worker counts to measure, comma separated")
    parser.add_argument("--battles", type=int, default=12, help="battles per measurement")
    parser.add_argument("--red-budget", type=float, default=5.0, help="red agent seconds per battle")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--humaneval", action="store_true", help="164 imported HumanEval tasks, local vs Ray")
    parser.add_argument("--limit", type=int, default=None, help="with --humaneval: the first N tasks only")
    args = parser.parse_args()
    if args.humaneval:
        workers = int(args.workers) if args.workers.isdigit() else os.cpu_count() or 1
        print_humaneval(humaneval(workers, args.red_budget, args.limit), args.red_budget, args.json)
        return 0
    counts = sorted({int(w) for w in args.workers.split(",") if w.strip()})
    rows = []
    for workers in counts:
        rows.append(measure(workers, args.battles, args.red_budget))
        print(f"measured {workers} workers: {rows[-1]['per_min']} battles/min", file=sys.stderr)
    base = rows[0]["per_min"] or 1.0
    for row in rows:
        row["speedup"] = round(row["per_min"] / base, 2)
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "load": load, "rows": rows}, indent=2))
        return 0
    print(f"cpus {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
          f"red budget {args.red_budget} s, mock purple (good + {FLAWED})")
    print(f"{'workers':>7} {'battles':>7} {'failed':>6} {'wall s':>8} {'per min':>8} {'steady':>8} {'speedup':>7}  "
          "stage shares")
    for row in rows:
        shares = " ".join(f"{k} {100 * v:.0f}%" for k, v in row["stages"].items())
        print(f"{row['workers']:>7} {row['battles']:>7} {row['failed']:>6} {row['wall_s']:>8} {row['per_min']:>8} "
              f"{row['steady_per_min']:>8} {row['speedup']:>7}  {shares}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
