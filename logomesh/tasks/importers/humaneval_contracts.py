"""The contracts HumanEval's prompts state, written as ``[contract]`` tables (docs/tasks.md, "Contracts").

Read off each problem's docstring by hand, once: a precondition only where the
prompt states it ("Given a positive floating point number", "Constraints:
1 <= num <= 1000", "It is assumed that the input lists will be non-empty",
an explicit list of valid tokens), and an answer equivalence where the
problem's own check accepts more than the canonical answer (the eight problems
``check_drivers.looser`` reports, plus ``median``'s ``3.0 == 3``). Every
precondition holds on every input of the problem's own check
(``tests/test_humaneval_contracts.py``). Keyed by HumanEval problem number;
this is importer data, not engine knowledge: it is written into the imported
task folders and the engine reads it from there.
"""

from __future__ import annotations

import json
from typing import Any

_DIGITS = "('zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine')"

CONTRACTS: dict[int, dict[str, Any]] = {
    0: {"requires": "threshold > 0"},  # "closer to each other than given threshold"
    1: {"requires": "set(paren_string) <= {'(', ')', ' '} and paren_string.count('(') == paren_string.count(')')"
                    " and all(paren_string[:i].count('(') >= paren_string[:i].count(')')"
                    " for i in range(len(paren_string)))"},  # "groups of nested parentheses", "Separate groups are
    # balanced (each open brace is properly closed)", "Ignore any spaces in the input string"
    2: {"requires": "number > 0", "answer": ["tolerance"], "rel_tol": 0.0, "abs_tol": 1e-6},
    4: {"requires": "len(numbers) > 0", "answer": ["tolerance"], "rel_tol": 0.0, "abs_tol": 1e-6},
    6: {"requires": "set(paren_string) <= {'(', ')', ' '} and all(g.count('(') == g.count(')')"
                    " and all(g[:i].count('(') >= g[:i].count(')') for i in range(len(g)))"
                    " for g in paren_string.split())"},
    # "a string represented multiple groups for nested parentheses separated by spaces"
    11: {"requires": "set(a) <= {'0', '1'} and set(b) <= {'0', '1'}"},
    15: {"requires": "n >= 0"},  # "numbers starting from 0 upto n inclusive"
    17: {"requires": "all(t in ('o', 'o|', '.|') for t in music_string.split())"},
    19: {"requires": f"all(w in {_DIGITS} for w in numbers.split())"},
    20: {"requires": "len(numbers) >= 2", "answer": ["property"],  # ties: "two that are the closest"
         "holds": "type(result) is tuple and len(result) == 2 and result[0] <= result[1]"
                  " and sorted(numbers).count(result[0]) >= 1 + (result[0] == result[1]) and result[1] in numbers"
                  " and result[1] - result[0] == min(b - a for a, b in zip(sorted(numbers), sorted(numbers)[1:]))"},
    21: {"requires": "len(numbers) >= 2"},
    25: {"requires": "n >= 1"},  # "Input number should be equal to the product of all factors" (of primes: 1 or more)
    32: {"requires": "len(xs) > 0 and len(xs) % 2 == 0 and xs[-1] != 0", "answer": ["property"],
         "holds": "isinstance(result, (int, float)) and abs(poly(xs, result)) < 1e-4"},
    33: {"answer": ["sequence"]},
    35: {"requires": "len(l) > 0"},  # "Return maximum element in the list"
    37: {"answer": ["sequence"]},
    39: {"requires": "n >= 1"},  # "returns n-th number that is a Fibonacci number and it's also prime"
    41: {"requires": "n >= 0"},
    44: {"requires": "x > 0 and 2 <= base < 10"},  # "base numbers are less than 10"; 0 is no example (the
    # canonical answer for it, '', is an accident)
    45: {"requires": "a > 0 and h > 0"},  # "Given length of a side and high return area for a triangle"
    46: {"requires": "n >= 0"},
    47: {"requires": "len(l) > 0", "answer": ["tolerance"]},
    49: {"requires": "n >= 0 and p > 1"},  # 2^n modulo p (the canonical modp(0, 1) is 1, an accident)
    50: {"requires": "all('a' <= c <= 'z' for c in s)"},  # "string encoded with encode_shift function" (whose
    # every character is chr(... % 26 + ord("a")))
    52: {"answer": ["truthy"]},
    55: {"requires": "n >= 0"},
    56: {"requires": "set(brackets) <= {'<', '>'}", "answer": ["truthy"]},  # "a string of '<' and '>'"
    59: {"requires": "n > 1 and any(n % d == 0 for d in range(2, int(n ** 0.5) + 1))"},  # "Assume n > 1 and not prime"
    60: {"requires": "n >= 1"},  # "sums numbers from 1 to n"
    61: {"requires": "set(brackets) <= {'(', ')'}", "answer": ["truthy"]},  # "a string of '(' and ')'"
    63: {"requires": "n >= 0"},
    67: {"requires": "n >= sum(int(w) for w in s.split() if w.isdecimal())"},  # "an integer that represent the total
    # number of the fruits in the basket", "this basket contains apples, oranges, and mango fruits"
    68: {"requires": "len(arr) <= 10000 and all(v >= 0 for v in arr)"},  # "0 <= node.value"
    69: {"requires": "len(lst) > 0 and all(v > 0 for v in lst)"},  # "a non-empty list of positive integers"
    71: {"requires": "a > 0 and b > 0 and c > 0"},  # "Given the lengths of the three sides of a triangle"
    75: {"requires": "a < 100 or pow(2 * 3 * 5 * 7 * 11 * 13 * 17 * 19 * 23 * 29 * 31 * 37 * 41 * 43 * 47 * 53"
                     " * 59 * 61 * 67 * 71 * 73 * 79 * 83 * 89 * 97, a.bit_length(), a) == 0"},
    # "Knowing that (a) is less then 100"; the check itself calls with 105 to 1001 (7 * 11 * 13), so also any a whose
    # prime factors are all below 100 (a divides a power of their product)
    77: {"requires": "isinstance(a, int)"},  # "takes an integer a", "you may assume the input is always valid"
    78: {"requires": "all(c in '0123456789ABCDEF' for c in num)"},  # "symbols A..F are always uppercase"
    79: {"requires": "decimal >= 0"},  # "Each character in the string will be '0' or '1'" (besides the 'db's)
    81: {"requires": "all(g >= 0 for g in grades)"},  # a list of GPAs, the table's last rows "> 0.0 D-", "0.0 E"
    83: {"requires": "n >= 1"},  # "Given a positive integer n"
    84: {"requires": "0 <= N <= 10000"},  # "Constraints: 0 <= N <= 10000"
    85: {"requires": "len(lst) > 0"},  # "Given a non-empty list of integers"
    88: {"requires": "all(v >= 0 for v in array)"},  # "an array of non-negative integers"
    93: {"requires": "all(c.isalpha() or c == ' ' for c in message)"},  # "Assume only letters" (the examples'
    # words are separated by spaces)
    94: {"requires": "any(v > 1 and all(v % d for d in range(2, int(v ** 0.5) + 1)) for v in lst)"},  # "find the
    # largest prime value": the list holds a prime
    96: {"requires": "n >= 0"},  # "takes an non-negative integer"
    97: {"requires": "isinstance(a, int) and isinstance(b, int)"},  # "takes two integers", "Assume the input is
    # always valid"
    99: {"requires": "isinstance(value, str) and abs(float(value)) < float('inf')"},  # "a value (string)
    # representing a number" (float() raising counts as false)
    100: {"requires": "n >= 1"},  # "Given a positive integer n"
    102: {"requires": "x > 0 and y > 0"},  # "takes two positive numbers x and y"
    103: {"requires": "n > 0 and m > 0"},  # "two positive integers n and m"
    104: {"requires": "all(v > 0 for v in x)"},  # "a list of positive integers"
    106: {"requires": "n >= 0"},  # "returns a list of size n"
    107: {"requires": "1 <= n <= 1000"},  # "1 <= n <= 10^3"
    109: {"requires": "len(set(arr)) == len(arr)"},  # "guaranteed to have unique elements"
    110: {"requires": "len(lst1) > 0 and len(lst2) > 0"},  # "the input lists will be non-empty"
    111: {"requires": "test == '' or all(len(w) == 1 and w.islower() for w in test.split(' '))"},  # "a string
    # representing a space separated lowercase letters"
    113: {"requires": "all(s.isdigit() for s in lst)"},  # "each string consists of only digits"
    114: {"requires": "len(nums) > 0"},  # "find the minimum sum of any non-empty sub-array of nums"
    115: {"requires": "1 <= len(grid) <= 100 and all(1 <= len(r) <= 100 and set(r) <= {0, 1} for r in grid)"
                     " and len({len(r) for r in grid}) == 1 and 1 <= capacity <= 10"},
    117: {"requires": "all(c.isalpha() or c == ' ' for c in s)"},  # "only letters and spaces"
    118: {"requires": "all(c.isascii() and c.isalpha() for c in word)"},  # "You may assume that the given string
    # contains English letter only"
    119: {"requires": "len(lst) == 2 and all(set(s) <= {'(', ')'} for s in lst)"},
    120: {"requires": "1 <= len(arr) <= 1000 and all(-1000 <= v <= 1000 for v in arr) and 0 <= k <= len(arr)"},
    121: {"requires": "len(lst) > 0"},  # "Given a non-empty list of integers"
    122: {"requires": "1 <= len(arr) <= 100 and 1 <= k <= len(arr)"},
    123: {"requires": "n >= 1"},  # "Given a positive integer n"
    126: {"requires": "all(isinstance(v, int) and v >= 0 for v in lst)"},  # "Assume no negative numbers and only
    # integers"
    127: {"requires": "interval1[0] <= interval1[1] and interval2[0] <= interval2[1]"},
    129: {"requires": "len(grid) >= 2 and all(len(r) == len(grid) for r in grid) and k >= 1"
                     " and all(1 <= v <= len(grid) ** 2 for r in grid for v in r)"},  # "a grid with N rows and N
    # columns (N >= 2) and a positive integer k", "Every integer in the range [1, N * N] inclusive appears exactly once"
    # (but the check calls with [[1, 3], [3, 2]]: the values' range kept, not that each appears once)
    130: {"requires": "n >= 0"},  # "a non-negative integer number n"
    131: {"requires": "n >= 1"},  # "Given a positive integer n"
    132: {"requires": "set(string) <= {'[', ']'}"},  # "contains only square brackets"
    135: {"requires": "len(set(arr)) == len(arr)"},  # "The given array will not contain duplicate values"
    137: {"requires": "all(isinstance(v, (int, float)) or (isinstance(v, str)"
                     " and abs(float(v.replace(',', '.'))) < float('inf')) for v in (a, b))"},  # "takes integers,
    # floats, or strings representing real numbers", "the floating point might be . or ,"
    139: {"requires": "n > 0"},  # "where n > 0"
    143: {"requires": "1 <= len(sentence) <= 100 and all(c.isalpha() or c == ' ' for c in sentence)"},
    144: {"requires": "all(re.fullmatch('[0-9]+/[0-9]+', f) and all(int(v) > 0 for v in f.split('/'))"
                     " for f in (x, n))"},  # "<numerator>/<denominator> where both numerator and denominator are
    # positive whole numbers", "You can assume that x, and n are valid fractions"
    147: {"requires": "n >= 1"},  # "You are given a positive integer n"
    149: {"requires": "all(isinstance(w, str) for w in lst)"},  # "The list is always a list of strings and never an
    # array of numbers"
    152: {"requires": "len(game) == len(guess)"},  # "two arrays of scores and guesses of equal length"
    154: {"requires": "len(a) > 0 and len(b) > 0"},  # "You are given 2 words"
    156: {"requires": "1 <= number <= 1000"},  # "Restrictions: 1 <= num <= 1000"
    157: {"requires": "a > 0 and b > 0 and c > 0"},  # "Given the lengths of the three sides of a triangle"
    158: {"requires": "len(words) > 0"},  # "Return the word with maximum number of unique characters"
    159: {"requires": "0 <= number <= 1000 and 0 <= need <= 1000 and 0 <= remaining <= 1000"},
    160: {"requires": "len(operator) >= 1 and len(operand) == len(operator) + 1 and all(v >= 0 for v in operand)"
                     " and all(op in ('+', '-', '*', '//', '**') for op in operator)"},  # "The basic algebra
    # operations: Addition ( + ) Subtraction ( - ) Multiplication ( * ) Floor division ( // ) Exponentiation ( ** )"
    163: {"requires": "a > 0 and b > 0"},  # "Given two positive integers a and b"
}


def contract_table(problem_number: int, inferred: str = "") -> list[str]:
    """The ``[contract]`` table's lines for a problem: what its prompt states and the precondition inferred from
    its tests (``inferred_contracts``); none when there is neither."""
    data = CONTRACTS.get(problem_number, {})
    if not data and not inferred:
        return []
    lines = ["[contract]  # what the prompt states (docs/tasks.md, \"Contracts\")" if data else "[contract]"]
    for key in ("requires", "answer", "rel_tol", "abs_tol", "holds"):
        if key in data:
            value = data[key]
            text = repr(value) if isinstance(value, float) else _toml(value)
            lines.append(f"{key} = {text}")
    if inferred:
        lines += ["# inferred from the task's own test inputs at import: a divergence outside it is reported at low",
                  f"inferred = {json.dumps(inferred, ensure_ascii=False)}"]
    return [*lines, ""]


def _toml(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "'" + str(value) + "'" if "'" not in str(value) else '"' + str(value).replace('"', '\\"') + '"'
