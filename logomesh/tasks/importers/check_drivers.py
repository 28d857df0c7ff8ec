"""Turn an assert-based ``check(candidate)`` into observation drivers, by an AST transform.

Benchmarks such as HumanEval judge a solution with ``check(candidate)``: asserts
comparing ``candidate(...)`` with literal expected values. Those values must never
enter the sandbox (a submission could read the driver file and echo them), so:

* ``candidate`` is bound to the entry point through a wrapper that records, with
  ``observe.call``, what every call returned or raised; the host compares the
  record with the reference solution's, as for every hidden driver;
* each ``assert E[, msg]`` becomes expression statements evaluating only the
  outermost ``candidate(...)`` calls in ``E``, in evaluation order (nothing if
  there are none), so the expected side of every comparison disappears;
* statements that became dead are dropped (assignments and imports whose names
  are never read, loops and branches left empty), so an expected value computed
  into a variable goes too wherever nothing else needs it;
* every top-level statement that calls the candidate becomes its own test
  function (more granular pass rates), preceded by the setup statements before it;
* ``random`` inside the check is replaced by the driver's own generator, seeded
  per test, so inputs are deterministic and a submission drawing from ``random``
  cannot shift them.

What equality with the reference cannot express is reported (``looser``): a
check that accepted any root, any order or a tolerance accepts more answers
than the reference's exact observations do.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from logomesh.syntax import constant, parse

SEED = 0
_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp)
_EQUALITY = (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)
_WRAPPER = "candidate"  # the driver's name for the observed entry point
_RESERVED = {"solution", "call", "_random", "_Random", "_seeded", _WRAPPER}


class CheckError(ValueError):
    """The check cannot be turned into drivers; the message says why."""


@dataclass(frozen=True)
class Drivers:
    source: str  # one driver module (``from observe import call``; ``import solution``)
    tests: int  # test functions in it
    expected_names: tuple[str, ...]  # variables an assert compared with that the drivers still bind
    literal_expected: tuple[str, ...]  # of those, the ones bound to literal data
    looser: tuple[str, ...]  # how the check accepted answers that differ from the reference's


def _is_call_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _calls_in(node: ast.AST, name: str) -> bool:
    return any(_is_call_of(n, name) for n in ast.walk(node))


def outer_calls(node: ast.AST, name: str) -> list[ast.expr]:
    """The outermost calls of ``name`` in ``node``, in evaluation order.

    A comprehension that calls it is kept whole (its loop variables live inside it); a generator
    expression becomes a list comprehension, so it is evaluated; a lambda is never called here.
    """
    if _is_call_of(node, name):
        return [node]  # type: ignore[list-item]
    if isinstance(node, ast.Lambda):
        return []
    if isinstance(node, ast.GeneratorExp):
        return [ast.ListComp(elt=node.elt, generators=node.generators)] if _calls_in(node, name) else []
    if isinstance(node, _SCOPES):
        return [node] if _calls_in(node, name) else []
    found: list[ast.expr] = []
    for child in ast.iter_child_nodes(node):
        found += outer_calls(child, name)
    return found


def _names(node: ast.AST | Iterable[ast.AST], ctx: type[ast.expr_context]) -> set[str]:
    nodes = [node] if isinstance(node, ast.AST) else list(node)
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _bound_by_import(stmt: ast.Import | ast.ImportFrom) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in stmt.names}


def _seeded(targets: Sequence[str], attributes: Sequence[str], at: ast.stmt) -> ast.stmt:
    """``target = _seeded()`` or ``a, b = _seeded("a", "b")``: the driver's generator stands in for ``random``."""
    call = ast.Call(func=ast.Name("_seeded", ast.Load()), args=[ast.Constant(a) for a in attributes], keywords=[])
    if attributes:
        target: ast.expr = ast.Tuple([ast.Name(t, ast.Store()) for t in targets], ast.Store())
    else:
        target = ast.Name(targets[0], ast.Store())
    return ast.copy_location(ast.Assign(targets=[target], value=call, lineno=at.lineno), at)


def _rewrite_import(stmt: ast.Import | ast.ImportFrom) -> list[ast.stmt]:
    if isinstance(stmt, ast.ImportFrom):
        if stmt.module != "random" or stmt.level:
            return [stmt]
        if any(a.name == "*" for a in stmt.names):
            raise CheckError("'from random import *' in the check cannot be seeded")
        return [_seeded([a.asname or a.name for a in stmt.names], [a.name for a in stmt.names], stmt)]
    kept = [a for a in stmt.names if a.name != "random"]
    out: list[ast.stmt] = [_seeded([a.asname or a.name], [], stmt) for a in stmt.names if a.name == "random"]
    return ([ast.copy_location(ast.Import(names=kept), stmt)] if kept else []) + out


def transform(stmt: ast.stmt, name: str) -> list[ast.stmt]:
    """One statement of the check, with asserts replaced by the candidate calls they made."""
    if isinstance(stmt, ast.Assert):
        return [ast.copy_location(ast.Expr(call), stmt) for call in outer_calls(stmt.test, name)]
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return _rewrite_import(stmt)
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt]  # a helper the check defines: kept as written
    for field in ("body", "orelse", "finalbody"):
        body = getattr(stmt, field, None)
        if isinstance(body, list):
            done = [s for child in body for s in transform(child, name)]
            setattr(stmt, field, _block(done, keep_empty=field != "body"))
    for handler in getattr(stmt, "handlers", []):
        handler.body = _block([s for child in handler.body for s in transform(child, name)])
    return [stmt]


def _block(body: list[ast.stmt], keep_empty: bool = False) -> list[ast.stmt]:
    if body or keep_empty:
        return body
    return [ast.Pass()]


def _empty(body: Sequence[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) for s in body)


def _prune(body: list[ast.stmt], reads: set[str], name: str) -> list[ast.stmt]:
    """``body`` without the statements whose effect nothing reads (one pass; ``prune`` repeats it)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            plain = all(isinstance(n, ast.Name | ast.Tuple | ast.List | ast.Starred) for n in targets)
            stored = _names(targets, ast.Store)
            if plain and stored and not stored & reads and stmt.value is not None:
                out += [ast.copy_location(ast.Expr(c), stmt) for c in outer_calls(stmt.value, name)]
                continue
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            if not _bound_by_import(stmt) & reads:
                continue
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name | ast.Constant):
            continue  # a bare name or string: no effect
        elif isinstance(stmt, ast.For | ast.While | ast.If):
            header = stmt.iter if isinstance(stmt, ast.For) else stmt.test
            stmt.body = _block(_prune(stmt.body, reads, name))
            stmt.orelse = [s for s in _prune(stmt.orelse, reads, name) if not isinstance(s, ast.Pass)]
            if _empty(stmt.body) and not stmt.orelse and not _calls_in(header, name):
                continue
        elif isinstance(stmt, ast.With | ast.Try):
            stmt.body = _block(_prune(stmt.body, reads, name))
        out.append(stmt)
    return out


def prune(body: list[ast.stmt], name: str) -> list[ast.stmt]:
    """Drop dead statements until none is left: a name counts as read if any statement loads it."""
    while True:
        reads = _names(body, ast.Load) | {n.id for s in body for n in ast.walk(s)
                                           if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
        pruned = _prune(body, reads, name)
        if ast.dump(ast.Module(pruned, [])) == ast.dump(ast.Module(body, [])):
            return pruned
        body = pruned


def split(check: ast.FunctionDef, name: str) -> list[list[ast.stmt]]:
    """One test body per top-level statement that calls the candidate, with the setup it needs."""
    parts = [transform(copy.deepcopy(stmt), name) for stmt in check.body]
    calls = [any(_calls_in(s, name) for s in part) for part in parts]
    tests: list[list[ast.stmt]] = []
    for i, part in enumerate(parts):
        if not calls[i]:
            continue
        later_reads = _names(part, ast.Load)
        chosen: list[list[ast.stmt]] = []
        for j in range(i - 1, -1, -1):  # backwards: a statement is needed if something after it reads what it binds
            if not calls[j] or _names(parts[j], ast.Store) & later_reads:
                chosen.insert(0, parts[j])
                later_reads |= _names(parts[j], ast.Load)
        body = prune([parse(ast.unparse(s)).body[0] for p in [*chosen, part] for s in p], name)
        if any(_calls_in(s, name) for s in body):
            tests.append(body)
    return tests


def _expected_names(check: ast.FunctionDef, name: str) -> set[str]:
    """Local variables read on the expected side of an assert (outside every candidate call), not inputs."""
    local = _names(check.body, ast.Store)
    found: set[str] = set()
    inputs: set[str] = set()
    for node in ast.walk(check):
        if isinstance(node, ast.Assert):
            calls = outer_calls(node.test, name)
            inside = {id(n) for c in calls for n in ast.walk(c)}
            found |= {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name) and id(n) not in inside}
        if _is_call_of(node, name):
            inputs |= _names(node, ast.Load)
    return (found & local) - inputs - {name}


def is_literal(node: ast.expr) -> bool:
    """Whether ``node`` spells a value without running anything (``syntax.constant``: a literal, ``3 * 19``)."""
    try:
        constant(node)
    except (ValueError, RecursionError):
        return False
    return True


def _literal_bindings(tests: Sequence[Sequence[ast.stmt]]) -> set[str]:
    bound: set[str] = set()
    for body in tests:
        for node in (n for s in body for n in ast.walk(s)):
            if isinstance(node, ast.Assign) and is_literal(node.value):
                bound |= _names(node.targets, ast.Store)
            elif isinstance(node, ast.For) and is_literal(node.iter):
                bound |= _names(node.target, ast.Store)
    return bound


def looser(check: ast.FunctionDef, name: str) -> tuple[str, ...]:
    """How ``check`` accepts answers that exact equality with the reference's observations rejects.

    ``truthiness``: ``assert candidate(x)`` takes any true value; ``normalised``: the result is
    compared after a function of it (``tuple(...)``, ``sorted(...)``); ``tolerance``: compared
    otherwise than by equality (``abs(candidate(x) - y) < eps``); ``property``: a property of a
    stored result is checked (``poly(xs, root)`` near 0: any root will do).
    """
    kinds: set[str] = set()
    results = {t for n in ast.walk(check) if isinstance(n, ast.Assign) and _calls_in(n.value, name)
               for t in _names(n.targets, ast.Store)}

    def is_result(node: ast.AST) -> bool:
        return _is_call_of(node, name) or (isinstance(node, ast.Name) and node.id in results)

    def has_result(node: ast.AST) -> bool:
        return any(is_result(n) for n in ast.walk(node))

    for node in ast.walk(check):
        if not isinstance(node, ast.Assert):
            continue
        test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) \
            else node.test
        if is_result(test):
            kinds.add("truthiness")
        elif not has_result(test):
            continue
        elif isinstance(test, ast.Compare) and all(isinstance(op, _EQUALITY) for op in test.ops):
            if any(has_result(o) and not is_result(o) for o in [test.left, *test.comparators]):
                kinds.add("normalised")
        elif not _calls_in(test, name):
            kinds.add("property")
        else:
            kinds.add("tolerance")
    return tuple(sorted(kinds))


def find_check(test_source: str) -> tuple[ast.Module, ast.FunctionDef, str]:
    """The test module, its ``check`` function and the name of its candidate parameter."""
    try:
        module = parse(test_source)
    except SyntaxError as exc:
        raise CheckError(f"the check does not parse: {exc.msg} (line {exc.lineno})") from None
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if len(checks) != 1 or len(checks[0].args.args) != 1:
        raise CheckError("expected one function 'check(candidate)'")
    return module, checks[0], checks[0].args.args[0].arg


def helpers(prompt: str, entry_point: str) -> list[ast.stmt]:
    """The prompt's complete top-level code other than the entry point: imports, helper functions, constants."""
    try:
        module = parse(prompt + "\n    pass\n")  # the prompt ends with the entry point's docstring
    except SyntaxError as exc:
        raise CheckError(f"the prompt does not parse: {exc.msg} (line {exc.lineno})") from None
    kept: list[ast.stmt] = []
    for stmt in module.body:
        if isinstance(stmt, ast.FunctionDef | ast.ClassDef) and stmt.name == entry_point:
            continue
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef | ast.Assign):
            kept.append(stmt)
    clash = sorted(_RESERVED & {getattr(s, "name", "") for s in kept})
    if clash:
        raise CheckError(f"the prompt defines {clash}, names the driver needs")
    return kept


_SEEDED = f'''
class _Random(_random.Random):
    """The driver's own generator: the submission cannot shift its inputs by drawing from ``random``."""

    Random = _random.Random  # ``random.Random(42)`` in a check still makes a generator


def _seeded(*names):
    """``random`` as the check imported it, seeded with {SEED} afresh in every test."""
    rng = _Random({SEED})
    return rng if not names else tuple(getattr(rng, name) for name in names)
'''


def build(test_source: str, prompt: str, entry_point: str, title: str, record_args: bool = False) -> Drivers:
    """The driver module for one check (``title`` opens its docstring).

    ``record_args``: each call's arguments are observed (``see(args)``) just before it, so that a property of
    the answer (a ``[contract]`` ``holds``) can be decided on the host's side for the inputs the reference saw.
    """
    if not entry_point.isidentifier():
        raise CheckError(f"entry point {entry_point!r} is not a Python name")
    module, check, name = find_check(test_source)
    tests = split(check, name)
    if not tests:
        raise CheckError("the check never calls the candidate")
    extra = [s for s in module.body if s is not check and not (isinstance(s, ast.Assign) and
                                                                 _names(s.targets, ast.Store) == {"METADATA"})]
    lines = [f'"""{title}', "", "Made from the problem's check(candidate): every assert became the candidate calls it",
             "made, each observed (value returned or exception raised) and compared, on the host, with",
             'the reference solution\'s. The expected values are not here."""', "",
             "import solution", "from observe import call, see" if record_args else "from observe import call", ""]
    seeded = any(isinstance(n, ast.Name) and n.id == "_seeded" for body in tests for s in body for n in ast.walk(s))
    if seeded:
        lines[-3:-3] = ["import random as _random", ""]
    for stmt in [*helpers(prompt, entry_point), *extra]:
        lines += (["", ast.unparse(stmt), ""] if isinstance(stmt, ast.FunctionDef | ast.ClassDef)
                  else [ast.unparse(stmt)])
    if seeded:
        lines.append(_SEEDED)
    lines += ["", f"def {_WRAPPER}(*args, **kwargs):",
              f'    """solution.{entry_point}, with what each call returned or raised observed."""',
              *(["    see(args)"] if record_args else []),
              f"    return call(solution.{entry_point}, *args, **kwargs)", ""]
    if name != _WRAPPER:
        lines += [f"{name} = {_WRAPPER}", ""]
    width = len(str(len(tests)))
    for i, body in enumerate(tests, 1):
        function = parse(f"def test_check_{i:0{width}d}():\n    pass\n").body[0]
        assert isinstance(function, ast.FunctionDef)
        function.body = body
        lines += ["", ast.unparse(function), ""]
    source = "\n".join(lines).rstrip() + "\n"
    parse(source)  # the transform produced valid Python
    survivors = _expected_names(check, name) & {n for body in tests for n in _names(body, ast.Store)}
    return Drivers(source=source, tests=len(tests), expected_names=tuple(sorted(survivors)),
                   literal_expected=tuple(sorted(survivors & _literal_bindings(tests))), looser=looser(check, name))
