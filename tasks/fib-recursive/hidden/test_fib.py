"""Hidden drivers for fib: values, validation, speed and recursion.

Drivers record what fib returns or raises (``see``, ``call``, ``raised``);
the host compares the record with the reference solution's, type-strictly
(an exact ``int``, not a float or a look-alike). No expected value appears
here. Speed is judged outside the process (``@within`` and the per-test
timeout); the probe below only decides whether calling fib with a large n
could hang the run.
"""

import importlib
import math
import time

import solution
from observe import call, raised, recursion, see, within

PROBE_BUDGET = 0.5  # seconds for one probe call; a linear or log-time fib needs microseconds
LARGE_N = 25  # above this, an exponential fib could run for hours
TOO_SLOW = "too slow"  # observed instead of fib(n) for large n when the probe found fib exponential

_probed = []  # [bool] once the probe has run in this process


def _too_slow():
    """Whether fib(15..40) on a fresh import has a call over budget (an exponential fib). Probed once.

    A guard, not a verdict: it only replaces calls that would hang with the ``TOO_SLOW`` marker.
    The reference never trips it, so a submission that does fails by that marker.
    """
    if not _probed:
        slow = False
        fresh = importlib.reload(solution)
        for n in range(15, 41):
            started = time.perf_counter()
            try:
                fresh.fib(n)
            except Exception:  # a crashing fib shows in the drivers' own calls
                break
            if time.perf_counter() - started > PROBE_BUDGET:
                slow = True
                break
        _probed.append(slow)
    return _probed[0]


def fib(n):
    """solution.fib(n), or the ``TOO_SLOW`` marker when n is large and fib was found exponential."""
    if n > LARGE_N and _too_slow():
        return TOO_SLOW
    return solution.fib(n)


class TestValues:
    def test_base_cases(self):
        call(fib, 0)
        call(fib, 1)

    def test_first_twenty(self):
        see([fib(n) for n in range(20)])

    def test_exact_large_values(self):
        see([fib(50), fib(90), fib(100)])

    def test_results_are_exact_ints(self):
        for n in (71, 79, 80, 150, 200):
            call(fib, n)

    def test_fib_300_exact(self):
        see(fib(300))

    def test_recurrence_holds(self):
        see([fib(n) for n in range(120)])

    def test_cassini_and_gcd_identities(self):
        see([fib(n) for n in range(61)])
        see([[fib(m), fib(n), fib(math.gcd(m, n))] for m, n in ((12, 18), (30, 45), (84, 126), (97, 60))])

    def test_repeated_calls_are_stable(self):
        see([fib(200) for _ in range(4)])
        see([fib(199), fib(198)])

    def test_order_of_calls_does_not_matter(self):
        order = (250, 30, 1, 0, 31, 249)
        see([fib(n) for n in order])
        importlib.reload(solution)
        see([fib(n) for n in order])


class TestValidation:
    def test_negative_raises_value_error(self):
        for n in (-1, 0, -2, 5, -50, -10**6):
            call(fib, n)

    def test_non_int_rejected(self):
        for value in (2.0, 3.5, 7, "5", None, True, 2):
            with raised(TypeError, ValueError):
                see(fib(value))


class TestSpeedAndShape:
    @within(max_s=1.0, clock="cpu")
    def test_fib_300_fast_on_fresh_import(self):
        if _too_slow():
            see(TOO_SLOW)
            return
        fresh = importlib.reload(solution)
        see(fresh.fib(300))

    def test_is_recursive(self):
        """How many activations of one function of solution.py overlap during fib(25), counted up to 2.

        Measured where the code runs (``recursion``): this process only calls it. The depth itself is the
        algorithm's (about log n for fast doubling, n for memoised recursion); 2 already means recursion,
        1 a function that never calls itself.
        """
        fresh = importlib.reload(solution)
        value, deepest = recursion(fresh.fib, 25)
        see(value)
        see(deepest)
