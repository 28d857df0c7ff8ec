"""Red agent benchmark: recall, false positives and time to first finding, MCTS versus baselines.

    python benchmarks/red_bench.py [BUDGET_S] [RUNS] [TASK ...]

Attacks every labelled submission (and the reference) of every task with the
MCTS agent, a uniform random search and a round-robin search under the same
budget in one sandbox, then prints the figures and the MCTS/baseline ratios
(JSON on stdout, progress on stderr). Needs Docker and the sandbox image.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from logomesh.red.bench import run_bench
from logomesh.sandbox import open_sandbox
from logomesh.tasks import TaskError, TaskSpec, default_tasks_dir, load_task_dir


def loadable_tasks(only: list[str]) -> list[TaskSpec]:
    tasks = []
    for folder in sorted(default_tasks_dir().iterdir()):
        if not folder.is_dir() or (only and folder.name not in only):
            continue
        try:
            tasks.append(load_task_dir(folder))
        except TaskError as exc:
            print(f"skipping {folder.name}: {exc}", file=sys.stderr)
    return tasks


def main(argv: list[str]) -> int:
    budget = float(argv[0]) if argv else 20.0
    runs = int(argv[1]) if len(argv) > 1 else 3
    tasks = loadable_tasks(argv[2:])
    with open_sandbox("docker") as box:
        result = run_bench(box, tasks, budget_s=budget, determinism_runs=runs,
                           progress=lambda line: print(line, file=sys.stderr, flush=True))
    summary = result.summary()
    rows = summary["strategies"]
    mcts = rows.get("mcts", {})
    ratios = {}
    for baseline in ("random", "round-robin"):
        other = rows.get(baseline, {})
        if mcts.get("first_finding_median_s") and other.get("first_finding_median_s"):
            ratios[f"median_first_finding_{baseline}_over_mcts"] = round(
                other["first_finding_median_s"] / mcts["first_finding_median_s"], 2)
        if mcts.get("first_finding_p90_s") and other.get("first_finding_p90_s"):
            ratios[f"p90_first_finding_{baseline}_over_mcts"] = round(
                other["first_finding_p90_s"] / mcts["first_finding_p90_s"], 2)
    summary["ratios"] = ratios
    summary["tasks"] = [t.id for t in tasks]
    print(json.dumps(summary, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
