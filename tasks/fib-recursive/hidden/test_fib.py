"""Judge tests for fib: values, validation, speed and recursion."""

import importlib
import math
import sys
import time
import unittest

import solution

PROBE_BUDGET = 0.5  # seconds per probe call; a linear or log-time fib needs microseconds


def reference_fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _probe_speed():
    """Call fib(15..40) on a fresh import; report the first call over budget.

    Exponential implementations are stopped here instead of hanging the tests
    that need large n.
    """
    fresh = importlib.reload(solution)
    for n in range(15, 41):
        started = time.perf_counter()
        fresh.fib(n)
        elapsed = time.perf_counter() - started
        if elapsed > PROBE_BUDGET:
            return "fib(%d) took %.2f s on a fresh import: too slow for fib(300)" % (n, elapsed)
    return None


SLOW = None


def setUpModule():
    global SLOW
    try:
        SLOW = _probe_speed()
    except Exception:  # a crashing fib is reported by the value tests themselves
        SLOW = None


class FibCase(unittest.TestCase):
    def fib(self, n):
        """solution.fib(n), unless the probe found fib exponential and n is large enough to hang."""
        if SLOW and n > 25:
            self.fail(SLOW)
        return solution.fib(n)


class TestValues(FibCase):
    def test_base_cases(self):
        self.assertEqual(self.fib(0), 0)
        self.assertEqual(self.fib(1), 1)

    def test_first_twenty(self):
        expected = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181]
        self.assertEqual([self.fib(n) for n in range(20)], expected)

    def test_exact_large_values(self):
        self.assertEqual(self.fib(50), 12586269025)
        self.assertEqual(self.fib(90), 2880067194370816120)
        self.assertEqual(self.fib(100), 354224848179261915075)

    def test_results_are_exact_ints(self):
        for n in (71, 79, 80, 150, 200):
            value = self.fib(n)
            self.assertIs(type(value), int)
            self.assertEqual(value, reference_fib(n), n)

    def test_fib_300_exact(self):
        self.assertEqual(self.fib(300), reference_fib(300))
        self.assertEqual(len(str(self.fib(300))), 63)

    def test_recurrence_holds(self):
        for n in range(2, 120):
            self.assertEqual(self.fib(n), self.fib(n - 1) + self.fib(n - 2), n)

    def test_cassini_and_gcd_identities(self):
        for n in range(1, 60):
            self.assertEqual(self.fib(n - 1) * self.fib(n + 1) - self.fib(n) ** 2, (-1) ** n)
        for m, n in ((12, 18), (30, 45), (84, 126), (97, 60)):
            self.assertEqual(math.gcd(self.fib(m), self.fib(n)), self.fib(math.gcd(m, n)))

    def test_repeated_calls_are_stable(self):
        first = self.fib(200)
        self.assertEqual([self.fib(200) for _ in range(3)], [first] * 3)
        self.assertEqual(self.fib(199) + self.fib(198), first)

    def test_order_of_calls_does_not_matter(self):
        big_first = [self.fib(n) for n in (250, 30, 1, 0, 31, 249)]
        fresh = importlib.reload(solution)  # self.fib has already failed if fib is exponential
        self.assertEqual(big_first, [fresh.fib(n) for n in (250, 30, 1, 0, 31, 249)])


class TestValidation(FibCase):
    def test_negative_raises_value_error(self):
        for n in (-1, -2, -50, -10**6):
            with self.assertRaises(ValueError, msg=n):
                solution.fib(n)

    def test_non_int_rejected(self):
        for bad in (2.0, 3.5, "5", None, True):
            with self.assertRaises((TypeError, ValueError), msg=repr(bad)):
                solution.fib(bad)


class TestSpeedAndShape(FibCase):
    def test_fib_300_fast_on_fresh_import(self):
        if SLOW:
            self.fail(SLOW)
        fresh = importlib.reload(solution)
        started = time.perf_counter()
        value = fresh.fib(300)
        elapsed = time.perf_counter() - started
        self.assertEqual(value, reference_fib(300))
        self.assertLess(elapsed, 1.0)

    def test_is_recursive(self):
        """Some function of solution.py must be active more than once at a time during fib(25)."""
        fresh = importlib.reload(solution)
        filename = fresh.__file__
        depth = {}
        deepest = [0]

        def profiler(frame, event, arg):
            code = frame.f_code
            if code.co_filename != filename:
                return
            if event == "call":
                depth[code] = depth.get(code, 0) + 1
                deepest[0] = max(deepest[0], depth[code])
            elif event == "return":
                depth[code] = depth.get(code, 1) - 1

        sys.setprofile(profiler)
        try:
            value = fresh.fib(25)
        finally:
            sys.setprofile(None)
        self.assertEqual(value, 75025)
        self.assertGreaterEqual(deepest[0], 2, "fib(25) ran without any recursive call")


if __name__ == "__main__":
    unittest.main()
