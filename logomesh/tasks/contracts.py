"""A task's stated contract: its preconditions and when two answers are the same answer.

Without a contract, an answer is right when its observation equals the
reference's exactly (``sandbox.verdict.same``) and every input the reference
returns on is inside the contract. A task's ``[contract]`` table
(docs/tasks.md, "Contracts") says more:

* ``requires``: a Python expression over the entry point's parameters, the
  precondition. An input where it is false (or raises) is outside the
  contract: the differential family does not count it.
* ``answer``: how answers compare, any of ``tolerance`` (numbers within
  ``rel_tol`` / ``abs_tol``, ``int`` and ``float`` alike), ``sequence``
  (``list`` and ``tuple`` are the same), ``unordered`` (a returned sequence's
  order is not part of the answer), ``truthy`` (only the answer's truth
  value counts) and ``property``: any answer for which ``holds`` (an
  expression over the parameters and ``result``) is true.
* ``inferred``: a precondition the importer inferred from the task's own
  test inputs (``importers/inferred_contracts``), kept apart from the stated
  ``requires``. It filters nothing: the differential family reports a
  divergence on an input it rejects at low, unpenalised.

The declarative kinds are decided here, on the host, on observations. The
expressions are task code: they run in the sandbox, in a process that never
ran the submission (``contract_check``), never on the host. What the
submission raises is never relaxed: an exception class must match exactly.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from logomesh.sandbox.base import ObservedSuite
from logomesh.sandbox.verdict import canonical, same
from logomesh.syntax import PARSE_ERRORS, parse

# A string's format: runs of ASCII digits, ASCII letters and spaces, and each other character alone. The format
# clauses a contract infers (``importers/inferred_contracts.py``) and the inputs the red agent reshapes with the
# format kept (``red/attacks/differential.py``) read strings with this one pattern, so the two agree on what
# keeps a format (ASCII digits only: ``int`` and the format clause's ``[0-9]+`` agree on them).
FORMAT_RUNS = re.compile(r"[0-9]+|[A-Za-z]+|\s+|.", re.DOTALL)
KINDS = ("tolerance", "sequence", "unordered", "truthy", "property")


class ContractError(ValueError):
    """A malformed ``[contract]`` table; the message names the file and the fix."""


@dataclass(frozen=True)
class Contract:
    requires: str = ""  # precondition: an expression over the entry point's parameters
    answer: tuple[str, ...] = ()  # answer equivalence kinds (empty: exact)
    rel_tol: float = 1e-9
    abs_tol: float = 1e-12
    holds: str = ""  # property: an expression over the parameters and ``result``
    inferred: str = ""  # a precondition inferred from the task's tests: outside it a divergence is low

    @property
    def stated(self) -> bool:
        return bool(self.requires or self.answer)

    def as_args(self) -> dict[str, Any]:
        """The contract as plain data (what a probe spec carries; ``inferred`` only when there is one)."""
        args: dict[str, Any] = {"requires": self.requires, "answer": list(self.answer), "rel_tol": self.rel_tol,
                                "abs_tol": self.abs_tol, "holds": self.holds}
        return {**args, "inferred": self.inferred} if self.inferred else args

    @classmethod
    def from_args(cls, data: Mapping[str, Any]) -> Contract:
        return cls(str(data.get("requires", "")), tuple(str(k) for k in data.get("answer", ())),
                   float(data.get("rel_tol", 1e-9)), float(data.get("abs_tol", 1e-12)), str(data.get("holds", "")),
                   str(data.get("inferred", "")))


def parse_contract(table: Any, where: Path) -> Contract:
    """The ``[contract]`` table of ``where`` (absent: no contract)."""
    if table is None:
        return Contract()
    if not isinstance(table, dict):
        raise ContractError(f"{where}: [contract] must be a table")
    unknown = sorted(set(table) - {"requires", "answer", "rel_tol", "abs_tol", "holds", "inferred"})
    if unknown:
        raise ContractError(f"{where}: unknown [contract] key(s) {unknown}; use requires, answer, rel_tol, abs_tol, "
                            "holds, inferred")
    answer = table.get("answer", [])
    answer = [answer] if isinstance(answer, str) else answer
    if not isinstance(answer, list) or any(k not in KINDS for k in answer):
        raise ContractError(f"{where}: [contract] answer must be a list of {', '.join(KINDS)}")
    texts = {}
    for key in ("requires", "holds", "inferred"):
        value = table.get(key, "")
        if not isinstance(value, str):
            raise ContractError(f"{where}: [contract] {key} must be a Python expression in a string")
        if value:
            try:
                compile(value, f"[contract] {key}", "eval")  # parsed only: it runs in the sandbox
            except SyntaxError as exc:
                raise ContractError(f"{where}: [contract] {key} is not a Python expression: {exc.msg}") from None
        texts[key] = value.strip()
    if ("property" in answer) != bool(texts["holds"]):
        raise ContractError(f"{where}: [contract] answer 'property' and holds go together (holds is the property)")
    tols = {}
    for key, default in (("rel_tol", 1e-9), ("abs_tol", 1e-12)):
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise ContractError(f"{where}: [contract] {key} must be a number in [0, 1)")
        tols[key] = float(value)
    return Contract(texts["requires"], tuple(sorted(set(answer))), tols["rel_tol"], tols["abs_tol"], texts["holds"],
                    texts["inferred"])


def clauses(expression: str) -> list[str]:
    """A precondition's top-level ``and`` operands, as written (parsed only, never run): one clause each."""
    text = expression.strip()
    try:
        tree = parse(text)
    except PARSE_ERRORS:
        return [text] if text else []
    body = tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
    if not (isinstance(body, ast.BoolOp) and isinstance(body.op, ast.And)):
        return [text] if text else []
    return [ast.get_source_segment(text, v) or ast.unparse(v) for v in body.values]


# ---- answers, on observations ------------------------------------------------------------------------------------


def _is(value: Any, tag: str) -> bool:
    return isinstance(value, list) and len(value) == 2 and value[0] == tag


def _number(value: Any) -> float | None:
    if _is(value, "int"):
        text = str(value[1])
        try:
            return float(int(text, 16) if text.startswith(("0x", "-0x")) else int(text))
        except (ValueError, OverflowError):
            return None
    if _is(value, "float"):
        try:
            return float(value[1])
        except (TypeError, ValueError):
            return None
    return None


def _truth(value: Any) -> bool | None:
    """The truth value of an encoded builtin value; ``None`` for an opaque object."""
    if _is(value, "bool"):
        return bool(value[1])
    if value == ["none"]:
        return False
    number = _number(value)
    if number is not None:
        return number != 0
    if isinstance(value, list) and len(value) == 2 and value[0] in ("str", "bytes", "list", "tuple", "dict", "set",
                                                                     "frozenset", "decimal"):
        if value[0] == "decimal":
            return str(value[1]).lstrip("-") not in ("0", "0E0") and float(value[1]) != 0
        return len(value[1]) > 0
    return None


def _normalise(value: Any, kinds: tuple[str, ...], top: bool = True) -> Any:
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str):
        return value
    tag, inner = value
    if tag in ("list", "tuple") and isinstance(inner, list):
        items = [_normalise(v, kinds, False) for v in inner]
        if "unordered" in kinds and top:
            items = sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return ["list" if "sequence" in kinds else tag, items]
    return value


def _close(got: Any, want: Any, contract: Contract) -> bool:
    a, b = _number(got), _number(want)
    if a is not None and b is not None and "tolerance" in contract.answer:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=contract.rel_tol, abs_tol=contract.abs_tol)
    if isinstance(got, list) and isinstance(want, list) and len(got) == 2 and len(want) == 2 \
            and isinstance(got[0], str) and got[0] == want[0] and isinstance(got[1], list) \
            and isinstance(want[1], list):
        return len(got[1]) == len(want[1]) and all(_close(g, w, contract) for g, w in zip(got[1], want[1], strict=True))
    return same(got, want)


def equivalent(contract: Contract, got: Any, want: Any) -> bool:
    """Whether one canonical observation ``got`` is the same answer as the reference's ``want``, declaratively.

    Only returned values are relaxed; ``property`` is not decided here (it needs the inputs: ``accept_suite``).
    """
    if same(got, want):
        return True
    kinds = contract.answer
    if not kinds or not (_is(got, "returned") and _is(want, "returned")):
        return False
    mine, theirs = got[1], want[1]
    if "truthy" in kinds:
        a, b = _truth(mine), _truth(theirs)
        return a is not None and a == b
    if "sequence" in kinds or "unordered" in kinds:
        mine, theirs = _normalise(mine, kinds), _normalise(theirs, kinds)
    return _close(mine, theirs, contract)


# ---- a hidden suite's observations, read under the contract ---------------------------------------------------------

Holds = Callable[[list[tuple[Any, Any]]], list[bool]]
"""Decides ``holds`` for (arguments observation, returned observation) pairs, in the sandbox."""


def accept_suite(got: ObservedSuite, want: ObservedSuite, contract: Contract, holds: Holds | None = None
                 ) -> ObservedSuite:
    """``got`` with every observation that is the reference's answer under ``contract`` replaced by the reference's.

    The exact comparison of ``sandbox.verdict`` then judges the result. For ``property``, a driver records a
    call's arguments (``see(args)``) just before the call: a differing answer is accepted when the recorded
    arguments equal the reference's and ``holds`` is true of them and the answer.
    """
    if not contract.answer:
        return got
    reference = {t.name: t for t in want.tests}
    pending: list[tuple[str, int, Any, Any]] = []
    tests: dict[str, list[Any]] = {}
    for test in got.tests:
        expected = reference.get(test.name)
        if expected is None or test.status != "observed" or expected.status != "observed" \
                or len(test.observations) != len(expected.observations):
            continue
        observations = list(test.observations)
        for i, (g, w) in enumerate(zip(test.observations, expected.observations, strict=True)):
            mine, theirs = canonical(g), canonical(w)
            if equivalent(contract, mine, theirs):
                observations[i] = w
            elif "property" in contract.answer and i > 0 and _is(mine, "returned") and _is(theirs, "returned") \
                    and _is(expected.observations[i - 1], "value") \
                    and same(canonical(test.observations[i - 1]), canonical(expected.observations[i - 1])):
                pending.append((test.name, i, expected.observations[i - 1][1], mine[1]))
        tests[test.name] = observations
    if pending and holds is not None:
        verdicts = holds([(args, result) for _, _, args, result in pending])
        for (name, i, _, _), ok in zip(pending, verdicts, strict=True):
            if ok:
                tests[name][i] = reference[name].observations[i]
    changed = tuple(replace(t, observations=tuple(tests[t.name])) if t.name in tests else t for t in got.tests)
    return replace(got, tests=changed)
