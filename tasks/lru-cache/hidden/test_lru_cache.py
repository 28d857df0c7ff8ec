"""Hidden drivers for the LRUCache contract.

Drivers record what the cache answers (``see``, ``call``, ``raised``); the host
compares the record with the reference solution's. No expected value appears here.
"""

import random
import threading

from observe import call, drawn, see
from solution import LRUCache


class Payload:
    """An object only identity can match: a copy or a look-alike is another ref."""


def gets(cache, keys):
    return [cache.get(key) for key in keys]


class TestBasics:
    def test_missing_key_returns_none(self):
        cache = LRUCache(2)
        see(cache.get("nope"))
        see(len(cache))
        cache.put("here", 1)
        see(gets(cache, ["nope", "here", "Here"]))
        see(len(cache))

    def test_put_then_get_returns_same_object(self):
        cache = LRUCache(3)
        value = Payload()
        see(value)
        call(cache.put, "a", value)
        see(cache.get("a"))
        see(cache.get("a"))
        cache.put("b", {"payload": [1, 2, 3]})
        see(cache.get("b"))
        see(len(cache))

    def test_falsy_values_are_returned_as_stored(self):
        cache = LRUCache(4)
        pairs = (("zero", 0), ("empty", ""), ("false", False), ("list", []))
        for key, value in pairs:
            cache.put(key, value)
        see(gets(cache, ["zero", "false", "empty", "list"]))
        see(len(cache))
        cache.put(None, 0.0)
        see(gets(cache, [None, "zero"]))

    def test_hashable_keys_of_mixed_types(self):
        cache = LRUCache(4)
        cache.put(1, "int")
        cache.put((1, 2), "tuple")
        cache.put(frozenset({3}), "frozenset")
        cache.put("1", "str")
        see(gets(cache, [1, (1, 2), frozenset({3}), "1", 2, (2, 1)]))
        see(len(cache))

    def test_capacity_validation(self):
        # Valid capacities go through the same guard, so the harness does not tell which calls must fail.
        for capacity in (0, 2, -1, 1, -10, 100):
            call(LRUCache, capacity)


class TestEviction:
    def test_evicts_least_recently_put(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("c", 3)
        see(gets(cache, ["a", "b", "c"]))
        see(len(cache))

    def test_get_marks_key_as_recently_used(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        see(cache.get("a"))
        cache.put("c", 3)
        see(gets(cache, ["b", "a", "c"]))
        see(len(cache))

    def test_miss_does_not_change_order(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        see(cache.get("zzz"))
        cache.put("c", 3)
        see(gets(cache, ["a", "b", "c"]))
        see(len(cache))

    def test_overwrite_updates_value_and_recency_without_evicting(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("a", 10)
        see(len(cache))
        see(gets(cache, ["b", "a"]))
        cache.put("c", 3)
        see(gets(cache, ["b", "a", "c"]))
        cache.put("d", 4)
        see(gets(cache, ["a", "c", "d"]))
        see(len(cache))

    def test_capacity_one(self):
        cache = LRUCache(1)
        cache.put("a", 1)
        cache.put("b", 2)
        see(gets(cache, ["a", "b"]))
        cache.put("b", 3)
        see(cache.get("b"))
        see(len(cache))

    def test_frequency_does_not_matter_only_recency(self):
        cache = LRUCache(2)
        cache.put("hot", 1)
        for _ in range(100):
            cache.get("hot")
        cache.put("new", 2)
        cache.get("new")
        cache.put("newer", 3)
        see(gets(cache, ["hot", "new", "newer"]))
        see(len(cache))

    def test_matches_model_on_random_workload(self):
        rng = drawn("workload")
        cache = LRUCache(8)
        answers = []
        sizes = []
        for step in range(5000):
            key = rng.randrange(20)
            if rng.random() < 0.5:
                cache.put(key, (key, step))
            else:
                answers.append(cache.get(key))
            sizes.append(len(cache))
        see(answers)
        see(sizes)

    def test_large_capacity_workload(self):
        cache = LRUCache(3000)
        for i in range(9000):
            cache.put(i, i * 2)
        see(len(cache))
        see(gets(cache, [0, 5999, 6000, 7500, 8999, 9000]))


class TestConcurrency:
    def test_concurrent_puts_of_distinct_keys_are_all_kept(self):
        cache = LRUCache(4000)
        start = threading.Barrier(8)

        def worker(n):
            start.wait()
            for i in range(500):
                cache.put((n, i), n * 1000 + i)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        see(len(cache))
        see([cache.get((n, i)) for n in range(8) for i in range(0, 500, 50)])

    def test_concurrent_mixed_traffic_respects_capacity(self):
        cache = LRUCache(16)
        wrong = []  # (key, value) pairs read back under another key, and exceptions' class names
        sizes = []
        start = threading.Barrier(6)

        def worker(seed):
            rng = random.Random(seed)
            start.wait()
            try:
                for _ in range(2000):
                    key = rng.randrange(64)
                    if rng.random() < 0.5:
                        cache.put(key, key)
                    else:
                        value = cache.get(key)
                        if value is not None and value != key:
                            wrong.append((key, value))
                    sizes.append(len(cache))
            except Exception as exc:  # a broken structure shows up as an exception
                wrong.append(type(exc).__name__)

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        see(wrong)
        see(max(sizes))
        see(len(cache))
        see(len([k for k in range(64) if cache.get(k) is not None]))
