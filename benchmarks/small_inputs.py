"""Exhaustive small inputs by parameter type: the recall benchmark's ground truth, independent of the red agent.

Every argument tuple whose values are small of each parameter's type, in a
fixed order: integers -3..10, a few floats in [-1.5, 3], both booleans,
every string of length 0 to 3 over a three-character alphabet (the commonest
characters of the problem's own string literals), every list of length 0 to 3
(items smaller still: integers -2..2, strings of length 0 to 2), fixed-arity
tuples field by field, dicts of 0 to 2 entries, sets of 0 to 3 items. The
types come from the literal arguments of the problem's check and examples;
their content does not (a tuple of one length at every site is a record,
taken field by field). When the product over the parameters exceeds ``cap``,
a seeded sample of ``cap`` of them (without replacement) is taken instead.
Nothing here mutates a literal or draws at random by shape as the red agent's
searchers do: it enumerates.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

INTS = tuple(range(-3, 11))
FLOATS = (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
ITEM_INTS = tuple(range(-2, 3))
ITEM_FLOATS = (-1.0, 0.0, 0.5, 1.0, 2.0)
MAX_CHARS = 400


def site_strings(sites: list[tuple[Any, ...]]) -> Iterator[str]:
    """Every string in the sites' arguments, at any depth (container items, dict keys and values)."""
    def walk(value: Any) -> Iterator[str]:
        if type(value) is str:
            yield value
        elif isinstance(value, list | tuple | set | frozenset):
            for v in value:
                yield from walk(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                yield from walk(k)
                yield from walk(v)

    for site in sites:
        yield from walk(site)


def alphabet(sites: list[tuple[Any, ...]]) -> str:
    """The three commonest characters of the sites' strings (at any depth), filled up from ``ab `` ."""
    counts = Counter(c for text in site_strings(sites) for c in text)
    chars = [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:3]
    for extra in "ab ":
        if len(chars) < 3 and extra not in chars:
            chars.append(extra)
    return "".join(chars)


def _strings(chars: str, longest: int) -> list[str]:
    return ["".join(p) for n in range(longest + 1) for p in itertools.product(chars, repeat=n)]


def small_values(values: list[Any], chars: str, depth: int = 0) -> list[Any]:
    """Every small value of the types in ``values`` (one parameter position, or a container's items)."""
    by_type: dict[type, list[Any]] = {}
    for value in values:
        by_type.setdefault(type(value), []).append(value)
    out: list[Any] = []
    for kind, seen in by_type.items():
        if kind is bool:
            out += [False, True]
        elif kind is int:
            out += list(INTS if depth == 0 else ITEM_INTS)
        elif kind is float:
            out += list(FLOATS if depth == 0 else ITEM_FLOATS)
        elif kind is str:
            out += _strings(chars, 3 if depth == 0 else 2 if depth == 1 else 1)
        elif kind in (list, tuple) and depth < 3:
            if kind is tuple and len({len(s) for s in seen}) == 1 and seen[0]:  # one arity: a record, by field
                fields = [small_values([s[i] for s in seen], chars, depth + 1)[:6] for i in range(len(seen[0]))]
                out += [tuple(p) for p in itertools.product(*fields)]
                continue
            items = small_values([i for s in seen for i in s], chars, depth + 1)
            items = items[:7] if depth == 0 else items[:3]
            longest = 3 if depth == 0 else 2
            out += [kind(p) for n in range(longest + 1) for p in itertools.product(items, repeat=n)]
        elif kind in (set, frozenset) and depth < 3:
            items = small_values([i for s in seen for i in s], chars, depth + 1)[:5]
            out += [kind(c) for n in range(4) for c in itertools.combinations(items, n)]
        elif kind is dict and depth < 3:
            keys = small_values([k for s in seen for k in s], chars, depth + 1)[:3]
            vals = small_values([v for s in seen for v in s.values()], chars, depth + 1)[:3]
            out.append({})
            out += [{k: v} for k in keys for v in vals]
            out += [{a: v, b: w} for a, b in itertools.combinations(keys, 2) for v in vals for w in vals]
        else:
            out += seen[:1]  # None or an opaque value: as the site has it
    unique: dict[str, Any] = {}
    for value in out:
        unique.setdefault(repr(value), value)
    return list(unique.values())


def _reads_back(args: tuple[Any, ...]) -> bool:
    text = repr(args)
    if len(text) > MAX_CHARS:
        return False
    try:
        return repr(ast.literal_eval(text)) == text
    except (ValueError, SyntaxError):
        return False


def small_inputs(sites: list[tuple[Any, ...]], cap: int, seed: str) -> list[str]:
    """Argument tuples (literal source) of every arity the sites have: all small ones, or a seeded ``cap`` of them."""
    chars = alphabet(sites)
    by_arity: dict[int, list[tuple[Any, ...]]] = {}
    for args in sites:
        by_arity.setdefault(len(args), []).append(args)
    found: list[str] = []
    share = max(1, cap // max(1, len(by_arity)))
    for arity, group in sorted(by_arity.items()):
        axes = [small_values([s[i] for s in group], chars) for i in range(arity)]
        total = 1
        for axis in axes:
            total *= len(axis)
        picks = range(total) if total <= share else sorted(random.Random(f"{seed}:{arity}").sample(range(total), share))
        for index in picks:
            args = []
            for axis in reversed(axes):
                index, at = divmod(index, len(axis))
                args.append(axis[at])
            value = tuple(reversed(args))
            if _reads_back(value):
                found.append(repr(value))
    return list(dict.fromkeys(found))
