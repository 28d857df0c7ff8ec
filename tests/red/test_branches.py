"""Branch-value inputs for the differential family: the constants both sources compare against, read with ``ast``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.red.attacks.branches import branch_inputs, harvest
from logomesh.red.attacks.differential import DifferentialFamily, DifferentialRunner
from logomesh.red.context import AttackContext
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.tasks import load_task_dir

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''
def f(n, s, xs):
    if n > 100 or -7 <= n < 2.5:
        return 1
    if len(s) >= 10 and s[0] in "xy":
        return 2
    if s.startswith("ab") or xs[3:] == []:
        return 3
    return [i % 15 for i in range(4, n)]
'''


def test_harvest_reads_compared_numbers_lengths_and_texts_without_running_anything() -> None:
    found = harvest([SOURCE, "def broken(:\n", "import os\nos.remove('/nowhere')\nif x == 'kept': pass\n"])
    assert found.numbers == [100, -7, 2.5, 15, 4]  # in ast.walk order (breadth first)
    assert found.lengths == [9, 10, 11, 0, 1, 3, 4]
    assert found.texts == ["xy", "x", "y", "ab", "kept"]


def test_each_constant_reaches_a_parameter_of_the_sites_type_and_size() -> None:
    sites = [(3, "hello", [1, 2]), (5, "", [7])]
    found = branch_inputs([SOURCE], sites, 200, 1)
    assert all(type(n) is int and type(s) is str and type(xs) is list for n, s, xs in found)
    numbers = {n for n, _, _ in found}
    assert {99, 100, 101, -8, -7, -6, 2, 3, 14, 15, 16} <= numbers
    assert {len(s) for _, s, _ in found} >= {9, 10, 11} and any(s.startswith("ab") for _, s, _ in found)
    assert {len(xs) for _, _, xs in found} >= {0, 3, 4, 9, 10, 11}
    assert any(100 in xs for _, _, xs in found)  # a number compared, as an item of a list parameter
    assert not {repr(s) for s in sites} & {repr(f) for f in found}
    assert len({repr(f) for f in found}) == len(found)
    prefix = branch_inputs([SOURCE], sites, 12, 1)
    assert prefix == found[:12]  # bounded by count, the same order
    assert {i for i, (n, s, xs) in enumerate(prefix) if n not in (3, 5)} and any(s not in ("hello", "") for _, s, _
                                                                                  in prefix)
    assert branch_inputs([SOURCE], sites, 200, 1) == found  # seeded: the same inputs


def test_a_code_point_compared_with_ord_gives_the_characters_beside_it() -> None:
    found = harvest(["def f(s):\n    return 97 <= ord(s[-1]) <= 122\n"])
    assert found.texts == ["`", "a", "b", "y", "z", "{"] and found.numbers == []
    assert ("z",) in branch_inputs(["def f(s):\n    return 97 <= ord(s[-1]) <= 122\n"], [("ab c",)], 48, 0)


def test_a_number_compared_reaches_the_digits_inside_a_string_in_its_format() -> None:
    """A month compared with 12 in code that parses ``'mm-dd-yyyy'``: the seed's digit runs take the branch
    values one at a time, the zero padding kept, so ``'13-11-2000'`` (a month past the last) is among them."""
    source = "def f(d):\n    m, day, y = d.split('-')\n    return 1 <= int(m) <= 12 and 1 <= int(day) <= 31\n"
    found = [s for (s,) in branch_inputs([source], [("03-11-2000",)], 200, 0)]
    assert {"13-11-2000", "12-11-2000", "03-32-2000", "00-11-2000"} <= set(found)
    assert "2000-11-03" not in found and "130-11-2000" not in found  # one run changed, its place and format kept


def test_no_constants_no_inputs() -> None:
    assert branch_inputs(["def f(x):\n    return x\n"], [(1,)], 24, 0) == []
    assert branch_inputs([SOURCE], [], 24, 0) == []


def test_the_family_adds_branch_value_batches_from_the_submission_s_constants() -> None:
    task = load_task_dir(ROOT / "tasks" / "fib-recursive")
    reference = task.reference
    odd = reference.replace("    return _pair(n)[0]\n", "    return 0 if n == 137 else _pair(n)[0]\n")
    assert odd != reference
    variants = DifferentialFamily().variants(AttackContext.build(task, odd), task.entry_point)
    by_id = {v.id: v for v in variants}
    assert {"branches-0", "drawn-0"} <= set(by_id)
    assert by_id["mutants-0"].prior > by_id["branches-0"].prior > by_id["drawn-0"].prior
    assert "(137,)" in by_id["branches-0"].spec.args["inputs"]
    assert by_id["branches-0"].reproducer.endswith("branch-value inputs to fib, compared with the reference")


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


@pytest.mark.docker
def test_a_branch_on_one_value_is_found_and_the_reference_is_not_blamed(box: Sandbox) -> None:
    task = load_task_dir(ROOT / "tasks" / "fib-recursive")
    odd = task.reference.replace("    return _pair(n)[0]\n", "    return 0 if n == 137 else _pair(n)[0]\n")
    for source, expect in ((odd, ["(137,)"]), (task.reference, [])):
        variants = DifferentialFamily().variants(AttackContext.build(task, source), task.entry_point)
        runner = DifferentialRunner(box, source, task.reference)
        diverged = [d["input"] for v in variants if v.id.startswith("branches-")
                    for d in runner.run(v.spec, 0).trials[0].result["diverged"]]
        assert diverged == expect


def test_a_source_full_of_literals_is_read_up_to_a_bound() -> None:
    crowded = "def f(n):\n" + "".join(f"    if n == {i}:\n        return {i}\n" for i in range(5000))
    found = harvest([crowded])
    assert found.numbers == list(range(64))
    assert len(branch_inputs([crowded], [(1,)], 1000, 0)) <= 3 * 64
