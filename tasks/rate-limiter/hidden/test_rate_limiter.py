"""Hidden drivers for the sliding-window RateLimiter contract.

Drivers record what the limiter answers (``see``, ``call``); the host compares
the record with the reference solution's. No expected value appears here.
"""

import threading

from observe import call, drawn, see
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


class TestBasics:
    def test_allows_up_to_max_then_denies(self):
        limiter = RateLimiter(3, 10.0, FakeClock())
        see(grants(limiter, "a", 5))

    def test_max_requests_one(self):
        clock = FakeClock()
        limiter = RateLimiter(1, 1.0, clock)
        see(grants(limiter, "k", 2))
        clock.advance(1.0)
        see(grants(limiter, "k", 2))

    def test_keys_are_independent(self):
        limiter = RateLimiter(2, 5.0, FakeClock())
        see(grants(limiter, "alice", 3))
        see(grants(limiter, "bob", 3))
        see(limiter.allow("alice"))

    def test_many_keys_each_get_their_own_quota(self):
        limiter = RateLimiter(2, 1.0, FakeClock())
        keys = ["user-%d" % i for i in range(500)]
        for _ in range(3):
            see([limiter.allow(key) for key in keys])

    def test_default_clock_works(self):
        limiter = RateLimiter(2, 60.0)
        see(grants(limiter, "x", 3))


class TestWindow:
    def test_quota_returns_after_window(self):
        clock = FakeClock()
        limiter = RateLimiter(2, 1.0, clock)
        see(grants(limiter, "k", 3))
        clock.advance(1.5)
        see(grants(limiter, "k", 3))

    def test_exact_boundary(self):
        # A grant at t counts for readings in [t, t + window) and not from t + window on.
        clock = FakeClock(100.0)
        limiter = RateLimiter(1, 2.0, clock)
        for now in (100.0, 101.9375, 102.0, 103.5, 104.0):
            clock.now = now
            see(limiter.allow("k"))

    def test_sliding_not_fixed_buckets(self):
        # Fixed one-second buckets would grant 2 + 2 around the 1.0 boundary.
        clock = FakeClock(0.875)
        limiter = RateLimiter(2, 1.0, clock)
        see(grants(limiter, "k", 2))
        for now in (1.125, 1.75):
            clock.now = now
            see(limiter.allow("k"))
        clock.now = 1.875
        see(grants(limiter, "k", 3))

    def test_staggered_grants_expire_one_by_one(self):
        clock = FakeClock()
        limiter = RateLimiter(3, 1.0, clock)
        for t in (0.0, 0.25, 0.5, 0.75):
            clock.now = t
            see(limiter.allow("k"))
        for t in (1.0, 1.25):
            clock.now = t
            see(grants(limiter, "k", 2))

    def test_rejected_requests_do_not_count(self):
        clock = FakeClock()
        limiter = RateLimiter(2, 1.0, clock)
        see(grants(limiter, "k", 2))
        clock.now = 0.5
        see(grants(limiter, "k", 50))
        clock.now = 1.0
        see(grants(limiter, "k", 3))

    def test_fractional_window_and_large_clock_offset(self):
        clock = FakeClock(1e6)
        limiter = RateLimiter(4, 0.25, clock)
        see(grants(limiter, "k", 5))
        clock.advance(0.125)
        see(limiter.allow("k"))
        clock.advance(0.125)
        see(grants(limiter, "k", 5))

    def test_random_traffic(self):
        rng = drawn("traffic")
        clock = FakeClock()
        limiter = RateLimiter(3, 1.0, clock)
        answers = []
        for _ in range(2000):
            clock.advance(rng.choice((0.0, 0.0, 0.0625, 0.125, 0.25, 0.5)))
            answers.append(limiter.allow(rng.choice("abcd")))
        see(answers)

    def test_idle_keys_do_not_break_later_answers(self):
        # Many one-off keys expire; the limiter must still answer exactly afterwards.
        clock = FakeClock()
        limiter = RateLimiter(1, 1.0, clock)
        answers = []
        for i in range(3000):
            clock.advance(0.0625)
            answers.append(limiter.allow("once-%d" % i))
        see(answers)
        see(limiter.allow("once-2999"))
        clock.advance(1.0)
        see([limiter.allow("once-2999"), limiter.allow("once-0")])


class TestValidation:
    def test_rejects_bad_max_requests(self):
        for value in (0, -1, -100, 1, 5):
            call(RateLimiter, value, 1.0, FakeClock())

    def test_rejects_bad_window(self):
        for value in (0, 0.0, -1.0, -0.5, 0.5, 2.0):
            call(RateLimiter, 5, value, FakeClock())


class TestConcurrency:
    def test_threads_get_exactly_max_grants(self):
        limiter = RateLimiter(100, 10.0, FakeClock(5.0))
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
        see([len(results), results.count(True)])
