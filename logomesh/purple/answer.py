"""Reading a language model's answer to a coding task: the module, its tests and the prose around them.

Models write what they like: fenced code blocks with prose around them (the
format the LLM purple agent asks for), a JSON object with raw newlines or
Python triple quotes inside its strings, a file name where the code should be,
no tests, an answer cut off inside its last fence, or test code appended to
the module. ``parse_answer`` reads all of these; ``AnswerProblem`` says, in
one line, why an answer holds no usable module (the text of the repair
message). The answer is never run.

Test code at the top level of the module (asserts, example calls, ``unittest``
classes, ``test_*`` functions) would run at import and sink the module, so it
is moved into the tests, and the move is noted. What is left of it goes too: a
main guard that only runs the tests (``unittest.main()``, ``pytest.main()``,
the moved test functions) and imports that only the moved code uses.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from logomesh.syntax import PARSE_ERRORS, parse
from logomesh.tasks.module_check import defined_names, module_problem

_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+.#-]*)[^\n`]*$", re.MULTILINE)
_ENTRY = re.compile(r"public name is `(?P<name>[A-Za-z_][A-Za-z0-9_]*)`")
_TEST_HINT = re.compile(r"^\s*(?:import unittest|import pytest|from unittest|from pytest|def test_\w*\s*\("
                        r"|class \w*Test\w*\s*[(:])", re.MULTILINE)
_CODE_LANGS = {"", "python", "py", "python3", "py3", "pycon"}
_KEYS = ("sourceCode", "testCode", "rationale")
_ALIASES = {  # the names models give the three fields when they improvise
    "sourceCode": ("sourceCode", "source_code", "source", "code", "solution", "module"),
    "testCode": ("testCode", "test_code", "tests", "test"),
    "rationale": ("rationale", "explanation", "reasoning"),
}
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_RUNNERS = ("unittest", "pytest", "doctest")  # modules whose calls in a main guard only run tests
_EXITS = ("sys.exit", "exit", "SystemExit", "raise SystemExit")


class AnswerProblem(ValueError):
    """The answer holds no usable module; ``str()`` is the one-line reason (and the repair message's core).

    ``submission`` is what the answer did hold, as a submission, when it held any code at all: the purple
    agent may still send it, for the judge to record why it is no module.
    """

    def __init__(self, reason: str, submission: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.submission = submission


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    before: str  # the prose line just above the fence (a label such as "test_solution.py")
    closed: bool


@dataclass(frozen=True)
class ParsedAnswer:
    source: str
    tests: str
    rationale: str
    form: str  # "fenced", "json", "near-json", "bare code"
    notes: tuple[str, ...] = field(default_factory=tuple)

    def submission_json(self) -> dict[str, str]:
        return {"sourceCode": self.source, "testCode": self.tests, "rationale": self.rationale}


def entry_point_of(task_text: str) -> str | None:
    """The entry point a LogoMesh task prompt names (``whose public name is `X` ``), if it names one."""
    match = _ENTRY.search(task_text)
    return match.group("name") if match else None


def fenced_blocks(text: str) -> tuple[list[Block], str]:
    """The fenced blocks of ``text`` (an unclosed last fence runs to the end) and the prose outside them."""
    blocks: list[Block] = []
    prose: list[str] = []
    pos = 0
    while True:
        opening = _FENCE_OPEN.search(text, pos)
        if opening is None:
            prose.append(text[pos:])
            break
        before_text = text[pos:opening.start()]
        prose.append(before_text)
        label = next((ln.strip() for ln in reversed(before_text.splitlines()) if ln.strip()), "")
        fence = opening.group("fence")
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        body_start = opening.end() + 1
        end = closing.search(text, body_start)
        body = text[body_start:end.start()] if end else text[body_start:]
        body = textwrap.dedent(body.rstrip("\n")) + "\n"  # a fence inside a list item is indented
        blocks.append(Block(opening.group("lang").lower(), body, label, end is not None))
        if end is None:
            break
        pos = end.end()
    return blocks, "\n".join(p.strip() for p in prose if p.strip())


def _triple_quoted_to_json(text: str) -> str:
    """``"key": \"\"\"...\"\"\"`` (Python triple quotes) rewritten as JSON strings."""
    def repl(match: re.Match[str]) -> str:
        return json.dumps(match.group(2))

    return re.sub(r'("""|\'\'\')(.*?)\1', repl, text, flags=re.DOTALL)


def _object_span(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else None


def loads_near_json(text: str) -> tuple[dict[str, Any], str] | None:
    """A JSON object from ``text``: strict, then with raw control characters, triple quotes, a Python dict."""
    span = _object_span(text)
    if span is None:
        return None
    attempts: list[tuple[str, Any]] = [
        ("json", lambda: json.loads(span)),
        ("near-json", lambda: json.loads(span, strict=False)),
        ("near-json", lambda: json.loads(_triple_quoted_to_json(span), strict=False)),
        ("near-json", lambda: ast.literal_eval(span)),
    ]
    for form, attempt in attempts:
        try:
            data = attempt()
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(data, dict):
            return data, form
    return None


def _parses(code: str) -> ast.Module | None:
    try:
        return parse(code)
    except PARSE_ERRORS:
        return None


def _is_test_code(block: Block) -> bool:
    label = block.before.lower()
    return bool(_TEST_HINT.search(block.body)) and (
        "test" in label or not _defines_anything(block.body) or _only_tests(block.body))


def _defines_anything(code: str) -> bool:
    tree = _parses(code)
    return tree is not None and any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not _test_def(n) for n in tree.body)


def _only_tests(code: str) -> bool:
    tree = _parses(code)
    return tree is not None and all(
        _test_def(n) or isinstance(n, ast.Import | ast.ImportFrom | ast.Expr | ast.If | ast.Assert | ast.Assign)
        for n in tree.body)


def _test_def(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name.startswith("test")
    if isinstance(node, ast.ClassDef):
        return "test" in node.name.lower() or any(
            "TestCase" in ast.unparse(b) for b in node.bases)
    return False


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test)


def _moves_to_tests(node: ast.stmt) -> bool:
    """Top-level statements that are test code: they would run at import, or only serve the tests."""
    if _test_def(node) or isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return True  # a demo call or print at import
    if isinstance(node, ast.Import | ast.ImportFrom):
        return all(a.name.split(".")[0] in ("unittest", "pytest", "solution") for a in node.names) if isinstance(
            node, ast.Import) else (node.module or "").split(".")[0] in ("unittest", "pytest", "solution")
    return False


def _runs_tests(node: ast.expr | None, tests: set[str]) -> bool:
    """A call that only runs tests: a runner's (``unittest.main()``), a moved test's, or ``sys.exit`` of one."""
    if not isinstance(node, ast.Call):
        return False
    name = ast.unparse(node.func)
    if name.split(".")[0] in _RUNNERS or name in tests:
        return True
    return name in _EXITS and len(node.args) == 1 and _runs_tests(node.args[0], tests)


def _is_runner_guard(node: ast.stmt, tests: set[str]) -> bool:
    """``if __name__ == "__main__":`` whose body only runs the tests: a leftover once they have moved."""
    return _is_main_guard(node) and isinstance(node, ast.If) and not node.orelse and all(
        (isinstance(s, ast.Expr) and _runs_tests(s.value, tests)) or (isinstance(s, ast.Raise) and s.cause is None
                                                                      and _runs_tests(s.exc, tests))
        for s in node.body)


def _used_names(nodes: list[ast.stmt]) -> set[str]:
    """The names ``nodes`` read (``os`` of ``os.path.join`` included)."""
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound_by_import(node: ast.stmt) -> set[str] | None:
    """The names an import binds; ``None`` for what is no import, a star import or a ``__future__`` one."""
    if isinstance(node, ast.Import):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom) and node.module != "__future__" and all(a.name != "*" for a in node.names):
        return {a.asname or a.name for a in node.names}
    return None


def _moved_nodes(tree: ast.Module) -> list[ast.stmt]:
    """The top-level statements that leave the module: test code, then the runner guard and the imports that
    only served it (an import the module still uses, or that nothing uses, stays)."""
    moved = [node for node in tree.body if _moves_to_tests(node)]
    tests = {node.name for node in moved if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    moved += [node for node in tree.body if node not in moved and _is_runner_guard(node, tests)]
    kept = [node for node in tree.body if node not in moved]
    in_module, in_tests = _used_names(kept), _used_names(moved)
    for node in kept:
        bound = _bound_by_import(node)
        if bound and not bound & in_module and bound & in_tests:
            moved.append(node)
    return [node for node in tree.body if node in moved]


def split_test_code(code: str) -> tuple[str, str, int]:
    """``code`` without its top-level test statements, those statements, and how many there were."""
    tree = _parses(code)
    if tree is None:
        return code, "", 0
    lines = code.splitlines(keepends=True)
    moved: list[str] = []
    drop: set[int] = set()
    count = 0
    for node in _moved_nodes(tree):
        if node.end_lineno is not None:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            moved.append("".join(lines[first - 1:node.end_lineno]))
            drop.update(range(first - 1, node.end_lineno))
            count += 1
    if not count:
        return code, "", 0
    kept = "".join(line for i, line in enumerate(lines) if i not in drop).rstrip() + "\n"
    if _parses(kept) is None:  # a cut that breaks the module is no help
        return code, "", 0
    return kept, "".join(moved), count


def _as_test_module(moved: str, entry_point: str | None) -> str:
    """Top-level statements moved out of the module, as a test module that imports the module."""
    tree = _parses(moved)
    if tree is None:
        return ""
    header = "from solution import *  # noqa: F403\n"
    if entry_point:
        header += f"from solution import {entry_point}\n"
    defs: list[str] = []
    loose: list[str] = []
    lines = moved.splitlines(keepends=True)
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "".join(lines[first - 1:node.end_lineno or node.lineno])
        (defs if not isinstance(node, ast.Assert | ast.Expr) else loose).append(text)
    body = header + "\n" + "".join(defs)
    asserts = [t for t in loose if t.lstrip().startswith("assert")]
    if asserts:
        indented = "".join("    " + ln if ln.strip() else ln for t in asserts for ln in t.splitlines(keepends=True))
        body += "\n\ndef test_examples_from_the_answer():\n" + indented
    return body


@dataclass
class _Candidates:
    modules: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    cut: bool = False  # an unclosed last block was cut back to its finished statements


def cut_to_parse(code: str) -> str | None:
    """The longest run of whole top-level statements at the start of ``code`` that parses (``None``: none does).

    For an answer cut off inside its last fence (the model ran out of tokens): the statements it finished
    are kept, the one it was writing when it stopped is dropped.
    """
    lines = code.splitlines(keepends=True)
    for end in range(len(lines) - 1, 0, -1):
        if lines[end][:1] in (" ", "\t", "\n", "#", ")", "]", "}"):
            continue  # not the start of a top-level statement
        head = "".join(lines[:end])
        if _parses(head) is not None:
            return head if _defines_anything(head) else None
    return None


def _classify(blocks: list[Block]) -> _Candidates:
    found = _Candidates()
    for block in blocks:
        if block.lang not in _CODE_LANGS or not block.body.strip():
            continue
        if _parses(block.body) is None and not block.closed and (head := cut_to_parse(block.body)):
            block = Block(block.lang, head, block.before, block.closed)
            found.cut = True
        if _parses(block.body) is None:
            found.broken.append(block.body)
        elif _is_test_code(block):
            found.tests.append(block.body)
        else:
            found.modules.append(block.body)
    return found


def _pick_module(modules: list[str], entry_point: str | None) -> str | None:
    if entry_point:
        for code in modules:
            tree = _parses(code)
            if tree is not None and entry_point in defined_names(tree):
                return code
    return next((m for m in modules if _defines_anything(m)), modules[0] if modules else None)


def _finish(source: str, tests: str, rationale: str, form: str, entry_point: str | None,
            notes: list[str]) -> ParsedAnswer:
    original = source
    kept, moved, count = split_test_code(source)
    if count:
        notes.append(f"moved {count} top-level test statement(s) from the module into the tests")
        extra = _as_test_module(moved, entry_point)
        tests = tests if tests.strip() else extra
        source = kept
    if not tests.strip():
        notes.append("the answer holds no tests")
    problem = module_problem(source, entry_point) if entry_point else _bare_problem(source)
    if problem:
        raise AnswerProblem(problem.replace("the agent returned", "the answer holds"),
                            {"sourceCode": original, "testCode": tests, "rationale": rationale.strip()})
    return ParsedAnswer(source, tests, rationale.strip(), form, tuple(notes))


def _bare_problem(source: str) -> str | None:
    if not source.strip() or _parses(source) is None or not _defines_anything(source):
        return "the answer holds no Python module that parses and defines a function or class"
    return None


def _is_submission(data: dict[str, Any]) -> bool:
    return any(isinstance(data.get(name), str) for name in _ALIASES["sourceCode"] + _ALIASES["testCode"])


def _field(data: dict[str, Any], key: str) -> str:
    """A submission field under its name or an alias; code fenced inside the string is unwrapped."""
    value = next((data[n] for n in _ALIASES[key] if isinstance(data.get(n), str)), "")
    if key != "rationale" and "```" in value:
        inner, _ = fenced_blocks(value)
        if inner:
            return inner[0].body
    return str(value)


def _from_json(data: dict[str, Any], form: str, blocks: list[Block], entry_point: str | None) -> ParsedAnswer:
    fields = {k: _field(data, k) for k in _KEYS}
    source, notes = str(fields["sourceCode"]), []
    problem = module_problem(source, entry_point) if entry_point else _bare_problem(source)
    if problem is not None:
        fenced = _classify(blocks)
        picked = _pick_module(fenced.modules, entry_point)
        if picked is None:
            raise AnswerProblem(
                problem.replace("the agent returned", "sourceCode holds") if source.strip()
                else "the JSON field sourceCode is empty or missing",
                {"sourceCode": source, "testCode": str(fields["testCode"]), "rationale": str(fields["rationale"])}
                if source.strip() else None)
        notes.append("sourceCode held no module; took the fenced code block instead")
        source = picked
    return _finish(source, str(fields["testCode"]), str(fields["rationale"]), form, entry_point, notes)


def parse_answer(content: str, entry_point: str | None = None) -> ParsedAnswer:
    """The module, tests and rationale in a model's answer; ``AnswerProblem`` with the reason if none is usable."""
    content = content.replace("\r\n", "\n")
    if "</think>" in content:  # a reasoning model's thoughts: the answer is what follows them
        content = _THINK.sub("", content) if "<think>" in content else content.split("</think>", 1)[1]
    blocks, prose = fenced_blocks(content)
    for block in blocks:  # a JSON object in a ```json fence (or any fence)
        if block.lang in ("json", "") and block.body.lstrip().startswith("{"):
            loaded = loads_near_json(block.body)
            if loaded and _is_submission(loaded[0]):
                return _from_json(loaded[0], loaded[1], [b for b in blocks if b is not block], entry_point)
    loaded = loads_near_json(prose if blocks else content)  # a JSON object outside any fence
    if loaded and _is_submission(loaded[0]):
        return _from_json(loaded[0], loaded[1], blocks, entry_point)
    found = _classify(blocks)
    module = _pick_module(found.modules, entry_point)
    if module is None or (entry_point and module_problem(module, entry_point)):
        # the entry point defined only in a block that also holds tests: one block with the module and its tests
        both = next((t for t in found.tests if entry_point and module_problem(t, entry_point) is None), None)
        if both is None and module is None and found.tests and not entry_point:
            both = found.tests[0]
        if both is not None:
            found.tests.remove(both)
            module = both
    if module is not None:
        notes = ["the answer was cut off inside its last code block: kept the statements it finished"] if (
            found.cut) else []
        return _finish(module, "\n\n".join(found.tests), prose, "fenced", entry_point, notes)
    if not blocks and _parses(content) is not None and _defines_anything(content):
        return _finish(content, "", "", "bare code", entry_point, [])
    if found.broken:
        tree_problem = module_problem(found.broken[0], entry_point or "the entry point")
        raise AnswerProblem((tree_problem or "the code block does not parse").replace(
            "the agent returned", "the answer holds"),
            {"sourceCode": found.broken[0], "testCode": "\n\n".join(found.tests), "rationale": prose})
    if blocks:
        raise AnswerProblem("the answer's code blocks hold no Python module" + (
            f" defining `{entry_point}`" if entry_point else ""))
    raise AnswerProblem("the answer holds no ```python code block")
