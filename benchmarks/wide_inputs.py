"""Seeded uniform random inputs over wide ranges: the recall benchmark's second ground truth, no small-value bias.

``small_inputs.py`` enumerates small values, so the set it selects holds only
mutants that small values expose. This draws instead, by each parameter's type
(read from the problem's call sites, as there) and nothing else: integers
uniform in +-S with the scale S uniform among 10, 10^2, 10^3 and 10^4 (so
every magnitude up to 10^4 is drawn as often as the small ones), floats
likewise with two decimals, strings and lists of a length uniform in 0..50
(items of nested containers 0..8), strings over the problem's own characters
or, for half of them, those plus letters, digits and a space. A tuple of one
length at every site is a record, drawn field by field. Written here, with
``random.Random``: none of the red agent's searchers (mutated literals, edge
cases, Hypothesis strategies, branch values) takes part.
"""

from __future__ import annotations

import ast
import random
import string
from typing import Any

from small_inputs import site_strings

SCALES = (10, 100, 1000, 10_000)
LONGEST = 50
LONGEST_INNER = 8
MAX_CHARS = 2000
_EXTRA = string.ascii_letters + string.digits + " "


def _characters(sites: list[tuple[Any, ...]]) -> str:
    chars = {c for text in site_strings(sites) for c in text}
    return "".join(sorted(chars)) or "ab "


def wide_value(values: list[Any], rng: random.Random, chars: str, depth: int = 0) -> Any:
    """A random value of one of the types in ``values`` (one parameter position, or a container's items)."""
    value = rng.choice(values)
    kind = type(value)
    longest = LONGEST if depth == 0 else LONGEST_INNER
    if kind is bool:
        return rng.random() < 0.5
    if kind is int:
        scale = rng.choice(SCALES)
        return rng.randint(-scale, scale)
    if kind is float:
        scale = rng.choice(SCALES)
        return round(rng.uniform(-scale, scale), 2)
    if kind is str:
        alphabet = chars if rng.random() < 0.5 else "".join(sorted(set(chars + _EXTRA)))
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest)))
    if kind in (list, tuple, set, frozenset) and depth < 3:
        same = [v for v in values if type(v) is kind]
        if kind is tuple and len({len(v) for v in same}) == 1:  # a record: field by field
            return tuple(wide_value([v[i] for v in same], rng, chars, depth + 1) for i in range(len(same[0])))
        items = [i for v in same for i in v]
        if not items:
            return kind()
        return kind(wide_value(items, rng, chars, depth + 1) for _ in range(rng.randint(0, longest)))
    if kind is dict and depth < 3:
        same = [v for v in values if type(v) is dict]
        keys = [k for v in same for k in v]
        vals = [x for v in same for x in v.values()]
        if not keys:
            return {}
        return {wide_value(keys, rng, chars, depth + 1): wide_value(vals, rng, chars, depth + 1)
                for _ in range(rng.randint(0, LONGEST_INNER))}
    return value  # None or an opaque value: as the site has it


def _reads_back(args: tuple[Any, ...]) -> bool:
    text = repr(args)
    if len(text) > MAX_CHARS:
        return False
    try:
        return repr(ast.literal_eval(text)) == text
    except (ValueError, SyntaxError):
        return False


def wide_inputs(sites: list[tuple[Any, ...]], count: int, seed: str) -> list[str]:
    """``count`` distinct argument tuples (literal source) of the sites' arities, drawn with ``seed``."""
    rng = random.Random(f"wide:{seed}")
    chars = _characters(sites)
    by_arity: dict[int, list[tuple[Any, ...]]] = {}
    for args in sites:
        by_arity.setdefault(len(args), []).append(args)
    groups = [group for _, group in sorted(by_arity.items())]
    found: dict[str, None] = {}
    for _ in range(count * 4):
        if len(found) >= count:
            break
        group = rng.choice(groups)
        value = tuple(wide_value([s[i] for s in group], rng, chars) for i in range(len(group[0])))
        if _reads_back(value):
            found.setdefault(repr(value))
    return list(found)
