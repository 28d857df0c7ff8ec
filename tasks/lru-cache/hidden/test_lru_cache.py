"""Judge tests for the LRUCache contract."""

import random
import threading
import unittest
from collections import OrderedDict

from solution import LRUCache


class TestBasics(unittest.TestCase):
    def test_missing_key_returns_none(self):
        cache = LRUCache(2)
        self.assertIsNone(cache.get("nope"))
        self.assertEqual(len(cache), 0)

    def test_put_then_get_returns_same_object(self):
        cache = LRUCache(3)
        value = {"payload": [1, 2, 3]}
        cache.put("a", value)
        self.assertIs(cache.get("a"), value)
        self.assertEqual(len(cache), 1)

    def test_falsy_values_are_returned_as_stored(self):
        cache = LRUCache(4)
        for key, value in (("zero", 0), ("empty", ""), ("false", False), ("list", [])):
            cache.put(key, value)
        self.assertEqual(cache.get("zero"), 0)
        self.assertIs(cache.get("false"), False)
        self.assertEqual(cache.get("empty"), "")
        self.assertEqual(cache.get("list"), [])
        self.assertEqual(len(cache), 4)

    def test_hashable_keys_of_mixed_types(self):
        cache = LRUCache(4)
        cache.put(1, "int")
        cache.put((1, 2), "tuple")
        cache.put(frozenset({3}), "frozenset")
        cache.put("1", "str")
        self.assertEqual(cache.get(1), "int")
        self.assertEqual(cache.get((1, 2)), "tuple")
        self.assertEqual(cache.get(frozenset({3})), "frozenset")
        self.assertEqual(cache.get("1"), "str")

    def test_capacity_validation(self):
        for bad in (0, -1, -10):
            with self.assertRaises(ValueError):
                LRUCache(bad)


class TestEviction(unittest.TestCase):
    def test_evicts_least_recently_put(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("c", 3)
        self.assertIsNone(cache.get("a"))
        self.assertEqual(cache.get("b"), 2)
        self.assertEqual(cache.get("c"), 3)
        self.assertEqual(len(cache), 2)

    def test_get_marks_key_as_recently_used(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertEqual(cache.get("a"), 1)
        cache.put("c", 3)
        self.assertIsNone(cache.get("b"))
        self.assertEqual(cache.get("a"), 1)
        self.assertEqual(cache.get("c"), 3)

    def test_miss_does_not_change_order(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertIsNone(cache.get("zzz"))
        cache.put("c", 3)
        self.assertIsNone(cache.get("a"))
        self.assertEqual(len(cache), 2)

    def test_overwrite_updates_value_and_recency_without_evicting(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("a", 10)
        self.assertEqual(len(cache), 2)
        self.assertEqual(cache.get("b"), 2)
        self.assertEqual(cache.get("a"), 10)
        cache.put("c", 3)
        self.assertIsNone(cache.get("b"))
        self.assertEqual(cache.get("a"), 10)

    def test_capacity_one(self):
        cache = LRUCache(1)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertIsNone(cache.get("a"))
        self.assertEqual(cache.get("b"), 2)
        cache.put("b", 3)
        self.assertEqual(cache.get("b"), 3)
        self.assertEqual(len(cache), 1)

    def test_frequency_does_not_matter_only_recency(self):
        cache = LRUCache(2)
        cache.put("hot", 1)
        for _ in range(100):
            cache.get("hot")
        cache.put("new", 2)
        cache.get("new")
        cache.put("newer", 3)  # "hot" is now the least recently used
        self.assertIsNone(cache.get("hot"))
        self.assertEqual(cache.get("new"), 2)
        self.assertEqual(cache.get("newer"), 3)

    def test_matches_model_on_random_workload(self):
        rng = random.Random(7)
        capacity = 8
        cache = LRUCache(capacity)
        model = OrderedDict()
        for step in range(5000):
            key = rng.randrange(20)
            if rng.random() < 0.5:
                value = (key, step)
                cache.put(key, value)
                if key in model:
                    model.move_to_end(key)
                model[key] = value
                if len(model) > capacity:
                    model.popitem(last=False)
            else:
                expected = model.get(key)
                if key in model:
                    model.move_to_end(key)
                self.assertEqual(cache.get(key), expected, "step %d key %d" % (step, key))
            self.assertEqual(len(cache), len(model))

    def test_large_capacity_workload(self):
        cache = LRUCache(3000)
        for i in range(9000):
            cache.put(i, i * 2)
        self.assertEqual(len(cache), 3000)
        self.assertIsNone(cache.get(5999))
        self.assertEqual(cache.get(6000), 12000)
        self.assertEqual(cache.get(8999), 17998)


class TestConcurrency(unittest.TestCase):
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
        self.assertEqual(len(cache), 4000)
        for n in range(8):
            for i in range(0, 500, 50):
                self.assertEqual(cache.get((n, i)), n * 1000 + i)

    def test_concurrent_mixed_traffic_respects_capacity(self):
        cache = LRUCache(16)
        errors = []
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
                            errors.append((key, value))
            except Exception as exc:  # a broken structure shows up as an exception
                errors.append(repr(exc))

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        self.assertEqual(errors, [])
        self.assertEqual(len(cache), 16)


if __name__ == "__main__":
    unittest.main()
