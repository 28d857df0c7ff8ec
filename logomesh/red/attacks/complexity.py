"""ReDoS (CWE-1333) and algorithmic complexity (CWE-407/400) by growing-input experiments on CPU time.

The probe calls the entry point on inputs of growing size and stops at the
first call over ``cap_s`` CPU seconds. It runs as a driver (``red/driven.py``):
the code answers in a process of its own, whose CPU time the judge's process
reads from the kernel (``/proc/<pid>/stat``) around each call, killing it once
a call has used the cap; nothing the code does to its own clocks or signals
moves the reading. A linear implementation stays far
below the cap at the contract's largest hostile size (50 000 characters for
strings), a backtracking regex or an exponential recursion does not. The task
says what its entry point takes (``[red.complexity]`` input = int, string or
expression; ``docs/tasks.md``); any function whose code uses a regex gets the
string inputs as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from logomesh import untrusted
from logomesh.red.attacks.base import DIED, MISS, Family, Variant, Verdict, did_not_survive, with_args
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeSpec, Trial

CAP_S = 0.25
STRING_SIZES = [8, 14, 18, 22, 26, 30, 2000, 20000, 50000]
PUMPS = ("a", "a.", "0", "a-", "-", "a_", ". ")
PREFIXES = ("", "a@", "a@a")
NESTED_QUANTIFIER = re.compile(r"[+*?}]\)[*+{]")
# Fixed hostile expressions for an evaluator: (id, prefix, pump, suffix, sizes)
EXPRESSIONS: tuple[tuple[str, str, str, str, list[int]], ...] = (
    ("power-tower", "", "9**", "9", [1, 2, 3]),
    ("power-chain", "", "2**", "2", [3, 4, 5, 6]),
    ("huge-power", "10**", "9", "", [3, 5, 7, 9]),
    ("long-sum", "", "1+", "1", [1000, 10000]),
)


def _expression_variants(entry: str) -> list[Variant]:
    out = []
    for ident, prefix, pump, suffix, sizes in EXPRESSIONS:
        shape = {"kind": "str", "prefix": prefix, "pump": pump, "suffix": suffix}
        out.append(Variant(
            id=ident,
            spec=ProbeSpec("timing", {"target": entry, "input": shape, "sizes": sizes, "cap_s": 0.4},
                           timeout_s=1.0),
            reproducer=f"{entry}({prefix!r} + {pump!r} * n + {suffix!r}) for n in {sizes}",
            control=ProbeSpec("timing", {"target": entry, "input": {"kind": "str", "pump": "1+", "suffix": "1"},
                                         "sizes": [3], "cap_s": 1.0}),
            prior=0.7 if ident != "long-sum" else 0.3,
            cwe="CWE-400",
        ))
    return out


def _string_variants(ctx: AttackContext, entry: str) -> list[Variant]:
    nested = bool(NESTED_QUANTIFIER.search(ctx.source))
    uses_re = bool(ctx.features.regexes) or any(c.startswith("re.") for c in ctx.features.calls)
    base_prior = 0.75 if nested else (0.4 if uses_re else 0.15)
    out = []
    for p_index, prefix in enumerate(PREFIXES):
        for q_index, pump in enumerate(PUMPS):
            shape: dict[str, Any] = {"kind": "str", "prefix": prefix, "pump": pump, "suffix": "!"}
            out.append(Variant(
                id=f"pump-{p_index}{q_index}",
                spec=ProbeSpec("timing", {"target": entry, "input": shape, "sizes": STRING_SIZES, "cap_s": CAP_S},
                               timeout_s=4.0),
                reproducer=f"{entry}({prefix!r} + {pump!r} * n + '!')",
                control=ProbeSpec("timing", {"target": entry, "input": {**shape, "prefix": "", "pump": "a"},
                                             "sizes": [4], "cap_s": CAP_S}),
                prior=max(0.05, base_prior - 0.04 * q_index - 0.08 * p_index),
                cwe="CWE-1333" if uses_re else "CWE-407",
            ))
    return out


def _int_variants(entry: str) -> list[Variant]:
    sizes = [10, 15, 20, 25, 300]
    return [Variant(
        id="growing-n",
        spec=ProbeSpec("timing", {"target": entry, "input": {"kind": "int"}, "sizes": sizes, "cap_s": CAP_S},
                       timeout_s=4.0),
        reproducer=f"{entry}(n) for n in {sizes}",
        control=ProbeSpec("timing", {"target": entry, "input": {"kind": "int"}, "sizes": [5], "cap_s": 1.0}),
        prior=0.7,
        cwe="CWE-407",
    )]


class ComplexityFamily(Family):
    name = "complexity"
    cwe = "CWE-1333"
    severity = "medium"
    rationale = ("medium: availability only; one short hostile input pins a CPU for seconds or longer, "
                 "no confidentiality or integrity impact")
    probe = "timing"
    markers = ("target", "input", "sizes", "cap_s", "capped", "points", "n", "t")

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        if entry not in ctx.features.functions:
            return []
        declared = ctx.red.complexity
        kind = declared.kind if declared is not None and declared.entry == entry else ""
        if kind == "expression":
            return _expression_variants(entry)
        if kind == "int":
            return _int_variants(entry)
        if kind == "string" or ctx.features.regexes or NESTED_QUANTIFIER.search(ctx.source):
            return _string_variants(ctx, entry)
        return []

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        """CPU time only: a call over the cap (the probe's watchdog killed it there). The wall clock is the
        machine's load: a trial that ran out of wall time without using the cap is "starved", never a hit;
        one the code ended or hung (``DIED``) is, where the small control answered.

        A miss scores 0 whatever it measured, so the search never learns from timings and plays the same
        leaves on an idle and on a loaded machine."""
        if trial.status in DIED:  # ended or hung its process on a large input: not bounded either
            return did_not_survive(trial)
        points = _points(trial)
        last = points[-1] if points else None
        if trial.status == "memory":
            return Verdict(True, 1.0, "one call exhausted the memory limit")
        capped = trial.status == "ok" and untrusted.flag(trial.result, "capped")
        if capped and last is not None:
            return Verdict(True, 1.0, f"one call on an input of size n={last.n} took {last.t:.2f} s of CPU time "
                                      "read from the kernel")
        if trial.status == "ok" and not capped and [p.n for p in points] != list(variant.spec.args.get("sizes", [])):
            raise untrusted.Malformed("the timing probe timed other sizes than it was given")
        return MISS

    def shrink(self, variant: Variant, trial: Trial) -> Variant:
        """Replay the sizes up to one past the size that hit; the reproducer stays the variant's.

        Which size first crossed the cap is a measurement (a loaded CPU moves it by a ladder step), so the
        result does not name it (the evidence does); the replay includes the next size, so a hit that was
        marginal at its size is certain at the next one."""
        try:
            points = _points(trial)
        except untrusted.Malformed:
            return variant
        if not points:
            return variant
        sizes = list(variant.spec.args.get("sizes", []))
        hit = points[-1].n
        if hit not in sizes:
            return variant
        return with_args(variant, variant.reproducer, sizes=sizes[: sizes.index(hit) + 2])

    def control_ok(self, variant: Variant, trial: Trial) -> bool:
        return trial.status == "ok" and not untrusted.flag(trial.result, "capped")


@dataclass(frozen=True)
class Point:
    """One timed call, as the probe recorded it: the input's size and the CPU seconds the call took."""

    n: int
    t: float


def _points(trial: Trial) -> list[Point]:
    """The calls an ok trial timed, from its result (none for another status); ``Malformed`` if not the probe's."""
    records = untrusted.objects(trial.result, "points") if trial.status == "ok" else ()
    return [Point(untrusted.integer(p, "n"), untrusted.number(p, "t")) for p in records]
