"""Property-based inputs for the differential family: drawn with Hypothesis from the shape of the call sites.

Each parameter's strategy is built from the values the task's call sites pass
in that position (``call_sites``): its type, and for containers the types of
their items, never their content. Integers and floats are drawn over a range
that covers the sites' magnitudes; strings over the sites' characters plus a
few others; lists, tuples, sets and dicts of any small size (the empty one
included); sites of different arities are drawn as alternatives. Hypothesis
supplies the strategies, their bias towards small and boundary values (0, the
empty container, the ends of a range) and the generation order; a fixed seed
and no example database make the draw a function of the call sites and the
seed: same task, same inputs, byte for byte.

Only the inputs are made here, from data (the drivers' literals): no task or
submission code runs on the host. Each batch then runs as every differential
batch does, as observation drivers in the sandbox, the submission and the
reference in separate processes, compared on the host; the task's
precondition is decided in the sandbox too, so an input outside it is never
counted (``differential.compare``). Hypothesis's own shrinker is not used: it
would call the code under test once per candidate, in the host's process; the
family keeps the shortest diverging input of a batch instead (``shrink``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

_EXTRA_CHARS = " aA0"
_MAX_TEXT = 12
_MAX_ITEMS = 6


def _bound(values: Iterable[float]) -> float:
    return max([10.0, *(2 * abs(v) for v in values)])


def shape_strategy(values: list[Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of the types in ``values`` (all of one parameter position), of any content and small size."""
    by_type: dict[type, list[Any]] = {}
    for value in values:
        by_type.setdefault(type(value), []).append(value)
    options: list[st.SearchStrategy[Any]] = []
    for kind, seen in by_type.items():
        if kind is bool:
            options.append(st.booleans())
        elif kind is int:
            limit = int(min(_bound(seen), 10**6))
            options += [st.integers(-limit, limit), st.integers(-10 * limit, 10 * limit)]
        elif kind is float:
            span = min(_bound(seen), 1e6)
            options.append(st.floats(-span, span, allow_nan=False, allow_infinity=False))
        elif kind is str:
            chars = sorted({c for s in seen for c in s} | set(_EXTRA_CHARS))
            longest = max(len(s) for s in seen)
            options.append(st.text(st.sampled_from(chars), max_size=min(max(_MAX_TEXT, longest + 2), 40)))
        elif kind in (list, tuple, set, frozenset) and depth < 3:
            items = [item for s in seen for item in s]
            longest = max(len(s) for s in seen)
            if not items:
                options.append(st.just(kind()))
            elif kind is tuple and len({len(s) for s in seen}) == 1:  # one arity at every site: a record, by field
                options.append(st.tuples(*(shape_strategy([s[i] for s in seen], depth + 1)
                                           for i in range(len(seen[0])))))
            else:
                inner = shape_strategy(items, depth + 1)
                size = min(max(_MAX_ITEMS, longest + 2), 20)
                if kind in (set, frozenset):
                    options.append(st.sets(inner, max_size=size).map(kind))
                else:
                    options.append(st.lists(inner, max_size=size).map(kind))
        elif kind is dict and depth < 3:
            keys = [k for s in seen for k in s]
            vals = [v for s in seen for v in s.values()]
            if keys:
                options.append(st.dictionaries(shape_strategy(keys, depth + 1), shape_strategy(vals, depth + 1),
                                               max_size=_MAX_ITEMS))
            else:
                options.append(st.just({}))
        else:
            options += [st.just(v) for v in seen[:1]]  # None, or a type with no strategy here: kept as the site has it
    return st.one_of(*options) if options else st.nothing()


def site_strategy(sites: list[tuple[Any, ...]]) -> st.SearchStrategy[tuple[Any, ...]]:
    """Argument tuples shaped like ``sites``: one alternative per arity, each position drawn by its shape."""
    by_arity: dict[int, list[tuple[Any, ...]]] = {}
    for args in sites:
        by_arity.setdefault(len(args), []).append(args)
    return st.one_of(*(st.tuples(*(shape_strategy([s[i] for s in group]) for i in range(arity)))
                       for arity, group in sorted(by_arity.items())))


def drawn_inputs(sites: list[tuple[Any, ...]], count: int, key: int) -> list[tuple[Any, ...]]:
    """Up to ``count`` distinct argument tuples drawn with seed ``key``: same sites and key, same list."""
    if not sites:
        return []
    strategy = site_strategy(sites)
    found: dict[str, tuple[Any, ...]] = {}
    seen = {repr(s) for s in sites}

    def collect(args: tuple[Any, ...]) -> None:
        text = repr(args)
        if text not in seen:
            found.setdefault(text, args)
        if len(found) >= count:
            raise _Enough  # Hypothesis would go on to max_examples: stop as soon as there are enough

    runner = settings(max_examples=count * 3, database=None, deadline=None, phases=[Phase.generate], derandomize=False,
                      suppress_health_check=list(HealthCheck), print_blob=False,
                      report_multiple_bugs=False)(seed(key)(given(strategy)(collect)))
    with contextlib.suppress(_Enough, HypothesisException):  # enough, or nothing more could be drawn: keep what was
        runner()
    return list(found.values())[:count]


class _Enough(Exception):
    """Raised from the drawing test once ``count`` inputs are in hand."""
