"""Edge-case inputs for the differential family: boundary values of each parameter's type, same types."""

from __future__ import annotations

from pathlib import Path

from logomesh.red.attacks.differential import DifferentialFamily
from logomesh.red.attacks.edges import boundaries, edge_inputs, emptiest
from logomesh.red.context import AttackContext
from logomesh.tasks import load_task_dir

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def test_boundaries_keep_the_exact_type_and_reach_the_edges() -> None:
    assert boundaries(True) == [False]
    ints = boundaries(7)
    assert {0, 1, -1, 8, 6, -7} <= set(ints) and 7 not in ints and all(type(v) is int for v in ints)
    assert {0.0, -1.0, 1e9} <= set(boundaries(2.5)) and all(type(v) is float for v in boundaries(2.5))
    assert {"", "a", " ", "aa", "cba"} <= set(boundaries("abc"))
    lists = boundaries([3, 1, 2])
    assert [] in lists and [3] in lists and [3, 3] in lists and [1, 2, 3] in lists and [3, 2, 1] in lists
    assert [0] in lists and [-1] in lists  # one element at its own type's boundary
    assert all(type(v) is tuple for v in boundaries((1, 2))) and () in boundaries((1, 2))
    assert boundaries({"k": 1}) == [{}] and frozenset() in boundaries(frozenset({1, 2}))
    assert boundaries(None) == [] and boundaries([]) == []
    assert emptiest([1]) == [] and emptiest(4.5) == 0.0 and emptiest(True) is True


def test_edge_inputs_vary_one_parameter_at_a_time_covering_every_parameter_early() -> None:
    sites = [([1.0, 2.0], 0.5), ([3.0], 0.1)]
    found = edge_inputs(sites)
    assert found == edge_inputs(sites)  # no randomness
    assert len({repr(f) for f in found}) == len(found) and not set(map(repr, sites)) & set(map(repr, found))
    assert all(type(a) is list and type(b) is float for a, b in found)
    first = found[:4]  # the first boundary of each parameter of each site
    assert ([], 0.5) in first and ([1.0, 2.0], 0.0) in first and ([], 0.1) in first and ([3.0], 0.0) in first
    assert ([], 0.0) in found  # every parameter at its emptiest


def test_the_family_adds_edge_batches_after_its_first_mutated_batch() -> None:
    task = load_task_dir(TASKS / "fib-recursive")
    source = task.labelled_submission("good").submission.source
    variants = DifferentialFamily().variants(AttackContext.build(task, source), task.entry_point)
    by_id = {v.id: v for v in variants}
    assert {"mutants-0", "edges-0"} <= set(by_id)
    assert by_id["mutants-0"].prior > by_id["edges-0"].prior > by_id["mutants-1"].prior
    edges = by_id["edges-0"].spec.args["inputs"]
    assert "(0,)" in edges or "(-1,)" in edges
    assert by_id["edges-0"].reproducer.endswith("edge-case inputs to fib, compared with the reference")
    assert "contract" not in by_id["edges-0"].spec.args  # no [contract]: the spec is as before
