"""Small suites and solutions shared by the sandbox tests (judge side: stdlib unittest)."""

from __future__ import annotations

ADD_TESTS = {
    "test_add.py": """
import unittest
from solution import add


class TestAdd(unittest.TestCase):
    def test_small(self):
        self.assertEqual(add(1, 2), 3)

    def test_negative(self):
        self.assertEqual(add(-2, -3), -5)

    def test_zero(self):
        self.assertEqual(add(0, 0), 0)

    def test_large(self):
        self.assertEqual(add(10**20, 1), 10**20 + 1)
""",
}
ADD_NAMES = ("test_add.TestAdd.test_large", "test_add.TestAdd.test_negative", "test_add.TestAdd.test_small",
             "test_add.TestAdd.test_zero")

GOOD_ADD = "def add(a, b):\n    return a + b\n"
WRONG_ADD = "def add(a, b):\n    return a + b if a >= 0 else 0\n"  # fails test_negative only

ADD_DRIVERS = {
    "test_add.py": """
from observe import see
from solution import add


class TestAdd:
    def test_small(self):
        see(add(1, 2))

    def test_negative(self):
        see(add(-2, -3))

    def test_zero(self):
        see(add(0, 0))

    def test_large(self):
        see(add(10**20, 1))
""",
}
