"""Injection search: MCTS against random search and a fixed template list, at equal query budgets.

    python benchmarks/injection_search.py [--seeds N] [--budget Q] [--task ID] [--json]

For each seed, serves the partly obeying mock (``inject-obeying``, that seed: which two placements and two
framings it follows is drawn from it) on loopback and runs every search on it with the same budget, the run's
secrets drawn from the same seed; then runs every search once against the ignoring mock. Prints, per search,
the queries each objective took to its first success, the queries to reach every objective (a run that did
not reach them all counts as budget + 1), their median over seeds, the MCTS/baseline ratios of those medians,
and the successes against the ignoring mock. Needs a sandbox (Docker or bubblewrap).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from logomesh.inject.objectives import OBJECTIVES
from logomesh.inject.run import InjectOutcome, InjectRequest, Target, run_injection
from logomesh.inject.search import SEARCHES


def _run(task: str, kind: str, seed: int, search: str, budget: int) -> InjectOutcome:
    request = InjectRequest(task, Target(kind=kind, kind_seed=seed), tuple(OBJECTIVES), budget, seed, search,
                            utility=False)
    return run_injection(request)


def _to_all(outcome: InjectOutcome, budget: int) -> int:
    """Queries until every objective was reached; budget + 1 where some never was."""
    firsts = [o.first.query for o in outcome.objectives if o.first is not None]
    return max(firsts) if len(firsts) == len(outcome.objectives) else budget + 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=9)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--task", default="rate-limiter")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in SEARCHES}
    for seed in range(args.seeds):
        for search in SEARCHES:
            outcome = _run(args.task, "inject-obeying", seed, search, args.budget)
            rows[search].append({
                "seed": seed, "queries": outcome.queries, "to_all": _to_all(outcome, args.budget),
                "first": {o.objective: (o.first.query if o.first else None) for o in outcome.objectives},
            })
            print(f"seed {seed} {search}: every objective by query {rows[search][-1]['to_all']}", file=sys.stderr)
    ignoring = {search: sum(1 for r in _run(args.task, "inject-ignoring", 0, search, args.budget).records if r.met)
                for search in SEARCHES}
    medians = {search: statistics.median(row["to_all"] for row in runs) for search, runs in rows.items()}
    wins = {search: sum(1 for m, b in zip(rows["mcts"], runs, strict=True) if m["to_all"] < b["to_all"])
            for search, runs in rows.items() if search != "mcts"}
    report = {
        "task": args.task, "budget": args.budget, "seeds": args.seeds,
        "median_queries_to_every_objective": medians,
        "mcts_over": {search: round(medians["mcts"] / medians[search], 3) for search in SEARCHES if search != "mcts"},
        "mcts_fewer_queries_in_seeds": wins,
        "reached_every_objective": {s: sum(1 for r in runs if r["to_all"] <= args.budget) for s, runs in rows.items()},
        "ignoring_mock_successes": ignoring,
        "runs": rows,
        "wall_s": round(time.monotonic() - started, 1),
        "load_average": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    print(f"task {args.task}, budget {args.budget} queries, {args.seeds} seeds (obeying mock seeded the same)")
    for search in SEARCHES:
        print(f"  {search:9s} median queries to every objective {medians[search]:5.1f}  "
              f"reached all in {report['reached_every_objective'][search]}/{args.seeds}  "
              f"successes vs the ignoring mock {ignoring[search]}")
    for search, ratio in report["mcts_over"].items():
        print(f"  MCTS / {search}: {ratio:.3f} of the median queries; fewer queries in "
              f"{wins[search]}/{args.seeds} seeds")
    print(f"  wall {report['wall_s']} s, load average {report['load_average'][0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
