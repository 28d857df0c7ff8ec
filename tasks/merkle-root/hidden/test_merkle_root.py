"""Hidden drivers for merkle_root (RFC 6962 Merkle Tree Hash).

Drivers record the roots the submission returns (``see``, ``raised``); the host
compares them, type-strict, with the reference solution's. No expected digest
appears here: the reference produces them.
"""

import hashlib

from observe import drawn, raised, see, within
from solution import merkle_root

# The Certificate Transparency test leaves (inputs only; their published roots come from the reference).
CT_LEAVES = [
    b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57", bytes(range(0x60, 0x70)),
]


def roots(lists):
    return [merkle_root(leaves) for leaves in lists]


class TestVectors:
    def test_empty_list(self):
        see(merkle_root([]))

    def test_single_leaf(self):
        see(roots([[b"hello"], [b""], [b"\x00"], [b"\x01"]]))

    def test_two_leaves(self):
        see(roots([[b"alpha", b"beta"], [b"beta", b"alpha"], [b"", b""]]))

    def test_three_leaves_split_at_power_of_two(self):
        see(roots([[b"a", b"b", b"c"], [b"a", b"b", b"c", b"c"], [b"a", b"b", b"c", b"d", b"e"]]))

    def test_certificate_transparency_vectors(self):
        see(roots([CT_LEAVES[:n] for n in range(1, 9)]))

    def test_returns_32_raw_bytes(self):
        root = merkle_root([b"x", b"y", b"z"])
        see(root)
        see(len(root))


class TestStructure:
    def test_matches_model_for_every_size_up_to_70(self):
        rng = drawn("leaves")
        leaves = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))) for _ in range(70)]
        see(roots([leaves[:n] for n in range(71)]))

    def test_not_bitcoin_style_duplication(self):
        # Bitcoin-style trees pair an odd node with itself, so [a, b, c] and [a, b, c, c] collide there.
        leaves = [b"leaf-%d" % i for i in range(12)]
        see(roots([leaves[:n] for n in (3, 5, 6, 7, 9, 11)]))
        see(roots([leaves[:3], leaves[:3] + leaves[2:3]]))

    def test_leaf_and_node_domain_separation(self):
        # A leaf that spells out two leaf hashes must not hash like the interior node above them.
        forged_leaf = hashlib.sha256(b"\x00a").digest() + hashlib.sha256(b"\x00b").digest()
        see(roots([[forged_leaf], [b"a", b"b"], [b"a"]]))

    def test_order_and_content_sensitive(self):
        leaves = [b"1", b"2", b"3", b"4", b"5"]
        see(roots([
            leaves,
            [b"2", b"1", b"3", b"4", b"5"],
            [b"1", b"2", b"3", b"4", b"6"],
            leaves[:4],
            [b"ab", b"c"],
            [b"a", b"bc"],
        ]))

    def test_input_not_modified(self):
        leaves = [b"x", b"y", b"z"]
        see(merkle_root(leaves))
        see(leaves)
        see(merkle_root(leaves))

    def test_non_bytes_leaf_rejected(self):
        # Valid lists go through the same guard, so the harness does not tell which calls must fail.
        cases = (["text"], [b"ok"], [b"ok", 5], [None], [b""], [b"ok", ["nested"]], [b"a", b"b", b"c"], [1])
        for leaves in cases:
            with raised(TypeError, ValueError):
                see(merkle_root(leaves))

    @within(max_s=1.0, clock="cpu")
    def test_ten_thousand_leaves(self):
        leaves = [i.to_bytes(4, "big") for i in range(10000)]
        see(merkle_root(leaves))
