"""Edge-case inputs for the differential family: boundary values of each parameter's type, one at a time.

Random mutation of the tests' literal arguments rarely reaches the inputs that
wrong-but-passing code gets wrong: the empty input, one element, zero, a
negative, duplicates, sorted and reversed orders. These are enumerated here,
type by type, from each call site of the entry point: one parameter replaced
by each of its type's boundary values (the others kept as the site has them),
then every parameter at its emptiest at once. The types never change, so the
reference still decides what is inside the contract (with the task's stated
precondition, ``[contract] requires``).

Kept by hand next to the Hypothesis-drawn batches (``drawn.py``): the values
are a short fixed list per type, enumerated in a fixed order so that a short
prefix reaches every parameter of every site, which a strategy's own order
does not promise (docs/tasks.md, "The differential family's searchers").
"""

from __future__ import annotations

from typing import Any

_INTS = (0, 1, -1, 2, -2, 10, 1000)
_FLOATS = (0.0, 1.0, -1.0, 0.5, -0.5, 1e-09, 1e9)


def boundaries(value: Any, depth: int = 0) -> list[Any]:
    """Values of ``value``'s exact type at its type's boundaries (and near ``value``), ``value`` excluded."""
    kind = type(value)
    found: list[Any] = []
    if kind is bool:
        found = [not value]
    elif kind is int:
        found = [*_INTS, value + 1, value - 1, -value]
    elif kind is float:
        found = [*_FLOATS, -value]
    elif kind is str:
        found = ["", value[:1], " ", value[:1] * 2, value[::-1], value + value[-1:], value.upper(), value.lower()]
    elif kind in (list, tuple):
        items = list(value)
        found = [kind(v) for v in _sequences(items, depth)]
    elif kind in (set, frozenset):
        ordered = sorted(value, key=repr)
        found = [kind(), kind(ordered[:1])]
    elif kind is dict:
        first = list(value.items())[:1]
        found = [{}, dict(first)]
    unique: dict[str, Any] = {}
    for candidate in found:
        if type(candidate) is kind and repr(candidate) != repr(value):
            unique.setdefault(repr(candidate), candidate)
    return list(unique.values())


def _sequences(items: list[Any], depth: int) -> list[list[Any]]:
    if not items:
        return []
    first = items[0]
    out: list[list[Any]] = [[], [first], [first, first], items + items[-1:], items[::-1]]
    try:
        ordered = sorted(items)
        out += [ordered, ordered[::-1]]
    except TypeError:
        pass
    if depth < 2:
        out += [[b] for b in boundaries(first, depth + 1)[:4]]
        out += [[b, b] for b in boundaries(first, depth + 1)[:2]]
    return out


def emptiest(value: Any) -> Any:
    """The smallest value of ``value``'s type: 0, 0.0, empty; ``value`` itself for other types."""
    kind = type(value)
    if kind in (int, float, str, list, tuple, set, frozenset, dict) and kind is not bool:
        return kind()
    return value


def edge_inputs(sites: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Every site with one parameter at a boundary, then with all at their emptiest.

    Ordered so that a short prefix covers every site and parameter: the k-th boundary of each parameter of
    each site before any (k+1)-th.
    """
    rounds: list[list[tuple[Any, ...]]] = []
    for args in sites:
        for position, value in enumerate(args):
            for k, boundary in enumerate(boundaries(value)):
                while len(rounds) <= k:
                    rounds.append([])
                rounds[k].append((*args[:position], boundary, *args[position + 1:]))
    ordered = [args for batch in rounds for args in batch] + [tuple(emptiest(v) for v in args) for args in sites]
    seen = {repr(s) for s in sites}
    found: dict[str, tuple[Any, ...]] = {}
    for args in ordered:
        if repr(args) not in seen:
            found.setdefault(repr(args), args)
    return list(found.values())
