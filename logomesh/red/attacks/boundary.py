"""Bad and boundary input (CWE-20) and money-invariant breaks (CWE-840).

Two oracles. Where the contract demands a clean error (``max_requests < 1``,
a negative amount, an overdraft, an identifier with a trailing newline), the
call must raise; accepting the input is the finding. Everywhere else an
odd input may be rejected with the documented ``ValueError``/``TypeError``
(or any lookup or arithmetic error), but an escape of another type
(``AttributeError``, ``IndexError``, ``UnboundLocalError``, a crash) means the
input was never validated.
"""

from __future__ import annotations

from typing import Any

from logomesh.red.attacks.base import MISS, Family, Variant, Verdict
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

NAN = {"$": "nan"}
INF = {"$": "inf"}
HUGE = {"$": "pow", "b": 10, "e": 400}
CLOCK = {"$": "clock", "v": 5.0}
ALLOWED = frozenset({
    "ValueError", "TypeError", "KeyError", "LookupError", "IndexError", "OverflowError", "ZeroDivisionError",
    "ArithmeticError", "InvalidOperation", "TimeoutError", "RecursionError", "UnicodeError", "UnicodeEncodeError",
    "UnicodeDecodeError", "DivisionByZero", "FloatingPointError",
})


def _dec(text: str) -> dict[str, str]:
    return {"$": "decimal", "v": text}


# entry class/function -> list of (variant id, target, call, must_reject, cwe, prior)
Call = dict[str, Any]
_BANK = {"target": "Bank.{m}", "setup": [["open_account", ["a", _dec("100")]], ["open_account", ["b", _dec("100")]]]}


def _bank(method: str, args: list[Any]) -> Call:
    return {**_BANK, "target": f"Bank.{method}", "args": args}


RECIPES: dict[str, list[tuple[str, Call, bool, str, float]]] = {
    "RateLimiter": [
        ("zero-limit", {"target": "RateLimiter", "args": [0, 1.0]}, True, "CWE-20", 0.5),
        ("zero-window", {"target": "RateLimiter", "args": [1, 0]}, True, "CWE-20", 0.5),
        ("negative-window", {"target": "RateLimiter", "args": [1, -1.0]}, True, "CWE-20", 0.4),
        ("nan-window", {"target": "RateLimiter.allow", "ctor": [1, NAN], "ctor_kw": {"clock": CLOCK},
                        "args": ["k"]}, False, "CWE-20", 0.3),
        ("odd-key", {"target": "RateLimiter.allow", "ctor": [2, 1.0], "ctor_kw": {"clock": CLOCK},
                     "args": [None]}, False, "CWE-20", 0.2),
    ],
    "LRUCache": [
        ("zero-capacity", {"target": "LRUCache", "args": [0]}, True, "CWE-20", 0.5),
        ("negative-capacity", {"target": "LRUCache", "args": [-3]}, True, "CWE-20", 0.4),
        ("get-missing", {"target": "LRUCache.get", "ctor": [2], "args": ["absent"]}, False, "CWE-20", 0.3),
        ("huge-capacity", {"target": "LRUCache.get", "ctor": [HUGE], "args": ["k"]}, False, "CWE-20", 0.2),
    ],
    "Bank": [
        ("negative-deposit", _bank("deposit", ["a", _dec("-5")]), True, "CWE-840", 0.7),
        ("zero-deposit", _bank("deposit", ["a", _dec("0")]), True, "CWE-840", 0.4),
        ("nan-deposit", _bank("deposit", ["a", _dec("NaN")]), True, "CWE-840", 0.6),
        ("infinite-deposit", _bank("deposit", ["a", _dec("Infinity")]), True, "CWE-840", 0.6),
        ("overdraft", _bank("withdraw", ["a", _dec("100.01")]), True, "CWE-840", 0.6),
        ("negative-transfer", _bank("transfer", ["a", "b", _dec("-50")]), True, "CWE-840", 0.7),
        ("float-deposit", _bank("deposit", ["a", 0.1]), False, "CWE-20", 0.3),
    ],
    "ConnectionPool": [
        ("foreign-release", {"target": "ConnectionPool.release", "ctor": [{"$": "factory"}, 2],
                             "args": [{"$": "object"}]}, True, "CWE-20", 0.5),
        ("zero-size", {"target": "ConnectionPool.acquire", "ctor": [{"$": "factory"}, 0], "args": [0.05]},
         False, "CWE-20", 0.2),
    ],
    "fib": [
        ("negative", {"target": "fib", "args": [-1]}, True, "CWE-20", 0.5),
        ("float", {"target": "fib", "args": [2.5]}, False, "CWE-20", 0.2),
    ],
    "build_select": [
        ("trailing-newline", {"target": "build_select", "args": ["items\n", [], {}]}, True, "CWE-20", 0.5),
        ("empty-table", {"target": "build_select", "args": ["", [], {}]}, True, "CWE-20", 0.4),
        ("non-string", {"target": "build_select", "args": [None, [], {}]}, True, "CWE-20", 0.3),
        ("dotted", {"target": "build_select", "args": ["main.items", [], {}]}, True, "CWE-20", 0.3),
    ],
    "is_valid_email": [
        ("lone-surrogate", {"target": "is_valid_email", "args": ["\udcff@example.com"]}, False, "CWE-20", 0.3),
        ("empty", {"target": "is_valid_email", "args": [""]}, False, "CWE-20", 0.3),
        ("non-string", {"target": "is_valid_email", "args": [None]}, False, "CWE-20", 0.2),
        ("trailing-newline", {"target": "is_valid_email", "args": ["user@example.com\n"], "expect": "False"},
         False, "CWE-20", 0.4),
        ("long-local", {"target": "is_valid_email", "args": ["a" * 65 + "@example.com"], "expect": "False"},
         False, "CWE-20", 0.3),
    ],
    "safe_join": [
        ("nul-byte", {"target": "safe_join", "args": [".", "a\x00b"]}, True, "CWE-20", 0.4),
        ("empty", {"target": "safe_join", "args": [".", ""]}, False, "CWE-20", 0.2),
    ],
    "evaluate": [
        ("names", {"target": "evaluate", "args": ["abc"]}, True, "CWE-20", 0.4),
        ("dangling", {"target": "evaluate", "args": ["1 +"]}, True, "CWE-20", 0.3),
        ("empty", {"target": "evaluate", "args": [""]}, True, "CWE-20", 0.3),
    ],
}


class BoundaryFamily(Family):
    name = "boundary-input"
    cwe = "CWE-20"
    severity = "low"
    rationale = ("low: input the contract rejects is accepted or escapes with an undocumented exception; "
                 "money-invariant breaks (CWE-840) are medium: balances change without a valid amount")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in ctx.features.functions and entry not in ctx.features.classes:
            return []
        out = []
        for ident, call, must_reject, cwe, prior in RECIPES.get(entry, []):
            out.append(Variant(
                id=ident,
                spec=ProbeSpec("call", {**call, "must_reject": must_reject}),
                reproducer=_render(call),
                prior=prior,
                cwe=cwe,
                severity="medium" if cwe == "CWE-840" else "low",
            ))
        return out

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        must_reject = bool(variant.spec.args.get("must_reject"))
        if trial.status == "ok":
            expect = variant.spec.args.get("expect")
            if expect is not None and trial.result.get("repr") != expect:
                return Verdict(True, 1.0, f"returned {trial.result.get('repr')} where the contract requires {expect}")
            if must_reject:
                return Verdict(True, 1.0, f"accepted input the contract rejects; returned {trial.result.get('repr')}")
            return MISS
        if trial.status == "exception":
            if trial.exc in ALLOWED:
                return MISS
            where = f" at {', '.join(trial.where)}" if trial.where else ""
            return Verdict(True, 0.9, f"escaped with {trial.exc}: {trial.message}{where}")
        if trial.status == "crashed":
            return Verdict(True, 0.9, f"the process died (signal {trial.signal})")
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
        return {
            "nan": "float('nan')", "inf": "float('inf')", "-inf": "float('-inf')",
            "decimal": f"Decimal({value.get('v')!r})", "clock": f"lambda: {value.get('v')}",
            "factory": "object", "object": "object()", "pow": f"{value.get('b')}**{value.get('e')}",
        }.get(kind, repr(value))
    return repr(value)
