"""Race verdicts: how often does a rerun flip them? And what do the results' bytes do?

Usage: python benchmarks/race_stability.py [--reruns N] [--trials N] [--tasks ID,ID] [--json]

For every labelled submission of the library whose label is ``race``, and for
each task's ``good`` submission (correct code, the false-positive side):

1. **Hit rate.** Each race variant's probe runs ``--trials`` perturbed trials;
   p = violations / trials. With one violation in 10 replays required, a
   confirmation misses with probability (1 - p)^10 (``miss_bound``). The race
   verdict flips to "not found" only if every play of every race leaf fails:
   a play (4 trials) fails with probability (1 - p)^4 + (1 - p)^10 at most (no
   candidate, or a candidate whose 10 replays all miss), and each leaf is played
   ``MAX_REPEATS`` times, so ``flip_bound`` = prod over variants of
   ((1 - p)^4 + (1 - p)^10)^MAX_REPEATS, trials taken as independent.
2. **Reruns.** The race stage is replayed ``--reruns`` times with the same seed,
   through the agent's own ``RedProblem`` (each race leaf played as the search
   plays it, confirmed, controlled); a flip is a rerun whose verdict (race
   found or not) differs from the first, and the bytes of the findings' result
   JSON (``Finding.to_json``) are compared across all reruns.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.red.attacks.base import Variant  # noqa: E402
from logomesh.red.attacks.race import RaceFamily  # noqa: E402
from logomesh.red.context import AttackContext  # noqa: E402
from logomesh.red.executor import ProbeSpec  # noqa: E402
from logomesh.red.problem import MAX_REPEATS, RedProblem, sandbox_runner  # noqa: E402
from logomesh.sandbox import Sandbox, open_sandbox  # noqa: E402
from logomesh.tasks import TaskSpec, all_tasks  # noqa: E402


def race_variants(task: TaskSpec, source: str) -> list[Variant]:
    return RaceFamily().variants(AttackContext.build(task, source), task.entry_point)


def hit_rates(box: Sandbox, task: TaskSpec, source: str, trials: int) -> dict[str, float]:
    family = RaceFamily()
    run = sandbox_runner(box, source, task.reference)
    rates: dict[str, float] = {}
    for variant in race_variants(task, source):
        spec = ProbeSpec(variant.spec.probe, variant.spec.args, trials, variant.spec.timeout_s)
        probe = run(spec, 20261124)
        hits = sum(family.judge(variant, t).hit for t in probe.trials)
        rates[variant.id] = hits / len(probe.trials) if probe.trials else 0.0
    return rates


def flip_bound(variants: list[Variant], rates: dict[str, float]) -> float:
    """The chance that every play of every race leaf fails to confirm: see the module docstring."""
    bound = 1.0
    for variant in variants:
        p = rates[variant.id]
        bound *= ((1 - p) ** variant.spec.trials + (1 - p) ** variant.confirm_trials) ** MAX_REPEATS
    return bound


def reruns(box: Sandbox, task: TaskSpec, source: str, count: int) -> dict[str, Any]:
    """Replay the race stage as the agent plays it: each race leaf in order until one is confirmed.

    Only the race family's verdict can flip (the other families are deterministic), so the reruns play
    its leaves through the agent's own ``RedProblem`` (exploration, confirmation, benign control) rather
    than a whole 10 s search each time.
    """
    verdicts: list[bool] = []
    digests: set[str] = set()
    for _ in range(count):
        problem = RedProblem(AttackContext.build(task, source), sandbox_runner(box, source, task.reference))
        for leaf in [leaf for leaf in problem.all_leaves() if leaf.family.name == "race"]:
            for visit in range(MAX_REPEATS):  # a repeatable leaf is played up to MAX_REPEATS times
                if problem.play(leaf, 7 + visit).exhausted or problem.findings:
                    break
            if problem.findings:
                break
        verdicts.append(bool(problem.findings))
        text = json.dumps([c.finding.to_json() for c in problem.findings], sort_keys=True)
        digests.add(hashlib.sha256(text.encode()).hexdigest())
    return {"race_found": verdicts[0], "flips": sum(v != verdicts[0] for v in verdicts),
            "distinct_findings_json": len(digests)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=50)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every task)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    wanted = {t for t in args.tasks.split(",") if t}
    rows: list[dict[str, Any]] = []
    with open_sandbox("docker") as box:
        for task in all_tasks():
            if wanted and task.id not in wanted:
                continue
            for name in task.submission_names():
                labelled = task.labelled_submission(name)
                if labelled.label not in ("race", "good"):
                    continue
                source = labelled.submission.source
                rates = hit_rates(box, task, source, args.trials)
                if not rates:
                    continue
                row = {"task": task.id, "submission": name, "label": labelled.label, "hit_rate": rates,
                       "miss_bound": float(f"{max((1 - p) ** 10 for p in rates.values()):.3g}"),
                       "flip_bound": float(f"{flip_bound(race_variants(task, source), rates):.3g}")
                       if labelled.label == "race" else None,
                       **reruns(box, task, source, args.reruns)}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        shown = ", ".join(f"{k} {v:.2f}" for k, v in row["hit_rate"].items())
        print(f"{row['task']:<16} {row['submission']:<8} race found {row['race_found']!s:<5} "
              f"flips {row['flips']}/{args.reruns}  distinct results {row['distinct_findings_json']}  "
              f"p: {shown}  flip bound {row['flip_bound']}")


if __name__ == "__main__":
    main()
