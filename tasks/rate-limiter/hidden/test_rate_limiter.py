"""Judge tests for the sliding-window RateLimiter contract."""

import random
import threading
import unittest

from solution import RateLimiter


class FakeClock:
    """A clock the test moves by hand; times are binary-exact to avoid float fuzz."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def grants(limiter, key, n):
    return [limiter.allow(key) for _ in range(n)]


class TestBasics(unittest.TestCase):
    def test_allows_up_to_max_then_denies(self):
        clock = FakeClock()
        limiter = RateLimiter(3, 10.0, clock)
        self.assertEqual(grants(limiter, "a", 5), [True, True, True, False, False])

    def test_max_requests_one(self):
        clock = FakeClock()
        limiter = RateLimiter(1, 1.0, clock)
        self.assertTrue(limiter.allow("k"))
        self.assertFalse(limiter.allow("k"))
        clock.advance(1.0)
        self.assertTrue(limiter.allow("k"))
        self.assertFalse(limiter.allow("k"))

    def test_keys_are_independent(self):
        clock = FakeClock()
        limiter = RateLimiter(2, 5.0, clock)
        self.assertEqual(grants(limiter, "alice", 3), [True, True, False])
        self.assertEqual(grants(limiter, "bob", 3), [True, True, False])
        self.assertFalse(limiter.allow("alice"))

    def test_many_keys_each_get_their_own_quota(self):
        clock = FakeClock()
        limiter = RateLimiter(2, 1.0, clock)
        keys = ["user-%d" % i for i in range(500)]
        for key in keys:
            self.assertTrue(limiter.allow(key))
        for key in keys:
            self.assertTrue(limiter.allow(key))
        for key in keys:
            self.assertFalse(limiter.allow(key))

    def test_default_clock_works(self):
        limiter = RateLimiter(2, 60.0)
        self.assertEqual(grants(limiter, "x", 3), [True, True, False])


class TestWindow(unittest.TestCase):
    def test_quota_returns_after_window(self):
        clock = FakeClock()
        limiter = RateLimiter(2, 1.0, clock)
        self.assertEqual(grants(limiter, "k", 3), [True, True, False])
        clock.advance(1.5)
        self.assertEqual(grants(limiter, "k", 3), [True, True, False])

    def test_exact_boundary(self):
        # A grant at t counts for readings in [t, t + window) and not from t + window on.
        clock = FakeClock(100.0)
        limiter = RateLimiter(1, 2.0, clock)
        self.assertTrue(limiter.allow("k"))
        clock.now = 101.9375
        self.assertFalse(limiter.allow("k"))
        clock.now = 102.0
        self.assertTrue(limiter.allow("k"))

    def test_sliding_not_fixed_buckets(self):
        # Fixed one-second buckets would grant 2 + 2 around the 1.0 boundary.
        clock = FakeClock(0.875)
        limiter = RateLimiter(2, 1.0, clock)
        self.assertEqual(grants(limiter, "k", 2), [True, True])
        clock.now = 1.125
        self.assertFalse(limiter.allow("k"))
        clock.now = 1.75
        self.assertFalse(limiter.allow("k"))
        clock.now = 1.875
        self.assertEqual(grants(limiter, "k", 3), [True, True, False])

    def test_staggered_grants_expire_one_by_one(self):
        clock = FakeClock()
        limiter = RateLimiter(3, 1.0, clock)
        for t in (0.0, 0.25, 0.5):
            clock.now = t
            self.assertTrue(limiter.allow("k"))
        clock.now = 0.75
        self.assertFalse(limiter.allow("k"))
        clock.now = 1.0
        self.assertEqual(grants(limiter, "k", 2), [True, False])
        clock.now = 1.25
        self.assertEqual(grants(limiter, "k", 2), [True, False])

    def test_rejected_requests_do_not_count(self):
        clock = FakeClock()
        limiter = RateLimiter(2, 1.0, clock)
        self.assertEqual(grants(limiter, "k", 2), [True, True])
        clock.now = 0.5
        self.assertEqual(grants(limiter, "k", 50), [False] * 50)
        clock.now = 1.0
        self.assertEqual(grants(limiter, "k", 3), [True, True, False])

    def test_fractional_window_and_large_clock_offset(self):
        clock = FakeClock(1e6)
        limiter = RateLimiter(4, 0.25, clock)
        self.assertEqual(grants(limiter, "k", 5), [True] * 4 + [False])
        clock.advance(0.125)
        self.assertFalse(limiter.allow("k"))
        clock.advance(0.125)
        self.assertEqual(grants(limiter, "k", 5), [True] * 4 + [False])

    def test_matches_reference_model_on_random_traffic(self):
        rng = random.Random(20240611)
        max_requests, window = 3, 1.0
        clock = FakeClock()
        limiter = RateLimiter(max_requests, window, clock)
        model = {}
        for _ in range(2000):
            clock.advance(rng.choice((0.0, 0.0, 0.0625, 0.125, 0.25, 0.5)))
            key = rng.choice("abcd")
            live = [t for t in model.get(key, []) if t > clock.now - window]
            expected = len(live) < max_requests
            if expected:
                live.append(clock.now)
            model[key] = live
            self.assertEqual(limiter.allow(key), expected, "at t=%r key=%r" % (clock.now, key))

    def test_idle_keys_do_not_break_later_answers(self):
        # Many one-off keys expire; the limiter must still answer exactly afterwards.
        clock = FakeClock()
        limiter = RateLimiter(1, 1.0, clock)
        for i in range(3000):
            clock.advance(0.0625)
            self.assertTrue(limiter.allow("once-%d" % i))
        self.assertFalse(limiter.allow("once-2999"))
        clock.advance(1.0)
        self.assertTrue(limiter.allow("once-2999"))
        self.assertTrue(limiter.allow("once-0"))


class TestValidation(unittest.TestCase):
    def test_non_positive_max_requests(self):
        for bad in (0, -1, -100):
            with self.assertRaises(ValueError):
                RateLimiter(bad, 1.0, FakeClock())

    def test_non_positive_window(self):
        for bad in (0, 0.0, -1.0, -0.5):
            with self.assertRaises(ValueError):
                RateLimiter(5, bad, FakeClock())


class TestConcurrency(unittest.TestCase):
    def test_threads_get_exactly_max_grants(self):
        clock = FakeClock(5.0)
        limiter = RateLimiter(100, 10.0, clock)
        results = []
        results_lock = threading.Lock()
        start = threading.Barrier(8)

        def worker():
            start.wait()
            mine = [limiter.allow("shared") for _ in range(50)]
            with results_lock:
                results.extend(mine)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        self.assertEqual(len(results), 400)
        self.assertEqual(results.count(True), 100)


if __name__ == "__main__":
    unittest.main()
