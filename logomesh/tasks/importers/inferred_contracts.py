"""A precondition inferred from a task's own test inputs, at import time (``[contract] inferred``).

Most HumanEval prompts state their input domain only in words ("a string of
space separated lowercase letters"), and the check never leaves it. Written
differently, a correct solution may answer differently from the canonical one
just outside that domain (a leading space, ``n = 0``). The differential family
reports such a divergence at low, unpenalised, when the input breaks a clause
inferred here; inside the stated and inferred contract it stays medium.

The seeds are the literal arguments of the hidden drivers' calls and of the
prompt's ``>>>`` examples (``differential.call_sites``). Per parameter, only
classes, never exact ranges, so that inputs near the seeds stay inside: the
type; for numbers the sign class (``> 0``, ``>= 0``, ``< 0``, ``<= 0``); for
strings the characters seen (ASCII lower and upper case letters, digits, each
other character by itself), non-emptiness, no surrounding whitespace, no
doubled separator, the one format every seed shares (``'5 apples and 6
oranges'``: runs of digits and of letters free, the rest fixed) and balanced
brackets where the seeds are groups of them; for lists and tuples
non-emptiness and the elements' type. A literal includes arithmetic over
literals (``3 * 19``, ``syntax.constant``).
A parameter some call passes a non-literal argument (a loop variable, a random
value) gets no clause: its inputs are unknown here.

Every clause is checked against every seed before it is kept (``admits``),
so the contract admits every literal input of the task's own tests. The
clauses are our own expressions over literal data, evaluated on the host with
a handful of builtins; once written into ``task.toml`` (where a person may
edit it) the expression is task code and runs only in the sandbox.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from logomesh.syntax import PARSE_ERRORS, parse
from logomesh.tasks.contract_check import entry_def
from logomesh.tasks.contracts import FORMAT_RUNS
from logomesh.tasks.importers.check_drivers import is_literal

CALLERS = ("candidate",)  # the name HumanEval-style drivers bind the entry point to
SEPARATORS = " ,;|"  # doubled, these usually mean an empty field: a separator never seen doubled stays single
_BUILTINS: dict[str, Any] = {"all": all, "isinstance": isinstance, "len": len, "int": int, "float": float,
                             "str": str, "list": list, "tuple": tuple, "dict": dict, "bool": bool, "range": range}
BRACKETS = ("()", "[]", "{}", "<>")
_TYPES: tuple[tuple[type, str], ...] = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"),
                                        (list, "list"), (tuple, "tuple"), (dict, "dict"))


def signature(reference: str, entry: str) -> list[str] | None:
    """The entry point's plain positional parameters; ``None`` when it takes ``*args``, keywords only or defaults
    (a call may then bind its arguments otherwise than by position)."""
    node = entry_def(reference, entry)
    if node is None:
        return None
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return None
    return [a.arg for a in args.args]


def unseen_positions(drivers: dict[str, str], entry: str, arity: int) -> set[int]:
    """The argument positions some call to the entry point fills with a non-literal (all, for ``*args`` or a
    keyword): the drivers' inputs there are not known before they run."""
    unseen: set[int] = set()
    for source in drivers.values():
        try:
            tree = parse(source)
        except PARSE_ERRORS:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name not in (entry, *CALLERS):
                continue
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                return set(range(arity))
            unseen |= {i for i, a in enumerate(node.args) if not is_literal(a)}
    return unseen



def _type_name(values: Sequence[Any]) -> str | None:
    """The one type the values share, as ``isinstance`` takes it (``int`` with ``bool``; ``float`` with ``int``,
    as a type hint reads it: an int is an input near a float)."""
    names = set()
    for value in values:
        name = next((n for t, n in _TYPES if type(value) is t), None)
        if name is None:
            return None
        names.add(name)
    if names <= {"bool"}:
        return "bool" if names else None
    if names <= {"int", "bool"}:
        return "int"
    if names <= {"int", "float", "bool"}:
        return "(int, float)"
    return names.pop() if len(names) == 1 else None


def _sign(values: Sequence[float]) -> str | None:
    """The sign class every value falls in (``> 0``, ``>= 0``, ``< 0``, ``<= 0``); ``None`` for mixed signs."""
    if not values:
        return None
    if all(v > 0 for v in values):
        return "> 0"
    if all(v >= 0 for v in values):
        return ">= 0"
    if all(v < 0 for v in values):
        return "< 0"
    if all(v <= 0 for v in values):
        return "<= 0"
    return None


def _characters(name: str, texts: Sequence[str], var: str) -> str | None:
    """``all(<var> is a character seen ... for <var> in <name>)``, by classes; ``None`` when no text has any."""
    seen = set("".join(texts))
    if not seen:
        return None
    tests = []
    for low, high in (("a", "z"), ("A", "Z"), ("0", "9")):
        if any(low <= c <= high for c in seen):
            tests.append(f"{low!r} <= {var} <= {high!r}")
            seen = {c for c in seen if not low <= c <= high}
    if seen:
        tests.append(f"{var} in {''.join(sorted(seen))!r}")
    return f"all({' or '.join(tests)} for {var} in {name})"


def string_clauses(name: str, texts: Sequence[str], var: str = "ch") -> list[str]:
    """What every seed string shares: its characters, non-emptiness, no surrounding whitespace, single separators."""
    clauses = []
    characters = _characters(name, texts, var)
    if characters:
        clauses.append(characters)
    if all(texts):
        clauses.append(f"len({name}) > 0")
    lead = any(t[:1].isspace() for t in texts)
    trail = any(t[-1:].isspace() for t in texts)
    if not lead and not trail:
        clauses.append(f"{name} == {name}.strip()")
    elif not lead:
        clauses.append(f"{name} == {name}.lstrip()")
    elif not trail:
        clauses.append(f"{name} == {name}.rstrip()")
    for sep in SEPARATORS:
        if any(sep in t for t in texts) and not any(sep * 2 in t for t in texts):
            clauses.append(f"{sep * 2!r} not in {name}")
    return clauses + format_clauses(name, texts) + balance_clauses(name, texts, var)


def _shape(text: str) -> tuple[str, ...]:
    """``text``'s runs with each run of digits or of letters standing for any such run (``9``, ``a``)."""
    return tuple("9" if run.isdigit() else "a" if run.isascii() and run.isalpha() else run
                 for run in FORMAT_RUNS.findall(text))


def _literal(text: str) -> str:
    """``text`` as a regular expression matching itself, escaping only what is special (``re.escape`` also
    escapes spaces and dashes, which a person reading the contract would have to unpick)."""
    return "".join("\\" + c if c in ".^$*+?{}[]\\|()" else c for c in text)


KEYWORD_SEEDS = 3  # a word every one of at least this many seeds has in one place is the format's, not data


def format_clauses(name: str, texts: Sequence[str]) -> list[str]:
    """``re.fullmatch(<format>, <name>)`` when every seed has one format with a separator in it (``'5 apples and 6
    oranges'``, ``'1/5'``): the task's data has a shape, and text of another shape is outside it. Runs of digits
    are free, and so are runs of letters, but for a word every seed has in the same place (``and``, when there
    are at least ``KEYWORD_SEEDS`` seeds). Not for one seed, nor for single words or numbers, whose characters
    the other clauses already describe."""
    shapes = {_shape(t) for t in texts}
    if len(texts) < 2 or len(shapes) != 1:
        return []
    (shape,) = shapes
    if len(shape) < 2 or all(run in ("9", "a") for run in shape):
        return []
    runs = [FORMAT_RUNS.findall(t) for t in texts]
    parts = []
    for index, kind in enumerate(shape):
        words = {r[index] for r in runs}
        if kind == "a" and len(words) == 1 and len(texts) >= KEYWORD_SEEDS:
            parts.append(_literal(words.pop()))
        else:
            parts.append({"9": "[0-9]+", "a": "[A-Za-z]+"}.get(kind) or _literal(kind))
    return [f"re.fullmatch({''.join(parts)!r}, {name}) is not None"]


def balance_clauses(name: str, texts: Sequence[str], var: str) -> list[str]:
    """Balanced brackets, as a whole or in each space-separated group, when every seed of brackets (and spaces)
    only is: ``'(()()) ((())) () ((())()())'``. A text of brackets the task calls groups is outside it."""
    seen = set("".join(texts)) - {" "}
    pair = next((b for b in BRACKETS if seen == set(b)), None)
    if pair is None:
        return []
    opening, closing = pair[0], pair[1]
    clauses = []
    for subject, parts in ((name, [[t] for t in texts]), (var, [t.split() for t in texts])):
        if all(_balanced(p, opening, closing) for group in parts for p in group):
            balanced = (f"all({subject}[:i].count({opening!r}) >= {subject}[:i].count({closing!r}) "
                        f"for i in range(len({subject}))) and {subject}.count({opening!r}) == "
                        f"{subject}.count({closing!r})")
            clauses.append(balanced if subject == name else f"all({balanced} for {var} in {name}.split())")
    return clauses


def _balanced(text: str, opening: str, closing: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == opening) - (char == closing)
        if depth < 0:
            return False
    return depth == 0


def sequence_clauses(name: str, items: Sequence[Sequence[Any]], var: str = "item") -> list[str]:
    """What every seed list (or tuple) shares: non-emptiness and its elements' type.

    Not the elements' sign: one element nudged below zero is an input near the tests (on HumanEval mutants a
    sign clause over elements let wrong code of ``find_closest_elements`` pass with only a low note)."""
    clauses = [f"len({name}) > 0"] if all(len(i) > 0 for i in items) else []
    elements = [e for i in items for e in i]
    kind = _type_name(elements) if elements else None
    if kind and kind != "bool":
        clauses.append(f"all(isinstance({var}, {kind}) for {var} in {name})")
    return clauses


def parameter_clauses(name: str, values: Sequence[Any], taken: set[str]) -> list[str]:
    """The clauses over one parameter, from the values the seeds pass it."""
    kind = _type_name(values)
    if kind is None:
        return []
    clauses = [f"isinstance({name}, {kind})"]
    if kind in ("int", "(int, float)", "float"):
        sign = _sign(values)
        if sign:
            clauses.append(f"{name} {sign}")
    elif kind == "str":
        clauses += string_clauses(name, values, _fresh("ch", taken))
    elif kind in ("list", "tuple"):
        clauses += sequence_clauses(name, values, _fresh("item", taken))
    return clauses


def _fresh(var: str, taken: set[str]) -> str:
    while var in taken:
        var += "_"
    return var


def admits(clause: str, params: Sequence[str], seed: tuple[Any, ...]) -> bool:
    """Whether ``clause`` (one of ours, over literal data) holds of one seed; raising is not holding."""
    try:
        # Our clause, over literal data; the parameters are globals, as the checker's lambda closes over them, so
        # that a comprehension's body sees them too.
        scope = {"__builtins__": _BUILTINS, "re": re, **dict(zip(params, seed, strict=True))}
        return bool(eval(compile(clause, "[contract] inferred", "eval"), scope))
    except Exception:  # a clause undecidable on a seed is dropped
        return False


def infer(params: Sequence[str], seeds: Sequence[tuple[Any, ...]], unseen: Collection[int] = (),
          reserved: Collection[str] = ()) -> list[str]:
    """The clauses every seed satisfies, parameter by parameter, in order.

    ``unseen``: positions with inputs not among the seeds (no clause); ``reserved``: names the expression must
    rely on being shadowed (the reference's top-level names, in scope where it runs: one that shadows a builtin
    the clauses call stops the inference)."""
    seeds = [s for s in seeds if len(s) == len(params)]
    if not seeds or (set(params) | set(reserved)) & set(_BUILTINS) or "re" in params:
        return []
    taken = set(params)
    clauses: list[str] = []
    for index, name in enumerate(params):
        if index in unseen:
            continue
        candidates = parameter_clauses(name, [s[index] for s in seeds], taken)
        clauses += [c for c in candidates if all(admits(c, params, s) for s in seeds)]
    return clauses


def top_level_names(reference: str) -> set[str]:
    """The names a module binds at top level (``from solution import *`` brings them into the contract's scope)."""
    try:
        tree = parse(reference)
    except PARSE_ERRORS:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def inferred_contract(reference: str, entry: str, drivers: dict[str, str], description: str,
                      sites: Callable[[dict[str, str], str, str], list[tuple[Any, ...]]]) -> str:
    """The inferred precondition as one expression (``""`` when nothing can be inferred).

    ``sites`` extracts the literal argument tuples (``differential.call_sites``), passed in so the importer
    does not tie the task layer to the red agent's."""
    params = signature(reference, entry)
    if not params:
        return ""
    seeds = sites(drivers, entry, description)
    unseen = unseen_positions(drivers, entry, len(params))
    clauses = infer(params, seeds, unseen, top_level_names(reference) - {entry})
    return " and ".join(clauses)
