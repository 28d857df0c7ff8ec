"""HumanEval's stated contracts: written into the imported tasks, true of the checks' inputs, and honoured.

The correct alternatives (``tests/data/humaneval_alternatives.json``) answer
differently from the canonical solutions where several answers are right and
refuse input outside the prompt's contract; the judge must not blame them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from logomesh.red.attacks.differential import PROBE, DifferentialFamily, DifferentialRunner, call_sites
from logomesh.red.context import AttackContext
from logomesh.sandbox import Sandbox, open_sandbox
from logomesh.tasks import TaskSpec, load_task_dir
from logomesh.tasks.contract_check import admitted
from logomesh.tasks.contracts import Contract
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden
from logomesh.tasks.importers.humaneval import import_humaneval, read, task_id
from logomesh.tasks.importers.humaneval_contracts import CONTRACTS

ALTERNATIVES = json.loads((Path(__file__).parent / "data" / "humaneval_alternatives.json").read_text())["alternatives"]
MULTI_ANSWER = [2, 4, 32, 33, 37, 52, 56, 61]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("humaneval-contracts")
    import_humaneval(folder, [p for p in read() if int(p["task_id"].rsplit("/", 1)[1]) in CONTRACTS
                              or any(a["problem"] == p["task_id"] for a in ALTERNATIVES)])
    yield folder


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with open_sandbox("docker") as sandbox:
        yield sandbox


def _task(library: Path, problem: str) -> TaskSpec:
    return load_task_dir(library / task_id(problem))


def test_the_importer_writes_each_stated_contract_and_only_those(library: Path) -> None:
    tasks = [load_task_dir(p) for p in sorted(library.iterdir())]
    stated = {t.id: t.contract for t in tasks if t.contract.stated}
    assert len(stated) == len(CONTRACTS) == 89
    assert sum(bool(c.requires) for c in stated.values()) == 86
    assert {t for t, c in stated.items() if c.answer} >= {f"humaneval-{n}" for n in MULTI_ANSWER}
    find_zero = stated["humaneval-32"]
    assert find_zero.answer == ("property",) and "poly(xs, result)" in find_zero.holds
    assert replace(stated["humaneval-2"], inferred="") == Contract("number > 0", ("tolerance",), 0.0, 1e-6)
    drivers = "".join(_task(library, "HumanEval/32").hidden_tests.values())
    assert "    see(args)\n    return call(solution.find_zero" in drivers  # the property needs the arguments
    assert "see(args)" not in "".join(_task(library, "HumanEval/33").hidden_tests.values())


def _admitted_on_the_checks_inputs(library: Path, box: Sandbox,
                                   contract_of: Callable[[TaskSpec], Contract | None]) -> int:
    """Each task's precondition (``contract_of``; None for a task without one), evaluated in the box beside the
    reference on the inputs its checks call with, admits every one of them; how many inputs there were."""
    counted = 0
    for folder in sorted(library.iterdir()):
        task = load_task_dir(folder)
        contract = contract_of(task)
        if contract is None:
            continue
        inputs = [repr(args) for args in call_sites(task.hidden_tests, task.entry_point, task.description)]
        verdicts = admitted(box, task.reference, task.entry_point, contract, inputs)
        assert all(verdicts), f"{task.id}: {[i for i, ok in zip(inputs, verdicts, strict=True) if not ok]}"
        counted += len(inputs)
    return counted


@pytest.mark.docker
def test_every_precondition_holds_on_the_checks_own_inputs(library: Path, box: Sandbox) -> None:
    """Evaluated in the sandbox, in a process that imported the reference (as the judge evaluates it)."""
    stated = _admitted_on_the_checks_inputs(library, box, lambda t: t.contract if t.contract.requires else None)
    assert stated > 300
    outside = admitted(box, _task(library, "HumanEval/2").reference, "truncate_number",
                       Contract("number > 0"), ["(-3.5,)", "(0.0,)", "(3.5,)"])
    assert outside == [False, False, True]


@pytest.mark.docker
def test_every_inferred_precondition_holds_on_the_checks_own_inputs_in_the_sandbox(library: Path, box: Sandbox) -> None:
    """The importer checked its clauses on the host; the judge evaluates them in the box, beside the reference."""
    inferred = _admitted_on_the_checks_inputs(
        library, box, lambda t: Contract(t.contract.inferred) if t.contract.inferred else None)
    assert inferred > 300


@pytest.mark.docker
@pytest.mark.slow  # every alternative's hidden run, about 20 s: the full tier's
def test_every_correct_alternative_passes_the_hidden_tests(library: Path, box: Sandbox) -> None:
    """The whole false-positive set; the eight multi-answer problems also compared exactly, as before contracts."""
    cache = ReferenceCache()
    strict_failed = {}
    for item in ALTERNATIVES:
        task = _task(library, item["problem"])
        run = run_hidden(box, task, item["source"], cache=cache).suite
        assert run.total and run.failed == 0 and not run.tampered, (task.id, [o.reason for o in run.outcomes])
        number = int(item["problem"].rsplit("/", 1)[1])
        if number in MULTI_ANSWER:
            strict_failed[number] = run_hidden(box, replace(task, contract=Contract()), item["source"],
                                               cache=cache).suite.failed
    assert len(ALTERNATIVES) >= 30 and sorted(strict_failed) == MULTI_ANSWER
    # compared exactly, all but truncate_number's (whose inputs are short decimals) fail
    assert [n for n, failed in strict_failed.items() if failed] == [4, 32, 33, 37, 52, 56, 61]


def _differential(box: Sandbox, task: TaskSpec, source: str) -> list[dict[str, Any]]:
    """Every differential batch the red agent would run, run once: the divergences it would confirm."""
    family = DifferentialFamily()
    runner = DifferentialRunner(box, source, task.reference)
    found = []
    for variant in family.variants(AttackContext.build(task, source), task.entry_point):
        assert variant.spec.probe == PROBE
        for trial in runner.run(variant.spec, 0).trials:
            found += trial.result["diverged"]
    return found


@pytest.mark.slow
@pytest.mark.docker
def test_the_differential_family_blames_no_correct_alternative_within_the_contract(library: Path,
                                                                                    box: Sandbox) -> None:
    blamed_without = 0
    for item in ALTERNATIVES:
        number = int(item["problem"].rsplit("/", 1)[1])
        if number not in (0, 2, 20, 32, 33, 52, 55, 59):
            continue
        task = _task(library, item["problem"])
        assert _differential(box, task, item["source"]) == [], task.id
        blamed_without += bool(_differential(box, replace(task, contract=Contract()), item["source"]))
    assert blamed_without >= 6  # the same inputs, compared as before contracts, blame most of them
