"""Bad and boundary input (CWE-20) and money-invariant breaks (CWE-840).

Two oracles. Where the contract demands a clean error (``max_requests < 1``,
a negative amount, an overdraft, an identifier with a trailing newline), the
call must raise; accepting the input is the finding. Everywhere else an
odd input may be rejected with the documented ``ValueError``/``TypeError``
(or any lookup or arithmetic error), but an escape of another type
(``AttributeError``, ``IndexError``, ``UnboundLocalError``, a crash) means the
input was never validated.

The inputs are the task's own (``[[red.boundary]]`` in its task.toml;
``docs/tasks.md``); values JSON cannot carry are tagged (``{"$" = "nan"}``).
"""

from __future__ import annotations

from typing import Any

from logomesh import untrusted
from logomesh.red.attacks.base import MISS, Family, Variant, Verdict
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

ALLOWED = frozenset({
    "ValueError", "TypeError", "KeyError", "LookupError", "IndexError", "OverflowError", "ZeroDivisionError",
    "ArithmeticError", "InvalidOperation", "TimeoutError", "RecursionError", "UnicodeError", "UnicodeEncodeError",
    "UnicodeDecodeError", "DivisionByZero", "FloatingPointError",
})


Call = dict[str, Any]


class BoundaryFamily(Family):
    name = "boundary-input"
    cwe = "CWE-20"
    severity = "low"
    rationale = ("low: input the contract rejects is accepted or escapes with an undocumented exception; "
                 "money-invariant breaks (CWE-840) are medium: balances change without a valid amount")
    probe = "call"
    markers = ("target", "args", "repr")  # must_reject stays on the host: the oracle reads it

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if not ctx.defines(entry):
            return []
        return [
            Variant(
                id=case.id,
                spec=ProbeSpec("call", {**case.call, "must_reject": case.must_reject}),
                reproducer=_render(case.call),
                prior=case.prior,
                cwe=case.cwe,
                severity="medium" if case.cwe == "CWE-840" else "low",
            )
            for case in ctx.red.boundary_cases(entry)
        ]

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        must_reject = bool(variant.spec.args.get("must_reject"))
        if trial.status == "ok":
            expect = variant.spec.args.get("expect")
            returned = untrusted.text(trial.result, "repr", limit=200)
            if expect is not None and returned != expect:
                return Verdict(True, 1.0, f"returned {returned} where the contract requires {expect}")
            if must_reject:
                return Verdict(True, 1.0, f"accepted input the contract rejects; returned {returned}")
            return MISS
        if trial.status == "exception":
            if trial.exc in ALLOWED:
                return MISS
            where = f" at {', '.join(trial.where)}" if trial.where else ""
            return Verdict(True, 0.9, f"escaped with {trial.exc}: {trial.message}{where}")
        if trial.status == "crashed":
            return Verdict(True, 0.9, f"the process died ({trial.message or 'no reason given'})")
        return Verdict(False, 0.3)


def _render(call: Call) -> str:
    target = str(call["target"])
    args = ", ".join(_show(a) for a in call.get("args", []))
    head, _, method = target.partition(".")
    if not method:
        return f"{head}({args})"
    ctor = ", ".join(_show(a) for a in call.get("ctor", []))
    ctor_kw = ", ".join(f"{k}={_show(v)}" for k, v in call.get("ctor_kw", {}).items())
    setup = "".join(f".{name}({', '.join(_show(a) for a in args_)})" for name, args_ in call.get("setup", []))
    joined = ", ".join(p for p in (ctor, ctor_kw) if p)
    return f"x = {head}({joined}){'; x' + setup if setup else ''}; x.{method}({args})"


def _show(value: Any) -> str:
    if isinstance(value, dict) and "$" in value:
        kind = value["$"]
        if kind == "repeat":
            return repr(str(value.get("prefix", "")) + str(value["v"]) * int(value["n"]) + str(value.get("suffix", "")))
        if kind == "escaped":
            return repr(str(value["v"]).encode("ascii").decode("unicode_escape"))
        return {
            "nan": "float('nan')", "inf": "float('inf')", "-inf": "float('-inf')",
            "decimal": f"Decimal({value.get('v')!r})", "clock": f"lambda: {value.get('v')}",
            "factory": "object", "object": "object()", "none": "None", "pow": f"{value.get('b')}**{value.get('e')}",
        }.get(kind, repr(value))
    return repr(value)
