"""Hidden-test verdicts, decided on the host from observations: the submission never runs here.

A hidden test passes when the submission's driver run recorded exactly what
the reference solution's run of the same driver recorded (``same``), and the
time it took lies within the bounds the driver's source declares
(``discover.timing_bounds``), on the clock they name: the CPU time of the
code's process, which the harness server reads from the kernel outside that
process, or the wall time the server measures.

Comparison is type-strict: the observations are tagged data (see
``harness/observe.py``), so a look-alike value, an ``int`` subclass or a
proxy never equals a plain value. Only where Python's own ``==`` ignores a
difference that the contract cannot fix does this ignore it too: the order of
a ``dict``'s or a ``set``'s items, a float's last bits (relative 1e-9), and a
``Decimal``'s exponent (``Decimal("1.0") == Decimal("1.00")``).
"""

from __future__ import annotations

import decimal
import json
import math
from collections.abc import Mapping
from typing import Any

from logomesh.sandbox.base import CLOCKS, Observed, ObservedSuite, SuiteRun, TestOutcome, TimeBound

FLOAT_REL_TOL = 1e-9
FLOAT_ABS_TOL = 1e-12


def canonical(value: Any) -> Any:
    """``value`` with the order of dict and set items made canonical (sorted by their JSON)."""
    if isinstance(value, list) and value and isinstance(value[0], str):
        tag = value[0]
        if tag in ("set", "frozenset") and len(value) == 2 and isinstance(value[1], list):
            return [tag, sorted((canonical(v) for v in value[1]), key=_key)]
        if tag == "dict" and len(value) == 2 and isinstance(value[1], list):
            return [tag, sorted((canonical(v) for v in value[1]), key=_key)]
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def same(got: Any, want: Any) -> bool:
    """Observation equality (both sides canonical): exact, but for float closeness and Decimal value."""
    if isinstance(got, list) and isinstance(want, list):
        if len(got) == 2 and len(want) == 2 and got[0] == want[0] == "float":
            return _same_float(got[1], want[1])
        if len(got) == 2 and len(want) == 2 and got[0] == want[0] == "decimal":
            return _same_decimal(got[1], want[1])
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want, strict=True))
    return type(got) is type(want) and bool(got == want)


def _same_float(got: Any, want: Any) -> bool:
    try:
        a, b = float(got), float(want)
    except (TypeError, ValueError):
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=FLOAT_REL_TOL, abs_tol=FLOAT_ABS_TOL)


def _same_decimal(got: Any, want: Any) -> bool:
    try:
        a, b = decimal.Decimal(str(got)), decimal.Decimal(str(want))
    except (decimal.InvalidOperation, ValueError):
        return False
    if a.is_nan() or b.is_nan():
        return a.is_nan() and b.is_nan() and a.is_snan() == b.is_snan()
    return a == b


def describe(observation: Any, limit: int = 120) -> str:
    text = json.dumps(observation, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def judge_test(got: Observed, want: Observed, bound: TimeBound | None = None) -> TestOutcome:
    """One hidden test's verdict."""
    if want.status != "observed":
        return TestOutcome(got.name, "error", f"the reference did not complete this test: {want.reason}",
                           got.duration_s)
    if got.status != "observed":
        return TestOutcome(got.name, got.status, got.reason or "no observations", got.duration_s)
    mine = [canonical(o) for o in got.observations]
    theirs = [canonical(o) for o in want.observations]
    for i, (g, w) in enumerate(zip(mine, theirs, strict=False)):
        if not same(g, w):
            return TestOutcome(got.name, "failed", f"observation {i + 1} of {len(theirs)} differs: got {describe(g)}, "
                               f"expected {describe(w)}", got.duration_s)
    if len(mine) != len(theirs):
        return TestOutcome(got.name, "failed", f"{len(mine)} observations where the reference made {len(theirs)}",
                           got.duration_s)
    late = _out_of_bounds(got, bound) if bound is not None else None
    if late:
        return TestOutcome(got.name, "error" if late.startswith("no ") else "failed", late, got.duration_s)
    return TestOutcome(got.name, "passed", "", got.duration_s)


def _out_of_bounds(got: Observed, bound: TimeBound) -> str | None:
    """Why the time ``got`` took breaks ``bound``, on the bound's clock; None if it does not."""
    spent = got.duration_s if bound.clock == "wall" else got.cpu_s
    clock = CLOCKS[bound.clock]
    if spent is None:
        return f"no measurement of its {clock}: a bound on it cannot be judged"
    if bound.min_s is not None and spent < bound.min_s:
        return f"took {spent:.3f} s of {clock}, at least {bound.min_s:g} s expected"
    if bound.max_s is not None and spent > bound.max_s:
        return f"took {spent:.3f} s of {clock}, at most {bound.max_s:g} s allowed"
    return None


def judge_suite(got: ObservedSuite, want: ObservedSuite, bounds: Mapping[str, TimeBound] | None = None) -> SuiteRun:
    """The hidden suite's verdicts. Signs of tampering fail every test, as a suite that could not be trusted."""
    reference = {t.name: t for t in want.tests}
    outcomes = []
    for test in got.tests:
        expected = reference.get(test.name, Observed(test.name, "error", (), "not in the reference's run"))
        outcome = judge_test(test, expected, (bounds or {}).get(test.name))
        if got.tamper_reasons and outcome.status == "passed":
            outcome = TestOutcome(test.name, "failed", "tampered: " + got.tamper_reasons[0], test.duration_s)
        outcomes.append(outcome)
    return SuiteRun(
        outcomes=tuple(outcomes),
        tampered=bool(got.tamper_reasons),
        tamper_reasons=got.tamper_reasons,
        error=got.error,
        stdout=got.stdout,
        stderr=got.stderr,
        duration_s=got.duration_s,
        loaded=got.loaded,
    )


def observations_bytes(suite: ObservedSuite) -> bytes:
    """The reference's observations as deterministic bytes (what the ledger keeps as the verdicts' basis)."""
    data = {t.name: {"status": t.status, "obs": [canonical(o) for o in t.observations]} for t in suite.tests}
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
