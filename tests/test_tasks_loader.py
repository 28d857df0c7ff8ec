from __future__ import annotations

from pathlib import Path

import pytest

from logomesh.tasks import TaskError, load_task, load_task_dir

TOML = """
id = "demo"
title = "Demo"
entry_point = "f"
description = "Return one."

[constraints]
banned_imports = ["socket"]
required = ["recursion"]
forbid_loops = true

[attack]
surface = ["exceptions"]
targets = ["f"]

[[invariants]]
name = "one"
description = "f() == 1"
"""


def _make(tmp_path: Path, toml: str = TOML, name: str = "demo", hidden: bool = True, reference: bool = True) -> Path:
    root = tmp_path / name
    (root / "hidden").mkdir(parents=True)
    (root / "task.toml").write_text(toml)
    if hidden:
        (root / "hidden" / "test_demo.py").write_text("from observe import see\n")
    if reference:
        (root / "reference").mkdir()
        (root / "reference" / "solution.py").write_text("def f():\n    return 1\n")
    return root


def test_valid_task_loads_with_constraints_and_hashes(tmp_path: Path) -> None:
    task = load_task_dir(_make(tmp_path))
    assert task.id == "demo" and task.entry_point == "f"
    assert task.constraints.banned_imports == ("socket",)
    assert task.constraints.forbid_loops is True
    assert task.invariants[0].name == "one"
    assert list(task.hidden_tests) == ["test_demo.py"]
    assert task.reference == "def f():\n    return 1\n"
    assert len(task.spec_sha256) == 64 and len(task.hidden_sha256) == 64


def test_hidden_hash_changes_when_a_test_changes(tmp_path: Path) -> None:
    root = _make(tmp_path)
    before = load_task_dir(root).hidden_sha256
    (root / "hidden" / "test_demo.py").write_text("from observe import see  # edited\n")
    assert load_task_dir(root).hidden_sha256 != before


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("id = [", "not valid TOML"),
        (TOML.replace('title = "Demo"', ""), "missing or empty string field 'title'"),
        (TOML.replace('id = "demo"', 'id = "other"'), "must match the folder name"),
        (TOML.replace('required = ["recursion"]', 'required = ["magic"]'), "unknown required pattern"),
        (TOML.replace('banned_imports = ["socket"]', 'banned_imports = "socket"'), "must be a list of strings"),
    ],
)
def test_malformed_task_toml_is_named(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(TaskError, match=message):
        load_task_dir(_make(tmp_path, toml))


def test_task_without_hidden_tests_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="no hidden tests"):
        load_task_dir(_make(tmp_path, hidden=False))


def test_task_without_a_reference_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"no reference/solution\.py"):
        load_task_dir(_make(tmp_path, reference=False))


def test_unknown_task_lists_the_known_ones(tmp_path: Path) -> None:
    _make(tmp_path)
    with pytest.raises(TaskError, match=r"unknown task 'nope' \(known: demo"):
        load_task("nope", tmp_path)


def test_path_like_task_ids_are_rejected(tmp_path: Path) -> None:
    _make(tmp_path)
    with pytest.raises(TaskError, match="unknown task"):
        load_task("../demo", tmp_path)


def test_unknown_mock_variant_is_named(tmp_path: Path) -> None:
    task = load_task_dir(_make(tmp_path))
    with pytest.raises(TaskError, match="has no submission 'good'"):
        task.labelled_submission("good")
