"""Judge tests for is_valid_email: the practical subset, limits, and linear time."""

import time
import unittest

from solution import is_valid_email

PER_CALL_BUDGET = 0.5  # seconds; a linear validator needs about a millisecond for 50 000 characters


def domain_of_length(n):
    """A valid domain of exactly n characters: 63-character labels, then a letters-only TLD."""
    labels = []
    remaining = n
    while remaining > 66:
        labels.append("a" * 63)
        remaining -= 64
    labels.append("b" * (remaining - 3))
    labels.append("cc")
    domain = ".".join(labels)
    assert len(domain) == n, len(domain)
    return domain


class TestValid(unittest.TestCase):
    def test_common_addresses(self):
        for address in (
            "user@example.com",
            "first.last@example.co.uk",
            "a@b.io",
            "user+tag@sub.domain.example.org",
            "x_y-z@my-host.example",
            "1234567890@digits123.com",
            "user@123.example.com",
        ):
            self.assertIs(is_valid_email(address), True, address)

    def test_all_atext_characters(self):
        for address in ("!#$%&'*+-/=?^_`{|}~@example.com", "o'brien@example.ie", "a.b.c.d.e@example.com"):
            self.assertIs(is_valid_email(address), True, address)

    def test_case_does_not_matter(self):
        self.assertIs(is_valid_email("USER@EXAMPLE.COM"), True)
        self.assertIs(is_valid_email("MiXeD.Case@Example.Org"), True)

    def test_length_limits_at_the_edge_are_accepted(self):
        self.assertIs(is_valid_email("a" * 64 + "@example.com"), True)
        self.assertIs(is_valid_email("user@" + "l" * 63 + ".com"), True)
        self.assertIs(is_valid_email("user@" + domain_of_length(255)), True)


class TestInvalid(unittest.TestCase):
    def assertInvalid(self, *addresses):
        for address in addresses:
            self.assertIs(is_valid_email(address), False, repr(address))

    def test_at_sign_structure(self):
        self.assertInvalid("", "@", "plainaddress", "@example.com", "user@", "a@b@example.com", "user@@example.com")

    def test_local_part_dots(self):
        self.assertInvalid(".user@example.com", "user.@example.com", "us..er@example.com", ".@example.com")

    def test_local_part_characters(self):
        self.assertInvalid('"quoted"@example.com', "a(b)@example.com", "a,b@example.com", "a;b@example.com",
                           "a[b]@example.com", "a\\b@example.com", "a:b@example.com", "a<b>@example.com")

    def test_domain_labels(self):
        self.assertInvalid("user@localhost", "user@.example.com", "user@example..com", "user@example.com.",
                           "user@-example.com", "user@example-.com", "user@exa_mple.com", "user@exa!mple.com")

    def test_top_level_domain(self):
        self.assertInvalid("user@example.c", "user@example.c0m", "user@example.123", "user@example.c-m",
                           "user@127.0.0.1", "user@[127.0.0.1]", "user@[IPv6:::1]")

    def test_length_limits_exceeded(self):
        self.assertInvalid("a" * 65 + "@example.com", "user@" + "l" * 64 + ".com", "user@" + domain_of_length(256))

    def test_whitespace_and_control_characters(self):
        self.assertInvalid("user@example.com\n", "\nuser@example.com", " user@example.com", "user@example.com ",
                           "us er@example.com", "user@exa mple.com", "user\t@example.com", "user@example.com\x00",
                           "user\r\n@example.com")

    def test_non_ascii(self):
        self.assertInvalid("jöse@example.com", "user@exämple.com", "user@example.cöm", "usér@例え.jp",
                           "user@example.ｃｏｍ")

    def test_non_string_input_returns_false(self):
        for value in (None, 42, b"user@example.com", ["user@example.com"]):
            self.assertIs(is_valid_email(value), False, repr(value))


class TestLinearTime(unittest.TestCase):
    """Grow each hostile pattern until 50 000 characters; stop at the first slow call."""

    HOSTILE = {
        "long local then bang": lambda n: "a" * n + "!",
        "dotted atoms then bad char": lambda n: "a." * (n // 2) + "@",
        "dotted atoms no at": lambda n: "a." * (n // 2) + "a",
        "hyphen labels": lambda n: "user@" + "a-" * (n // 2) + "!",
        "many labels bad tld": lambda n: "user@" + "a." * (n // 2) + "1",
        "label chars then bad": lambda n: "user@" + "a" * n + ".c0",
        "many at signs": lambda n: "a@" * (n // 2),
        "local plus tags": lambda n: "a+" * (n // 2) + "@@",
    }

    def test_hostile_inputs_answer_quickly(self):
        sizes = list(range(4, 64, 2)) + [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 50000]
        for name, make in self.HOSTILE.items():
            for n in sizes:
                text = make(n)
                started = time.perf_counter()
                result = is_valid_email(text)
                elapsed = time.perf_counter() - started
                self.assertIs(result, False, name)
                self.assertLess(elapsed, PER_CALL_BUDGET, "%s: %d characters took %.2f s" % (name, n, elapsed))

    def test_long_valid_looking_input_is_rejected_by_length(self):
        started = time.perf_counter()
        self.assertIs(is_valid_email("a" * 25000 + "@" + "b" * 25000 + ".com"), False)
        self.assertLess(time.perf_counter() - started, PER_CALL_BUDGET)


if __name__ == "__main__":
    unittest.main()
