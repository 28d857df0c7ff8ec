"""A small task library of our own and a running mock purple server, shared by the purple tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import RunningServer, start_in_thread
from logomesh.tasks import TaskSpec, load_task

GOOD = {
    "label": "correct",
    "behaviour_defect": False,
    "sourceCode": "def add(a, b):\n    return a + b\n",
    "testCode": "import unittest\nfrom solution import add\n\n\nclass T(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    "rationale": "Adds two numbers as the contract says.",
}
BAD = {**GOOD, "label": "off by one", "behaviour_defect": True, "sourceCode": "def add(a, b):\n    return a + b + 1\n"}


def write_task_library(root: Path) -> Path:
    task = root / "adder"
    (task / "hidden").mkdir(parents=True)
    (task / "submissions").mkdir()
    (task / "task.toml").write_text(
        'id = "adder"\ntitle = "Add two numbers"\nentry_point = "add"\n'
        'description = """\nadd(a, b) returns a + b for any two ints.\n"""\n',
        encoding="utf-8",
    )
    (task / "hidden" / "test_add.py").write_text(
        "from observe import see\nfrom solution import add\n\n\nclass TestH:\n"
        "    def test_small(self):\n        see(add(1, 2))\n",
        encoding="utf-8",
    )
    (task / "reference").mkdir()
    (task / "reference" / "solution.py").write_text(GOOD["sourceCode"], encoding="utf-8")
    (task / "submissions" / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (task / "submissions" / "bad.json").write_text(json.dumps(BAD), encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def task_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_task_library(tmp_path_factory.mktemp("tasks"))


@pytest.fixture(scope="session")
def adder(task_lib: Path) -> TaskSpec:
    return load_task("adder", task_lib)


@pytest.fixture(scope="session")
def responses_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("responses")
    (folder / "from-file.json").write_text(json.dumps({**GOOD, "rationale": "served from a file"}), encoding="utf-8")
    (folder / "broken.json").write_text('{"sourceCode": "x = 1"', encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def mock_server(task_lib: Path, responses_dir: Path) -> Iterator[RunningServer]:
    with start_in_thread(mock_app_factory(MockResponses(responses_dir, task_lib))) as server:
        yield server
