"""Hidden drivers for is_valid_email: the practical subset, limits, and linear time.

Drivers record each answer (``call``, ``see``); the host compares the record
with the reference solution's, type-strictly (``True``, not a truthy value).
Every group of addresses mixes valid and invalid ones, so no answer can be
guessed from the group. Wall-time bounds (``@within``) are measured outside
the process. No expected value appears here.
"""

from observe import call, see, within
from solution import is_valid_email


def domain_of_length(n):
    """A valid-looking domain of exactly n characters: 63-character labels, then a letters-only TLD."""
    labels = []
    remaining = n
    while remaining > 66:
        labels.append("a" * 63)
        remaining -= 64
    labels.append("b" * (remaining - 3))
    labels.append("cc")
    return ".".join(labels)


HOSTILE = {  # name -> maker of a string of about n characters (the last two are valid while short enough)
    "long local then bang": lambda n: "a" * n + "!",
    "dotted atoms then bad char": lambda n: "a." * (n // 2) + "@",
    "dotted atoms no at": lambda n: "a." * (n // 2) + "a",
    "hyphen labels": lambda n: "user@" + "a-" * (n // 2) + "!",
    "many labels bad tld": lambda n: "user@" + "a." * (n // 2) + "1",
    "label chars then bad": lambda n: "user@" + "a" * n + ".c0",
    "many at signs": lambda n: "a@" * (n // 2),
    "local plus tags": lambda n: "a+" * (n // 2) + "@@",
    "dotted atoms then domain": lambda n: "a." * (n // 2) + "a@example.com",
    "many labels good tld": lambda n: "user@" + "a." * (n // 2) + "com",
}


def answers(*addresses):
    for address in addresses:
        call(is_valid_email, address)


class TestValid:
    def test_common_addresses(self):
        answers(
            "user@example.com",
            "first.last@example.co.uk",
            "a@b.io",
            "user+tag@sub.domain.example.org",
            "x_y-z@my-host.example",
            "1234567890@digits123.com",
            "user@123.example.com",
            "user@example",
        )

    def test_all_atext_characters(self):
        answers("!#$%&'*+-/=?^_`{|}~@example.com", "o'brien@example.ie", "a.b.c.d.e@example.com",
                "a\"b@example.com")

    def test_case_does_not_matter(self):
        answers("USER@EXAMPLE.COM", "MiXeD.Case@Example.Org", "user@example.COM", "USER@EXAMPLE.C0M")

    def test_length_limits_at_the_edge_are_accepted(self):
        answers("a" * 64 + "@example.com", "user@" + "l" * 63 + ".com", "user@" + domain_of_length(255),
                "a" * 65 + "@example.com")


class TestInvalid:
    def test_at_sign_structure(self):
        answers("", "@", "plainaddress", "@example.com", "a@example.com", "user@", "a@b@example.com",
                "user@@example.com")

    def test_local_part_dots(self):
        answers(".user@example.com", "user.@example.com", "u.s.er@example.com", "us..er@example.com",
                ".@example.com")

    def test_local_part_characters(self):
        answers('"quoted"@example.com', "a(b)@example.com", "a,b@example.com", "a;b@example.com",
                "a{b}@example.com", "a[b]@example.com", "a\\b@example.com", "a:b@example.com", "a<b>@example.com")

    def test_domain_labels(self):
        answers("user@localhost", "user@.example.com", "user@example..com", "user@example.com.",
                "user@e-x.ample.com", "user@-example.com", "user@example-.com", "user@exa_mple.com",
                "user@exa!mple.com", "user@9.example.com")

    def test_top_level_domain(self):
        answers("user@example.c", "user@example.c0m", "user@example.123", "user@example.c-m", "user@example.cm",
                "user@127.0.0.1", "user@[127.0.0.1]", "user@[IPv6:::1]")

    def test_length_limits_exceeded(self):
        answers("a" * 65 + "@example.com", "user@" + "l" * 64 + ".com", "user@" + domain_of_length(256),
                "a" * 64 + "@" + domain_of_length(255))

    def test_whitespace_and_control_characters(self):
        answers("user@example.com\n", "\nuser@example.com", " user@example.com", "user@example.com ",
                "user@example.com", "us er@example.com", "user@exa mple.com", "user\t@example.com",
                "user@example.com\x00", "user\r\n@example.com", "user@example.com\x7f")

    def test_non_ascii(self):
        answers("jöse@example.com", "user@exämple.com", "jose@example.com", "user@example.cöm", "usér@例え.jp",
                "user@example.ｃｏｍ")

    def test_non_string_input_returns_false(self):
        answers(None, 42, b"user@example.com", "user@example.com", ["user@example.com"])


class TestLinearTime:
    """Each hostile pattern grown to 50 000 characters; the wall time is measured outside the process."""

    @within(max_s=2.0, clock="cpu")
    def test_hostile_inputs_answer_quickly(self):
        sizes = [*range(4, 64, 2), 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 50000]
        for name, make in HOSTILE.items():
            see([name, [is_valid_email(make(n)) for n in sizes]])

    @within(max_s=1.0, clock="cpu")
    def test_long_valid_looking_input_is_rejected_by_length(self):
        answers("a" * 25000 + "@" + "b" * 25000 + ".com", "a" * 64 + "@" + "b" * 60 + ".com")
