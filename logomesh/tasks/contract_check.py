"""A contract's expressions (``requires``, ``holds``), run in a sandbox process that never ran the submission.

The expressions are task code, so they never run on the host. A script made
here imports the task's *reference* as ``solution`` (so the prompt's helpers,
such as a ``poly`` the contract names, are there), binds the entry point's
parameters to each case's arguments, and prints one truth value per case. An
expression that raises counts as false; a box that fails counts every case as
false (a precondition then admits nothing, a property accepts nothing: the
exact comparison stands).
"""

from __future__ import annotations

import ast
from typing import Any

from logomesh import untrusted
from logomesh.sandbox.base import ObservedSuite, Sandbox
from logomesh.syntax import PARSE_ERRORS, parse
from logomesh.tasks import TaskSpec
from logomesh.tasks.contracts import Contract, accept_suite, clauses

MARK = "LM-CONTRACT "


def entry_def(reference: str, entry: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level ``def`` of the entry point in the reference's source; ``None`` if it has none."""
    try:
        tree = parse(reference)
    except PARSE_ERRORS:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry:
            return node
    return None


def parameters(reference: str, entry: str) -> str | None:
    """The entry point's parameter list as a lambda takes it (annotations dropped); ``None`` if not found."""
    node = entry_def(reference, entry)
    if node is None:
        return None
    args = node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    return ast.unparse(args)


def literal(value: Any) -> str | None:
    """Python source for an encoded observation value (``harness/observe.py``); ``None`` for an opaque one."""
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        return None
    tag = value[0]
    if tag == "none":
        return "None"
    if len(value) != 2:
        return None
    inner = value[1]
    if tag == "bool":
        return "True" if inner else "False"
    if tag == "int":
        return f"({inner})" if isinstance(inner, str) else None
    if tag == "float":
        return f"float({str(inner)!r})"
    if tag == "str":
        return repr(inner) if isinstance(inner, str) else None
    if tag == "bytes":
        return f"bytes.fromhex({str(inner)!r})"
    if tag == "decimal":
        return f"decimal.Decimal({str(inner)!r})"
    if tag in ("list", "tuple", "set", "frozenset") and isinstance(inner, list):
        items = [literal(v) for v in inner]
        if any(i is None for i in items):
            return None
        body = ", ".join(str(i) for i in items)
        return {"list": f"[{body}]", "tuple": f"({body},)" if len(items) == 1 else f"({body})",
                "set": f"set([{body}])", "frozenset": f"frozenset([{body}])"}[tag]
    if tag == "dict" and isinstance(inner, list):
        pairs = [(literal(k), literal(v)) for k, v in inner]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def script(reference: str, entry: str, expression: str, cases: list[tuple[str, str | None]]) -> str | None:
    """The checker: ``expression`` over each case's arguments (a tuple's source) and ``result`` (source or None)."""
    params = parameters(reference, entry)
    if params is None:
        return None
    lines = ["import decimal", "import json", "from solution import *  # the reference: the prompt's helpers",
             "import re  # after the reference's names: an inferred format clause's (importers/inferred_contracts)",
             f"_check = lambda {params + ', ' if params else ''}result=None: ({expression})", "_out = []"]
    for args, result in cases:
        call = f"_check(*{args}, result={result or 'None'})" if params else f"_check(result={result or 'None'})"
        lines += ["try:", f"    _out.append(bool({call}))", "except BaseException:", "    _out.append(False)"]
    lines.append(f"print({MARK!r} + json.dumps(_out))")
    return "\n".join(lines) + "\n"


def evaluate(box: Sandbox, reference: str, entry: str, expression: str, cases: list[tuple[str, str | None]]
             ) -> list[bool]:
    """One truth value per case (all false when the check could not run)."""
    if not cases:
        return []
    text = script(reference, entry, expression, cases)
    if text is None:
        return [False] * len(cases)
    run = box.run_script({"solution.py": reference}, text, timeout_s=10.0 + 0.02 * len(cases))
    for line in reversed(run.stdout.splitlines()):
        if line.startswith(MARK):
            try:
                found = untrusted.parse(line[len(MARK):])
            except untrusted.Malformed:
                break
            if isinstance(found, list) and len(found) == len(cases) and all(isinstance(v, bool) for v in found):
                return found
            break
    return [False] * len(cases)


def admitted(box: Sandbox, reference: str, entry: str, contract: Contract, inputs: list[str]) -> list[bool]:
    """Which argument tuples (literal source) satisfy the precondition (all, when none is stated)."""
    if not contract.requires:
        return [True] * len(inputs)
    return evaluate(box, reference, entry, contract.requires, [(i, None) for i in inputs])


def broken(box: Sandbox, reference: str, entry: str, expression: str, inputs: list[str]) -> list[str]:
    """For each argument tuple (literal source), the first clause of ``expression`` it breaks; ``""`` when none.

    One box run for all: each (input, clause) pair is a case, its clause picked by the case's ``result``
    (a conditional expression evaluates only the clause picked, so one raising clause spoils only its own case)."""
    parts = clauses(expression)
    if not parts or not inputs:
        return [""] * len(inputs)
    picker = " else ".join(f"({clause}) if result == {k}" for k, clause in enumerate(parts)) + " else True"
    cases: list[tuple[str, str | None]] = [(i, str(k)) for i in inputs for k in range(len(parts))]
    verdicts = evaluate(box, reference, entry, picker, cases)
    width = len(parts)
    return [next((parts[k] for k in range(width) if not verdicts[n * width + k]), "") for n in range(len(inputs))]


def holds(box: Sandbox, reference: str, entry: str, contract: Contract, pairs: list[tuple[Any, Any]]) -> list[bool]:
    """Whether the property holds for each (encoded arguments, encoded answer) pair."""
    cases: list[tuple[str, str | None]] = []
    usable: list[bool] = []
    for args, result in pairs:
        a, r = literal(args), literal(result)
        usable.append(a is not None and r is not None and isinstance(args, list) and args[0] == "tuple")
        cases.append((a or "()", r))
    verdicts = evaluate(box, reference, entry, contract.holds, [c for c, u in zip(cases, usable, strict=True) if u])
    it = iter(verdicts)
    return [next(it) if u else False for u in usable]


def under_contract(box: Sandbox, task: TaskSpec, got: ObservedSuite, want: ObservedSuite) -> ObservedSuite:
    """The submission's hidden-suite observations with every answer the contract accepts read as the reference's."""
    contract = task.contract
    if not contract.answer:
        return got

    def decide(pairs: list[tuple[Any, Any]]) -> list[bool]:
        return holds(box, task.reference, task.entry_point, contract, pairs)

    return accept_suite(got, want, contract, decide)
