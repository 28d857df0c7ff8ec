"""Property-based inputs for the differential family: drawn with Hypothesis by the call sites' shape, seeded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logomesh.red.attacks.differential import DifferentialFamily
from logomesh.red.attacks.drawn import drawn_inputs
from logomesh.red.context import AttackContext
from logomesh.tasks import load_task_dir

ROOT = Path(__file__).resolve().parents[2]


def test_draws_keep_each_position_s_types_and_a_record_s_arity() -> None:
    sites = [([1.5, 2.0], 0.3, "ab"), ([4.0], 1.0, "b")]
    found = drawn_inputs(sites, 40, 7)
    assert len(found) == 40 and len({repr(f) for f in found}) == 40
    assert not {repr(s) for s in sites} & {repr(f) for f in found}
    for values, number, text in found:
        assert type(values) is list and all(type(v) is float for v in values)
        assert type(number) is float and type(text) is str
    assert ([], 0.0, "") in found  # Hypothesis leans to the simplest values: the empty input is among them
    records = drawn_inputs([((1, 2), (3, 4)), ((0, 5), (2, 2))], 30, 7)
    assert all(len(a) == 2 and len(b) == 2 and all(type(v) is int for v in a + b) for a, b in records)


def test_same_sites_and_seed_same_inputs_another_seed_others() -> None:
    sites = [([1, 2, 3], 2), ([4], 1)]
    first = drawn_inputs(sites, 24, 11)
    assert first == drawn_inputs(sites, 24, 11)
    assert first != drawn_inputs(sites, 24, 12)
    code = ("from logomesh.red.attacks.drawn import drawn_inputs\n"
            "print(repr(drawn_inputs([([1, 2, 3], 2), ([4], 1)], 24, 11)))\n")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                           env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "123"})
    assert other.stdout.strip() == repr(first)  # another process, another hash seed: the same bytes


def test_the_family_adds_property_based_batches() -> None:
    task = load_task_dir(ROOT / "tasks" / "fib-recursive")
    source = task.labelled_submission("good").submission.source
    variants = DifferentialFamily().variants(AttackContext.build(task, source), task.entry_point)
    by_id = {v.id: v for v in variants}
    assert {"drawn-0", "drawn-1"} <= set(by_id)
    assert by_id["mutants-2"].prior > by_id["drawn-0"].prior > by_id["mutants-3"].prior
    inputs = by_id["drawn-0"].spec.args["inputs"]
    assert len(inputs) == 24 and all(text.startswith("(") and text.endswith(",)") for text in inputs)
    assert by_id["drawn-0"].reproducer.endswith("property-based inputs to fib, compared with the reference")
    again = DifferentialFamily().variants(AttackContext.build(task, source), task.entry_point)
    assert [v.spec for v in again] == [v.spec for v in variants]
