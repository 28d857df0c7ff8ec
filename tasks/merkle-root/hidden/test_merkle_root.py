"""Judge tests for merkle_root against RFC 6962 and an independent stack-based model."""

import hashlib
import random
import time
import unittest

from solution import merkle_root

# The Certificate Transparency test leaves and the published roots for the first 1..8 of them.
CT_LEAVES = [
    b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57", bytes(range(0x60, 0x70)),
]
CT_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
EMPTY_ROOT = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def sha(data):
    return hashlib.sha256(data).digest()


def model_root(leaves):
    """Independent model: merge equal-sized subtrees on a stack, as a CT log appends leaves."""
    if not leaves:
        return sha(b"")
    stack = []  # (size, hash), sizes strictly decreasing powers of two
    for leaf in leaves:
        size, node = 1, sha(b"\x00" + leaf)
        while stack and stack[-1][0] == size:
            left_size, left = stack.pop()
            size, node = size + left_size, sha(b"\x01" + left + node)
        stack.append((size, node))
    node = stack.pop()[1]
    while stack:
        node = sha(b"\x01" + stack.pop()[1] + node)
    return node


def bitcoin_root(leaves):
    level = [sha(b"\x00" + leaf) for leaf in leaves]
    while len(level) > 1:
        if len(level) % 2:
            level.append(level[-1])
        level = [sha(b"\x01" + level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


class TestVectors(unittest.TestCase):
    def test_empty_list(self):
        self.assertEqual(merkle_root([]).hex(), EMPTY_ROOT)

    def test_single_leaf(self):
        self.assertEqual(merkle_root([b"hello"]), sha(b"\x00hello"))
        self.assertEqual(merkle_root([b""]), sha(b"\x00"))

    def test_two_leaves(self):
        a, b = b"alpha", b"beta"
        expected = sha(b"\x01" + sha(b"\x00" + a) + sha(b"\x00" + b))
        self.assertEqual(merkle_root([a, b]), expected)

    def test_three_leaves_split_at_power_of_two(self):
        a, b, c = b"a", b"b", b"c"
        left = sha(b"\x01" + sha(b"\x00a") + sha(b"\x00b"))
        self.assertEqual(merkle_root([a, b, c]), sha(b"\x01" + left + sha(b"\x00c")))

    def test_certificate_transparency_vectors(self):
        for n in range(1, 9):
            self.assertEqual(merkle_root(CT_LEAVES[:n]).hex(), CT_ROOTS[n - 1], "%d leaves" % n)

    def test_returns_32_raw_bytes(self):
        root = merkle_root([b"x", b"y", b"z"])
        self.assertIsInstance(root, bytes)
        self.assertEqual(len(root), 32)


class TestStructure(unittest.TestCase):
    def test_matches_model_for_every_size_up_to_70(self):
        rng = random.Random(6962)
        leaves = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))) for _ in range(70)]
        for n in range(71):
            self.assertEqual(merkle_root(leaves[:n]), model_root(leaves[:n]), "%d leaves" % n)

    def test_not_bitcoin_style_duplication(self):
        leaves = [b"leaf-%d" % i for i in range(12)]
        for n in (3, 5, 6, 7, 9, 11):
            self.assertNotEqual(merkle_root(leaves[:n]), bitcoin_root(leaves[:n]), "%d leaves" % n)
        self.assertNotEqual(merkle_root(leaves[:3]), merkle_root(leaves[:3] + leaves[2:3]))

    def test_leaf_and_node_domain_separation(self):
        a, b = b"a", b"b"
        forged_leaf = sha(b"\x00a") + sha(b"\x00b")
        self.assertNotEqual(merkle_root([forged_leaf]), merkle_root([a, b]))
        self.assertNotEqual(merkle_root([a, b]), sha(sha(a) + sha(b)))
        self.assertNotEqual(merkle_root([a]), sha(a))

    def test_order_and_content_sensitive(self):
        leaves = [b"1", b"2", b"3", b"4", b"5"]
        base = merkle_root(leaves)
        self.assertNotEqual(base, merkle_root([b"2", b"1", b"3", b"4", b"5"]))
        self.assertNotEqual(base, merkle_root([b"1", b"2", b"3", b"4", b"6"]))
        self.assertNotEqual(base, merkle_root(leaves[:4]))
        self.assertNotEqual(merkle_root([b"ab", b"c"]), merkle_root([b"a", b"bc"]))

    def test_input_not_modified(self):
        leaves = [b"x", b"y", b"z"]
        merkle_root(leaves)
        self.assertEqual(leaves, [b"x", b"y", b"z"])

    def test_non_bytes_leaf_rejected(self):
        for bad in (["text"], [b"ok", 5], [None], [b"ok", ["nested"]]):
            with self.assertRaises((TypeError, ValueError), msg=repr(bad)):
                merkle_root(bad)

    def test_ten_thousand_leaves(self):
        leaves = [i.to_bytes(4, "big") for i in range(10000)]
        started = time.perf_counter()
        root = merkle_root(leaves)
        elapsed = time.perf_counter() - started
        self.assertEqual(root, model_root(leaves))
        self.assertLess(elapsed, 1.0)


if __name__ == "__main__":
    unittest.main()
