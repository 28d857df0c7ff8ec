"""Hidden drivers for evaluate: Python semantics, strict rejection, and resource limits.

Drivers record each expression's outcome, the value (exactly as typed, so an
int and a float differ) or the refusal; the host compares the record with the
reference solution's. No expected value appears here, and no oracle runs here.
"""

import contextlib

from observe import drawn, raised, see, within

_type = type  # taken before the submission is imported
_int_hex = int.__format__
_REPR_SAFE_BITS = 14_000  # Python refuses repr() of an int of more than 4300 digits (sys.int_info)

from solution import evaluate  # noqa: E402


def exact(value):
    """``value`` as ``see`` can record it: an exact int too long for repr() is spelled in hex.

    ``see`` reads an int with repr(), which raises ValueError past 4300 digits,
    so an allowed 5000-digit result would be recorded as a refusal.
    """
    if _type(value) is int and value.bit_length() > _REPR_SAFE_BITS:
        return ["int-hex", _int_hex(value, "x")]
    return value


def outcome(expression):
    """Record the value, or ValueError (any subclass), or the nearest builtin of any other exception."""
    with raised(ValueError):
        see(exact(evaluate(expression)))


def outcomes(*expressions):
    for expression in expressions:
        outcome(expression)


def refusals(*expressions):
    """Record whether each over-limit expression is refused.

    A value ends the run: the later expressions are bigger still, and an
    evaluator that computed this one would only burn the time limit on them.
    """
    for expression in expressions:
        returned = []
        with raised(ValueError):
            returned.append(evaluate(expression))
        if returned:
            return


def value_or_refusal(expression):
    """Record only whether a ValueError-or-value contract held: anything else raised is recorded by name."""
    with raised(), contextlib.suppress(ValueError):
        evaluate(expression)


class TestArithmetic:
    def test_precedence_and_parentheses(self):
        outcomes("1 + 2 * 3", "(1 + 2) * 3", "10 - 4 - 3", "2 * (3 + (4 - 1)) * 2", "8 - 2 * 3 ** 2 % 5")

    def test_power_associativity_and_unary_minus(self):
        outcomes("2 ** 3 ** 2", "-2 ** 2", "(-2) ** 2", "2 ** -1", "4 ** 0.5", "-2 ** -2", "2 ** -2 ** 2")

    def test_division_family(self):
        outcomes("7 / 2", "6 / 2", "7 // 2", "-7 // 2", "-7 % 3", "7 % -3", "7.5 // 2", "7.5 % 2", "-0.0 / 1")

    def test_float_literals(self):
        outcomes("0.1 + 0.2", ".5 + 2.", "1e3 * 2", "3.14", "1E-2", "2.5e+1")

    def test_unary_minus_chains_and_whitespace(self):
        outcomes("--3", "-(-(2))", "3 - -2", "-" * 50 + "5", "-" * 51 + "5", "  1 +\t2 ", "\n1 * 2\n")

    def test_matches_python_on_random_expressions(self):
        rng = drawn("expressions")

        def gen(depth):
            if depth == 0 or rng.random() < 0.3:
                return rng.choice([f"{rng.randrange(0, 30)}", f"{rng.randrange(10)}.{rng.randrange(10)}"])
            op = rng.choice(["+", "-", "*", "/", "//", "%"])
            text = f"{gen(depth - 1)} {op} {gen(depth - 1)}"
            return rng.choice([text, "(" + text + ")", "-(" + text + ")"])

        for _ in range(400):
            outcome(gen(4))

    def test_large_allowed_values_are_exact(self):
        outcomes("2 ** 1000", "10 ** 5000 + 1", "(10 ** 4000) * (10 ** 4000) // 10 ** 7999", "10 ** 9999",
                 "-(10 ** 9999) + 1", "3 ** 20959")


class TestRejected:
    # Valid expressions are mixed in, so the harness does not tell which calls must fail.

    def test_syntax_errors_and_empty(self):
        outcomes("", "   ", "1 +", "(1)", "(1", "1)", "1 2", "* 3", "1 ++* 2", "()", "1;2", "1\n2", "( 1 )", "1.5.2")

    def test_division_by_zero(self):
        outcomes("1 / 0", "1 // 0", "1 % 0", "0 / 1", "1.0 / 0.0", "0 ** -1", "0 ** 0", "5 % (2 - 2)", "0.0 % 5")

    def test_names_calls_and_other_syntax(self):
        outcomes(
            "x", "x + 1", "abs(-1)", "print(1)", "'a'", "b'a'", "True", "None", "1j", "2 + 3j",
            "[1]", "(1, 2)", "{1: 2}", "1 < 2", "1 == 1", "1 & 2", "1 | 2", "1 ^ 2", "1 << 2", "~1",
            "not 1", "1 and 2", "1 if 1 else 2", "lambda: 1", "a.b", "f'{1}'", "(x := 1)", "...",
            "1 - 2", "(3)",
        )

    def test_code_injection_payloads(self):
        outcomes(
            "__import__('os').getcwd()",
            "().__class__.__bases__[0].__subclasses__()",
            "(1).__class__",
            "().__class__.__mro__.__len__()",
            "(1).__class__.__name__.__len__()",
            "(9).real",
            "(9) + 1",
            "[c for c in ().__class__.__base__.__subclasses__()]",
            "open('/etc/hostname').read()",
            "globals()",
            "__builtins__",
            "9 .real",
        )

    def test_complex_result_rejected(self):
        outcomes("(-8) ** (1 / 3)", "(-1) ** 0.5", "8 ** (1 / 3)", "(-8) ** 3", "(-1.5) ** 2", "(-2) ** -1.5")

    def test_non_string_input(self):
        for value in (None, "1 + 1", 42, b"1 + 1", ["1"], 1.5, "2 * 3"):
            with raised(TypeError, ValueError):
                see(evaluate(value))


class TestLimits:
    """Cheap over-limit cases come first, so an unguarded evaluator is caught before the monsters."""

    @within(max_s=1.0, clock="cpu")
    def test_huge_powers_refused_quickly(self):
        outcomes("7 ** 1000", "(-3) ** 5001", "2 ** 33000")
        refusals("7 ** 100000", "10 ** 20000", "2 ** 100000", "(-3) ** 50001",
                 "2 ** 10 ** 9", "9 ** 9 ** 9", "10 ** 10 ** 10 ** 10")

    def test_huge_products_refused(self):
        outcomes("(10 ** 5000) * (10 ** 4999)", "-(10 ** 4000) * 10 ** 5000")
        refusals("(10 ** 5000) * (10 ** 5000) * (10 ** 5000)", "(10 ** 9000) * (10 ** 9000)",
                 "(2 ** 30000) * (2 ** 30000)", "-(10 ** 6000) * 10 ** 6000")

    def test_float_overflow_refused(self):
        outcomes("10.0 ** 300", "1e308 * 1", "0.5 ** -1000")
        refusals("10.0 ** 400", "1e308 * 10", "1e999", "-1e999", "2.0 ** 100000", "0.5 ** -5000",
                 "1e308 + 1e308")

    @within(max_s=3.0, clock="cpu")
    def test_deep_nesting_gives_value_or_value_error(self):
        outcomes("(" * 50 + "1" + ")" * 50, "1 + " * 300 + "1", "2 ** 3 ** 2", "2 ** 2 ** 2 ** 2 ** 2")
        for expression in ("(" * 1000 + "1" + ")" * 1000, "-" * 10000 + "1", "1 + " * 5000 + "1",
                           "2 ** " * 3000 + "1"):
            value_or_refusal(expression)
