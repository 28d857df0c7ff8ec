"""Differential testing against the task's reference (CWE-684), for any task whose entry point is a function.

The inputs come from the task itself: the literal arguments of every call to
the entry point in its hidden drivers, mutated type-aware in the manner of
EvalPlus (ints and floats nudged, strings and containers cut, grown, reversed,
shuffled, one element mutated; the types never change). Half the string
mutations keep the seed's format (``reshape``: a numeric string stays numeric,
a date stays a date), and some draws reorder or repeat arguments of one type
(the same sides in another order, the same interval twice). Each batch runs as an
observation driver twice, in separate sandboxed processes: against the
submission and against the reference (``observe_suite``). Only inputs the
reference accepts (it returns) count, since an input it refuses is outside
the contract; there, any difference in value, exact type or raised exception
class is a divergence, confirmed by replaying it and shrunk to the smallest
diverging input. Hangs, crashes and resource limits (RecursionError,
MemoryError) are left to the complexity and growth families, whose severity
is theirs. The verdict is computed here, on the host, as for hidden tests.

A divergence on an input outside the precondition the importer inferred from
the task's own tests (``[contract] inferred``; the stated ``requires`` still
filters as before) is reported at low and never penalised: the tests never go
there, so the reference's answer there is no requirement. A batch's divergence
inside it is preferred, so such a finding stays at the task's severity.
"""

from __future__ import annotations

import ast
import hashlib
import random
import string
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from logomesh.red.attacks.base import Family, Variant, Verdict
from logomesh.red.attacks.edges import edge_inputs
from logomesh.red.context import AttackContext
from logomesh.red.executor import ProbeRun, ProbeSpec, Trial
from logomesh.sandbox.base import ObservedSuite, Sandbox
from logomesh.sandbox.setting import CLASSIC, Setting
from logomesh.sandbox.verdict import canonical, describe, same
from logomesh.syntax import PARSE_ERRORS, constant, parse
from logomesh.tasks.contract_check import admitted, broken, evaluate, literal
from logomesh.tasks.contracts import FORMAT_RUNS, Contract, equivalent

PROBE = "differential"
BATCHES = 4
EDGE_BATCHES = 2  # of edge-case inputs (``edges.edge_inputs``): boundary values, one parameter at a time
DRAWN_BATCHES = 2  # of property-based inputs (``drawn.drawn_inputs``): drawn with Hypothesis by the sites' shape
BRANCH_BATCHES = 2  # of branch-value inputs (``branches.branch_inputs``): the constants the two sources compare against
# Their priors sit between the third and fourth mutated batch: rollouts pick a leaf with probability ~ prior ** 4, and
# on HumanEval mutants the drawn batches found fewer than the mutated and edge-case ones (benchmarks/README.md).
INPUTS_PER_BATCH = 24
MAX_INPUT_CHARS = 400
CALLERS = ("candidate",)  # the name HumanEval-style drivers bind the entry point to
_STR_ALPHABET = "aAzZ09 _-.,;:/\\'\"()[]{}<>@#!?\t\n"
ARGUMENT_MOVES = 0.2  # the share of draws that reorder or repeat arguments instead of mutating them


def call_sites(drivers: dict[str, str], entry: str, description: str = "") -> list[tuple[Any, ...]]:
    """The literal argument tuples of every call to ``entry`` (or ``solution.entry``) in the drivers,
    and in the description's doctest examples (``>>> entry(...)`` lines)."""
    found: list[tuple[Any, ...]] = []
    examples = "\n".join(line.strip()[4:] for line in description.splitlines() if line.strip().startswith(">>> "))
    for source in [*drivers.values(), examples]:
        try:
            tree = parse(source)
        except PARSE_ERRORS:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or node.keywords:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name not in (entry, *CALLERS) or any(isinstance(a, ast.Starred) for a in node.args):
                continue
            try:
                args = tuple(constant(a) for a in node.args)
            except (ValueError, RecursionError):
                continue
            if _round_trips(args):
                found.append(args)
    unique: dict[str, tuple[Any, ...]] = {}
    for args in found:
        unique.setdefault(repr(args), args)
    return list(unique.values())


def _round_trips(value: Any) -> bool:
    """``repr(value)`` is short and reads back as the same literal (so a driver can carry it as source)."""
    text = repr(value)
    if len(text) > MAX_INPUT_CHARS:
        return False
    try:
        tree = parse(text)
        expr = tree.body[0] if len(tree.body) == 1 else None
        return isinstance(expr, ast.Expr) and repr(ast.literal_eval(expr.value)) == text
    except PARSE_ERRORS:
        return False


def mutate(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value of the same type, near ``value``."""
    kind = type(value)
    if kind is bool:
        return not value
    if kind is int:
        return rng.choice([value + 1, value - 1, -value, 0, 1, -1, value * 2, value // 2,
                           value + rng.randint(-10, 10), abs(value) + rng.randint(1, 50)])
    if kind is float:
        return rng.choice([value + 1.0, value - 1.0, -value, 0.0, value * 2, value / 2, value + 0.5,
                           round(value, 1), value + rng.uniform(-10.0, 10.0)])
    if kind is str:
        return _mutate_str(value, rng)
    if kind in (list, tuple):
        return kind(_mutate_items(list(value), rng, depth))
    if kind is dict:
        items = list(value.items())
        if items and rng.random() < 0.5:
            key, old = rng.choice(items)
            return {**value, key: mutate(old, rng, depth + 1)}
        return dict(items[:-1]) if items else value
    if kind in (set, frozenset):
        items = sorted(value, key=repr)
        return kind(_mutate_items(items, rng, depth))
    return value


def _mutate_str(value: str, rng: random.Random) -> str:
    if rng.random() < 0.5 and any(c.isalnum() for c in value):
        return reshape(value, rng)
    where = rng.randrange(len(value) + 1)
    char = rng.choice(value + _STR_ALPHABET) if value else rng.choice(_STR_ALPHABET)
    return str(rng.choice([
        "", value + value, value[::-1], value[1:], value[:-1], value.upper(), value.lower(), value.strip(),
        " " + value, value[:where] + char + value[where:], value[:where] + char + value[where + 1:],
    ]))


def reshape(value: str, rng: random.Random) -> str:
    """``value`` with its format kept: the same runs of digits, letters, spaces and separators, one changed. A
    number becomes a neighbour (its leading zeros kept), the first number gains or loses its sign, two numbers
    or two words trade places (day and month), the words' order is reversed, one letter changes, or a word's case
    flips: inputs the task's own seeds make valid, where arbitrary text is mostly refused (EvalPlus keeps its
    mutants valid likewise)."""
    runs = FORMAT_RUNS.findall(value)
    numbers = [i for i, run in enumerate(runs) if run.isdigit()]
    words = [i for i, run in enumerate(runs) if run.isascii() and run.isalpha()]
    moves = (["number", "number", "sign"] if numbers else []) + (["word", "case"] if words else [])
    moves += ["swap numbers"] if len(numbers) > 1 else []
    moves += ["swap words"] if len(words) > 1 else []
    moves += ["reverse words"] if len(words) > 2 else []
    if not moves:
        return value
    move = rng.choice(moves)
    if move == "number":
        i = rng.choice(numbers)
        old = int(runs[i])
        new = str(rng.choice([old + 1, max(old - 1, 0), 0, old * 10, old // 10, 10 ** len(runs[i]) - 1,
                              old + rng.randint(2, 30)]))
        runs[i] = new.zfill(len(runs[i])) if runs[i].startswith("0") else new
    elif move == "sign":
        first = numbers[0]
        if first > 0 and runs[first - 1] == "-":
            runs[first - 1] = ""
        else:
            runs[first] = "-" + runs[first]
    elif move == "reverse words":  # every order property at once: a tie broken by position shows
        for i, word in zip(words, reversed([runs[j] for j in words]), strict=True):
            runs[i] = word
    elif move in ("swap numbers", "swap words"):
        i, j = rng.sample(numbers if move == "swap numbers" else words, 2)
        runs[i], runs[j] = runs[j], runs[i]
    elif move == "word":
        i = rng.choice(words)
        k = rng.randrange(len(runs[i]))
        letters = string.ascii_lowercase if runs[i][k].islower() else string.ascii_uppercase
        runs[i] = runs[i][:k] + rng.choice(letters) + runs[i][k + 1:]
    else:
        i = rng.choice(words)
        runs[i] = runs[i].swapcase()
    return "".join(runs)


def _move_arguments(args: list[Any], rng: random.Random) -> bool:
    """Swap two arguments of one type, or pass one of them twice; False when no two arguments share a type."""
    pairs = [(i, j) for i in range(len(args)) for j in range(len(args))
             if i != j and type(args[i]) is type(args[j]) and args[i] != args[j]]
    if not pairs:
        return False
    i, j = rng.choice(pairs)
    if rng.random() < 0.5:
        args[i], args[j] = args[j], args[i]
    else:
        args[j] = args[i]
    return True


def _mutate_items(items: list[Any], rng: random.Random, depth: int) -> list[Any]:
    if not items:
        return items
    choice = rng.randrange(8 if depth < 3 else 7)
    if choice == 0:
        return []
    if choice == 1:
        return items[:-1]
    if choice == 2:
        return items[1:]
    if choice == 3:
        return items[::-1]
    if choice == 4:
        shuffled = list(items)
        rng.shuffle(shuffled)
        return shuffled
    if choice == 5:
        pick = rng.randrange(len(items))
        return items[:pick + 1] + items[pick:]
    if choice == 6:
        return [*items, mutate(rng.choice(items), rng, depth + 1)]
    pick = rng.randrange(len(items))
    return [*items[:pick], mutate(items[pick], rng, depth + 1), *items[pick + 1:]]


def mutated_inputs(sites: list[tuple[Any, ...]], batch: int, count: int, tag: str) -> list[str]:
    """``count`` new argument tuples (as literal source), seeded by ``tag`` and ``batch``: same inputs, same run."""
    rng = random.Random(f"{tag}:{batch}")
    seen = {repr(s) for s in sites}
    found: list[str] = []
    for _ in range(count * 20):
        if len(found) >= count:
            break
        args = list(rng.choice(sites))
        if not args:
            break
        if rng.random() >= ARGUMENT_MOVES or not _move_arguments(args, rng):
            for _ in range(1 + min(batch, 2)):
                pick = rng.randrange(len(args))
                args[pick] = mutate(args[pick], rng)
        text = repr(tuple(args))
        if text not in seen and _round_trips(tuple(args)):
            seen.add(text)
            found.append(text)
    return found


def driver(entry: str, inputs: list[str]) -> dict[str, str]:
    """One observation driver per input, each its own test so one crash or hang costs only itself."""
    lines = ["from observe import call", "import solution", ""]
    for index, text in enumerate(inputs):
        lines += [f"def test_{index}():", f"    call(getattr(solution, {entry!r}), *{text})", ""]
    return {"test_lm_differential.py": "\n".join(lines)}


class DifferentialFamily(Family):
    name = "differential"
    cwe = "CWE-684"
    severity = "medium"
    rationale = ("medium: on inputs of the kinds the task's own tests use, the code answers differently from the "
                 "reference (value, type or exception) or fails where the reference answers; integrity impact, "
                 "no special access needed")
    probe = PROBE

    def variants(self, ctx: AttackContext, entry: str) -> list[Variant]:
        task = ctx.task
        if entry != task.entry_point or entry not in ctx.features.functions or not task.reference:
            return []
        if not task.differential:
            return []
        sites = call_sites(task.hidden_tests, entry, task.description)
        if not sites:
            return []
        tag = hashlib.sha256((task.id + "\0" + task.hidden_sha256).encode()).hexdigest()
        batches = [(f"mutants-{b}", "mutated", 0.55 - 0.05 * b, mutated_inputs(sites, b, INPUTS_PER_BATCH, tag))
                   for b in range(BATCHES)]
        edges = [repr(args) for args in edge_inputs(sites) if _round_trips(args)]
        batches += [(f"edges-{b}", "edge-case", 0.53 - 0.05 * b, edges[b * INPUTS_PER_BATCH:(b + 1) * INPUTS_PER_BATCH])
                    for b in range(EDGE_BATCHES)]
        if DRAWN_BATCHES:
            from logomesh.red.attacks.drawn import drawn_inputs  # Hypothesis: imported only when a task has sites

            drawn = [repr(args) for args in drawn_inputs(sites, DRAWN_BATCHES * INPUTS_PER_BATCH, int(tag[:16], 16))
                     if _round_trips(args)]
            batches += [(f"drawn-{b}", "property-based", 0.42 - 0.05 * b,
                         drawn[b * INPUTS_PER_BATCH:(b + 1) * INPUTS_PER_BATCH]) for b in range(DRAWN_BATCHES)]
        if BRANCH_BATCHES:
            from logomesh.red.attacks.branches import branch_inputs

            valued = [repr(args) for args in branch_inputs([task.reference, ctx.source], sites,
                                                           BRANCH_BATCHES * INPUTS_PER_BATCH, int(tag[16:32], 16))
                      if _round_trips(args)]
            batches += [(f"branches-{b}", "branch-value", 0.51 - 0.05 * b,
                         valued[b * INPUTS_PER_BATCH:(b + 1) * INPUTS_PER_BATCH]) for b in range(BRANCH_BATCHES)]
        found = []
        for name, kind, prior, inputs in batches:
            if inputs:
                args: dict[str, Any] = {"entry": entry, "inputs": inputs}
                if task.contract.stated or task.contract.inferred:
                    args["contract"] = task.contract.as_args()
                found.append(Variant(
                    id=name,
                    spec=ProbeSpec(PROBE, args, timeout_s=4.0),
                    reproducer=f"{len(inputs)} {kind} inputs to {entry}, compared with the reference",
                    prior=prior,
                    confirm_trials=2,
                    severity=task.contract_severity,
                ))
        return found

    def judge(self, variant: Variant, trial: Trial) -> Verdict:
        diverged = trial.result.get("diverged") if trial.status == "ok" else None
        if diverged:
            inside = [d for d in diverged if not d.get("outside")]
            first = (inside or diverged)[0]
            return Verdict(True, 1.0, f"{variant.spec.args['entry']}({_arguments(first['input'])}): {first['got']}, "
                                      f"the reference {first['want']}{_outside_note(first)}")
        checked = int(trial.result.get("checked") or 0)
        return Verdict(False, 0.1 if checked else 0.0)

    def shrink(self, variant: Variant, trial: Trial) -> Variant:
        """Keep only the shortest diverging input: the minimal reproducer."""
        diverged = trial.result.get("diverged") or []
        if not diverged:
            return variant
        inside = [d for d in diverged if not d.get("outside")]
        smallest = min(inside or diverged, key=lambda d: (len(d["input"]), d["input"]))
        entry = variant.spec.args["entry"]
        args = {**variant.spec.args, "inputs": [smallest["input"]]}
        spec = ProbeSpec(PROBE, args, variant.spec.trials, variant.spec.timeout_s)
        shrunk = replace(variant, spec=spec, reproducer=f"{entry}({_arguments(smallest['input'])})", control=None)
        return shrunk if inside else replace(shrunk, severity="low", penalised=False)


class DifferentialRunner:
    """Runs differential probes: the submission and the reference in separate sandboxed processes."""

    def __init__(self, box: Sandbox, source: str, reference: str) -> None:
        self.box = box
        self.source = source
        self.reference = reference
        self._lock = threading.Lock()
        self._reference_runs: dict[str, ObservedSuite] = {}
        self._contract_runs: dict[str, list[bool]] = {}
        self._outside_runs: dict[str, list[str]] = {}

    def run(self, spec: ProbeSpec, seed: int, setting: Setting | None = CLASSIC) -> ProbeRun:
        """The submission (its process started in ``setting``) against the reference, on the spec's inputs."""
        entry = str(spec.args["entry"])
        inputs = [str(i) for i in spec.args["inputs"]]
        tests = driver(entry, inputs)
        want = self._reference_run(tests, spec.timeout_s)
        if want.error is not None and not any(t.status == "observed" for t in want.tests):
            return ProbeRun((), harness_error=f"the reference did not run: {want.error}")
        contract = Contract.from_args(spec.args["contract"]) if "contract" in spec.args else None
        inside = self._admitted(entry, contract, inputs) if contract is not None else None
        holds = self._holds(entry, contract) if contract is not None and contract.holds else None
        outside = self._outside(entry, contract) if contract is not None and contract.inferred else None
        trials = []
        interfered: list[str] = []  # what the code did to the driver, seen by the server (a finding)
        for _ in range(max(1, spec.trials)):
            got = self.box.observe_suite(self.source, tests, timeout_s=spec.timeout_s, setting=setting)
            interfered.extend(got.tamper_reasons)
            trials.append(Trial("ok", compare(got, want, inputs, contract, inside, holds, outside).to_json()))
        return ProbeRun(tuple(trials), introspection=tuple(dict.fromkeys(interfered)))

    def _outside(self, entry: str, contract: Contract) -> Callable[[list[str]], list[str]]:
        """The inferred clause each diverging input breaks, decided in the box (cached: every trial asks again)."""
        def decide(inputs: list[str]) -> list[str]:
            key = hashlib.sha256(repr((entry, contract.inferred, inputs)).encode()).hexdigest()
            with self._lock:
                cached = self._outside_runs.get(key)
            if cached is None:
                cached = broken(self.box, self.reference, entry, contract.inferred, inputs)
                with self._lock:
                    self._outside_runs[key] = cached
            return cached

        return decide

    def _admitted(self, entry: str, contract: Contract, inputs: list[str]) -> list[bool]:
        """The precondition on each input, decided in a box process that never ran the submission (cached)."""
        key = "requires\0" + hashlib.sha256(repr((entry, contract.requires, inputs)).encode()).hexdigest()
        with self._lock:
            cached = self._contract_runs.get(key)
        if cached is None:
            cached = admitted(self.box, self.reference, entry, contract, inputs)
            with self._lock:
                self._contract_runs[key] = cached
        return cached

    def _holds(self, entry: str, contract: Contract) -> Callable[[list[tuple[str, str]]], list[bool]]:
        def decide(cases: list[tuple[str, str]]) -> list[bool]:
            return evaluate(self.box, self.reference, entry, contract.holds, [(a, r) for a, r in cases])

        return decide

    def _reference_run(self, tests: dict[str, str], timeout_s: float) -> ObservedSuite:
        key = hashlib.sha256(repr(sorted(tests.items())).encode()).hexdigest()
        with self._lock:
            cached = self._reference_runs.get(key)
        if cached is None:
            cached = self.box.observe_suite(self.reference, tests, timeout_s=timeout_s)
            with self._lock:
                self._reference_runs[key] = cached
        return cached


@dataclass(frozen=True)
class Divergence:
    """One input on which the submission did not answer as the reference did, each answer described."""

    input: str  # the argument tuple's source
    got: str
    want: str
    outside: str = ""  # the clause of the inferred contract the input breaks ("" inside it)

    def to_json(self) -> dict[str, str]:
        found = {"input": self.input, "got": self.got, "want": self.want}
        return {**found, "outside": self.outside} if self.outside else found


@dataclass(frozen=True)
class Comparison:
    """What one batch's comparison found: the diverging inputs, in input order, of the ``checked`` counted."""

    diverged: tuple[Divergence, ...]
    checked: int

    def to_json(self) -> dict[str, Any]:
        """The probe trial's result, as ``judge`` and ``shrink`` read it."""
        return {"diverged": [d.to_json() for d in self.diverged], "checked": self.checked}


def compare(got: ObservedSuite, want: ObservedSuite, inputs: list[str], contract: Contract | None = None,
            inside: list[bool] | None = None, holds: Callable[[list[tuple[str, str]]], list[bool]] | None = None,
            outside: Callable[[list[str]], list[str]] | None = None) -> Comparison:
    """The inputs where the reference answered and the submission did not answer the same.

    With a task's contract: an input outside its precondition (``inside`` false) is not counted, answers
    are compared under its equivalence, and a differing answer for which ``holds`` is true is the same answer.
    ``outside`` names, for each diverging input, the clause of the inferred contract it breaks ("" for none).
    """
    reference = {t.name: t for t in want.tests}
    diverged: list[Divergence] = []
    pending: list[tuple[Divergence, str]] = []
    checked = 0
    for test in got.tests:
        expected = reference.get(test.name)
        if expected is None or expected.status != "observed" or not _returned(expected.observations):
            continue  # the reference refused this input (or could not run it): outside the contract
        if test.status != "observed" or _exhausted(test.observations):
            continue  # a hang, a crash or a resource limit: the complexity and growth families' business
        index = int(test.name.rsplit("_", 1)[1])
        if inside is not None and not inside[index]:
            continue  # outside the task's stated precondition
        checked += 1
        mine = [canonical(o) for o in test.observations]
        theirs = [canonical(o) for o in expected.observations]
        if same(mine, theirs) or (contract is not None and len(mine) == len(theirs)
                                  and all(equivalent(contract, g, w) for g, w in zip(mine, theirs, strict=True))):
            continue
        found = Divergence(inputs[index], describe(mine), describe(theirs))
        result = literal(mine[0][1]) if holds is not None and _returned(tuple(mine)) else None
        if result is not None:
            pending.append((found, result))
        else:
            diverged.append(found)
    if pending and holds is not None:
        verdicts = holds([(found.input, result) for found, result in pending])
        diverged += [found for (found, _), ok in zip(pending, verdicts, strict=True) if not ok]
        diverged.sort(key=lambda d: inputs.index(d.input))
    if outside is not None and diverged:
        broken_by = outside([d.input for d in diverged])
        diverged = [replace(d, outside=clause) for d, clause in zip(diverged, broken_by, strict=True)]
    return Comparison(tuple(diverged), checked)


def _outside_note(divergence: dict[str, Any]) -> str:
    """What a finding on an input outside the inferred contract says of it."""
    clause = divergence.get("outside")
    return (f"; differs from the reference outside the task's contract (inferred from its tests: {clause})"
            if clause else "")


def _arguments(text: str) -> str:
    """``(80,)`` -> ``80``; ``(1, 2)`` -> ``1, 2``: an argument tuple's source as a call shows it."""
    inner = text[1:-1]
    return inner[:-1] if inner.endswith(",") else inner


def _exhausted(observations: tuple[Any, ...]) -> bool:
    """The call ran into a resource limit (recursion depth, memory) rather than answering."""
    return any(isinstance(o, list) and o[:1] in (["raised"], ["ended-by"]) and o[1:] in (["RecursionError"],
               ["MemoryError"]) for o in observations)


def _returned(observations: tuple[Any, ...]) -> bool:
    return len(observations) == 1 and isinstance(observations[0], list) and observations[0][:1] == ["returned"]

