"""The engine's shape: typed values between its modules, and spine functions a reader can hold in mind.

Two rules of the architecture (``docs/ARCHITECTURE.md``) that review alone lets drift:

- A string-keyed JSON dict (``dict[str, Any]``, ``Mapping[str, object]``, …) crosses a module boundary only where
  JSON is what is exchanged: the ledger's result, a wire protocol, a file format. Everywhere else the engine
  hands over typed values. So every public function, method or dataclass field of ``logomesh/`` whose
  signature carries such a dict is either in a wire module or listed below with the reason it is JSON.
- No function on the spine (the files "Follow one battle" walks through) takes more than six parameters.
- No more than four functions of the product (``logomesh/``, ``ledger/``, ``tui/``) run past sixty lines (the
  issue's bound is five; the count only goes down).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "logomesh"
JSON_DICT = re.compile(r"\b(?:dict|Mapping)\[str, (?:Any|object)\]")
MAX_PARAMETERS = 6

# Modules whose business is a JSON wire format: what their public functions take and give is that JSON.
WIRE_MODULES: dict[str, str] = {
    "purple/": "A2A JSON-RPC, the agent card and the model server's HTTP JSON",
    "sandbox/": "the harness protocol between the host and the box",
    "red/probes/": "probe code that runs inside the box and answers in JSON",
    "red/executor.py": "a probe's arguments and its record, as the box receives and returns them",
    "red/scenarios.py": "probe arguments a task folder declares in its JSON",
    "untrusted.py": "the JSON the box printed, parsed with bounds and read field by field",
    "tasks/importers/": "HumanEval's JSONL problems",
    "campaign/report_json.py": "the campaign report file",
    "campaign/verify_report.py": "reads a campaign report file back",
}

# Public names elsewhere that are a JSON form by purpose, each with why. A method named ``to_json`` or
# ``from_json``, or a function whose name ends in ``_json``, says so by its name and needs no entry.
JSON_FORMS: dict[str, str] = {
    "battle/scores.py::Scores.__reduce__": "pickles as its JSON: campaign workers hand results between processes",
    "red/agent.py::RedReport.red_analysis": "the result's red_analysis block",
    "red/bench.py::BenchResult.summary": "``logomesh red bench --json``",
    "scoring/cis.py::ScoreCard.result_fields": "the score card's fields of the ledger's result",
    "scoring/config.py::ScoringConfig.canonical": "the configuration as hashed into scorer_config_sha256",
    "scoring/testing.py::suite_counts": "a suite's counts as the result records them",
    "tasks/contracts.py::Contract.as_args": "a contract as probe arguments sent into the box",
    "tasks/contracts.py::Contract.from_args": "probe arguments read back inside the box",
}


def _qualnames(tree: ast.Module) -> Iterator[tuple[str, ast.AST, ast.ClassDef | None]]:
    """Every module-level function, class method and class field, with its dotted name."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node, None
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f"{node.name}.{item.name}", item, node
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    yield f"{node.name}.{item.target.id}", item, node


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    args = node.args
    found = [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.annotation is not None]
    return [*found, node.returns] if node.returns is not None else found


def _public(name: str) -> bool:
    return not any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


def json_crossings(root: Path) -> list[str]:
    """``path::name`` of each public function, method or field under ``root`` typed with a JSON dict."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for name, node, _ in _qualnames(ast.parse(path.read_text())):
            if _public(name) and any(JSON_DICT.search(ast.unparse(a)) for a in _annotations(node)):
                found.append(f"{relative}::{name}")
    return found


def _json_by_purpose(crossing: str) -> bool:
    name = crossing.rsplit("::", 1)[1].rsplit(".", 1)[-1]
    return (any(crossing.startswith(module) for module in WIRE_MODULES) or crossing in JSON_FORMS
            or name in ("to_json", "from_json") or name.endswith("_json"))


def test_only_json_boundaries_take_or_give_json_dicts() -> None:
    crossings = json_crossings(ENGINE)
    assert "battle/result.py::BattleResult.to_json" in crossings  # the scan sees methods and return types
    unexplained = [c for c in crossings if not _json_by_purpose(c)]
    assert unexplained == [], "type these, or list them in JSON_FORMS with the reason they are JSON"


def test_every_listed_json_form_still_exists() -> None:
    """A stale entry would let a new function of that name through unexamined."""
    crossings = set(json_crossings(ENGINE))
    assert sorted(set(JSON_FORMS) - crossings) == []


def test_the_scan_sees_fields_parameters_and_private_names(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "from typing import Any\nfrom collections.abc import Mapping\nfrom dataclasses import dataclass\n"
        "@dataclass\nclass Row:\n    fields: dict[str, Any]\n    _cache: dict[str, Any]\n"
        "    def read(self, raw: Mapping[str, object]) -> int: ...\n"
        "def build() -> tuple[dict[str, Any], ...]: ...\n"
        "def _helper(x: dict[str, Any]) -> None: ...\n"
        "def typed(x: dict[str, float]) -> None: ...\n")
    assert json_crossings(tmp_path) == ["m.py::Row.fields", "m.py::Row.read", "m.py::build"]


# The files the walk through one battle names, where the spine runs.
SPINE = ["battle/", "scoring/pipeline.py", "scoring/measure.py", "scoring/cis.py", "scoring/judging.py",
         "red/agent.py", "red/mcts.py", "purple/client.py", "purple/exchange.py"]


def parameter_counts(root: Path, parts: list[str]) -> dict[str, int]:
    """``path::name`` -> parameter count (``self``/``cls`` aside) of every function in ``parts`` of ``root``."""
    counts: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if not any(relative.startswith(part) for part in parts):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                named = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
                counts[f"{relative}::{node.name}"] = len([a for a in named if a not in ("self", "cls")])
    return counts


def test_no_spine_function_takes_more_than_six_parameters() -> None:
    counts = parameter_counts(ENGINE, SPINE)
    assert counts["scoring/pipeline.py::measure_and_score"] == 6  # the walk's widest step is counted
    assert {name: n for name, n in counts.items() if n > MAX_PARAMETERS} == {}


@pytest.mark.parametrize("signature", [
    "a, b, c, d, e, f, g", "self, a, b, *, c, d, e, f, g=1", "a, /, b, c, d, e, f, *, g"])
def test_the_count_sees_a_seventh_parameter(tmp_path: Path, signature: str) -> None:
    (tmp_path / "wide.py").write_text(f"def wide({signature}):\n    pass\n")
    assert parameter_counts(tmp_path, ["wide.py"]) == {"wide.py::wide": 7}


PRODUCT = ("logomesh", "ledger", "tui")
MAX_LINES = 60
MAX_LONG_FUNCTIONS = 4  # today: the campaign, battle and score commands (option tables), the entry view


def long_functions(root: Path, parts: tuple[str, ...], max_lines: int = MAX_LINES) -> dict[str, int]:
    """``path::name`` -> lines (``def`` to its last line, decorators aside) of each function in ``parts`` of
    ``root`` longer than ``max_lines``; nested functions are counted on their own as well."""
    found: dict[str, int] = {}
    for part in parts:
        for path in sorted((root / part).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    assert node.end_lineno is not None
                    lines = node.end_lineno - node.lineno + 1
                    if lines > max_lines:
                        found[f"{relative}::{node.name}"] = lines
    return found


def test_at_most_four_functions_run_past_sixty_lines() -> None:
    found = long_functions(ROOT, PRODUCT)
    assert found.get("logomesh/commands/campaign.py::run", 0) > MAX_LINES  # the scan sees the longest one
    listed = "\n".join(f"  {name}: {lines} lines" for name, lines in sorted(found.items(), key=lambda i: -i[1]))
    assert len(found) <= MAX_LONG_FUNCTIONS, (
        f"{len(found)} functions are longer than {MAX_LINES} lines (at most {MAX_LONG_FUNCTIONS} may be): "
        f"split one before adding one\n{listed}")


def test_the_length_count_sees_a_long_function(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        f"def short():\n{body}\nasync def long():\n{body}    return x0\n\nclass C:\n"
        f"    def method(self):\n{body.replace('    ', '        ')}        return 1\n")
    assert long_functions(tmp_path, ("pkg",)) == {"pkg/m.py::long": MAX_LINES + 1, "pkg/m.py::method": MAX_LINES + 1}
