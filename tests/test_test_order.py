"""The test tiers' file order (``tests/tiers.py:heaviest_first``) and its record
(``scripts/record_test_durations.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from tiers import heaviest_first

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "scripts" / "record_test_durations.py"

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_one" time="1.5"/>
<testcase classname="tests.test_a" name="test_two" time="2.0"/>
<testcase classname="tests.sub.test_b.TestGroup" name="test_three" time="7.25"/>
</testsuite></testsuites>
"""


def _items(*nodeids: str) -> list[pytest.Item]:
    return [cast(pytest.Item, SimpleNamespace(nodeid=n)) for n in nodeids]


def test_files_run_longest_first_by_the_tiers_own_record(tmp_path: Path) -> None:
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"fast": {"tests/b.py": 5.0, "tests/c.py": 9.0},
                                     "full": {"tests/a.py": 50.0, "tests/b.py": 1.0}}))
    collected = ["tests/a.py::t1", "tests/b.py::t1", "tests/new.py::t1", "tests/c.py::t1", "tests/b.py::t2",
                 "tests/a.py::t2", "tests/other.py::t1"]
    for tier, expected in (
        ("fast", ["tests/c.py::t1", "tests/b.py::t1", "tests/b.py::t2", "tests/a.py::t1", "tests/a.py::t2",
                  "tests/new.py::t1", "tests/other.py::t1"]),
        ("full", ["tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/b.py::t2", "tests/new.py::t1",
                  "tests/c.py::t1", "tests/other.py::t1"]),
    ):
        items = _items(*collected)
        heaviest_first(items, tier, durations)
        assert [i.nodeid for i in items] == expected, tier
    items = _items(*collected)
    heaviest_first(items, "fast", tmp_path / "none.json")  # no record: each file where it was first seen
    assert [i.nodeid for i in items] == ["tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/b.py::t2",
                                         "tests/new.py::t1", "tests/c.py::t1", "tests/other.py::t1"]


def test_the_record_of_one_tier_keeps_the_other(tmp_path: Path) -> None:
    sys.path.insert(0, str(RECORD.parent))
    try:
        import record_test_durations as record
    finally:
        sys.path.remove(str(RECORD.parent))
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    for name in ("tests/test_a.py", "tests/sub/test_b.py"):
        (tmp_path / name).write_text("")
    report = tmp_path / "report.xml"
    report.write_text(REPORT)
    assert record.file_seconds(report, tmp_path) == {"tests/sub/test_b.py": 7.2, "tests/test_a.py": 3.5}


def test_the_record_script_refuses_a_tier_it_does_not_know(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(REPORT)
    run = subprocess.run([sys.executable, str(RECORD), "slow", str(report)], capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.startswith("usage: record_test_durations.py fast|full REPORT.xml")
    assert "Traceback" not in run.stderr
