"""Reading test ids from source (no submission code runs)."""

from __future__ import annotations

import pytest

from logomesh.sandbox.discover import SuiteSourceError, discover, discover_module

SOURCE = '''
import unittest
from unittest import TestCase


class Helpers:
    def test_not_a_case(self):
        pass


class Base(unittest.TestCase):
    def test_inherited(self):
        pass

    def helper(self):
        pass


class TestB(Base):
    def test_b(self):
        pass

    async def test_async(self):
        pass


class TestA(TestCase):
    def test_z(self):
        pass

    def test_a(self):
        pass


def test_function_style():
    pass


class TestPlain:
    def test_p(self):
        pass


class TestWithInit:
    def __init__(self):
        pass

    def test_never(self):
        pass
'''


def test_finds_unittest_and_pytest_style_tests() -> None:
    assert discover_module("test_x.py", SOURCE) == [
        "test_x.Base.test_inherited",
        "test_x.TestB.test_async",
        "test_x.TestB.test_b",
        "test_x.TestB.test_inherited",
        "test_x.TestA.test_a",
        "test_x.TestA.test_z",
        "test_x.test_function_style",
        "test_x.TestPlain.test_p",
    ]


def test_modules_in_name_order() -> None:
    one = "import unittest\nclass T(unittest.TestCase):\n    def test_1(self):\n        pass\n"
    assert discover({"test_b.py": one, "test_a.py": one}) == ["test_a.T.test_1", "test_b.T.test_1"]


def test_syntax_error_names_file_and_line() -> None:
    with pytest.raises(SuiteSourceError, match=r"test_bad.py does not parse: line 2"):
        discover({"test_bad.py": "import unittest\nclass (:\n"})


@pytest.mark.parametrize("name", ["../x.py", "dir/test.py", "test.txt", "1test.py", "te-st.py"])
def test_bad_file_names_are_refused(name: str) -> None:
    with pytest.raises(SuiteSourceError, match="must be a plain"):
        discover({name: ""})


def test_self_inheriting_names_do_not_loop() -> None:
    source = "class A(B):\n    def test_a(self): pass\nclass B(A):\n    def test_b(self): pass\n"
    assert discover_module("test_loop.py", source) == []
