"""The one bounded reader of box bytes on the host (``logomesh/untrusted.py``), without a sandbox."""

from __future__ import annotations

import json
import sys
import time

import pytest

from logomesh import untrusted
from logomesh.untrusted import Malformed


def test_plain_records_parse() -> None:
    assert untrusted.parse_object('{"a": [1, {"b": "x"}], "c": null}') == {"a": [1, {"b": "x"}], "c": None}
    assert untrusted.parse(b'[1, 2.5, "\\u00e9"]') == [1, 2.5, "é"]


@pytest.mark.parametrize("depth", [10, 1000, 100_000])
def test_nesting_over_the_cap_is_malformed_before_the_parser_runs(depth: int) -> None:
    line = "[" * depth + "]" * depth
    if depth <= untrusted.MAX_DEPTH:
        assert untrusted.nesting(line) == depth and isinstance(untrusted.parse(line), list)
        return
    with pytest.raises(Malformed, match="nested"):
        untrusted.parse(line)


def test_depth_is_counted_without_recursion_even_when_the_limit_is_raised() -> None:
    """A host that raised its recursion limit still never hands the JSON parser a line deeper than the cap."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10**6)
    try:
        with pytest.raises(Malformed):
            untrusted.parse('{"a":' * 300_000 + "1" + "}" * 300_000)
    finally:
        sys.setrecursionlimit(limit)


def test_brackets_inside_strings_do_not_count() -> None:
    assert untrusted.nesting('["[[[[", "\\"]]]]", {"k": "{{{{"}]') == 2
    assert untrusted.nesting("") == 0
    assert untrusted.nesting('"unclosed [[[[') == 0  # an unclosed string runs to the end (and is not JSON)
    assert untrusted.parse('["' + "[" * 5000 + '"]') == ["[" * 5000]


def test_the_depth_scan_stays_linear_on_hostile_quoting() -> None:
    """Escaped quotes with no closing one made a naive string pattern rescan from every quote: quadratic."""
    started = time.monotonic()
    with pytest.raises(Malformed):
        untrusted.parse('"' + '\\"' * 400_000)
    assert time.monotonic() - started < 2.0


def test_size_over_the_cap_is_malformed() -> None:
    with pytest.raises(Malformed, match="over the cap"):
        untrusted.parse(json.dumps(["x" * 100]), max_bytes=50)
    assert untrusted.parse(json.dumps(["x" * 40]), max_bytes=50) == ["x" * 40]


@pytest.mark.parametrize("data", [b'{"a": "\xff\xfe"}', b"\xc3", "{'single': 1}", "NaN-ish", "[1, 2", "",
                                  "1" * 5000])
def test_bytes_that_are_not_json_are_malformed(data: str | bytes) -> None:
    with pytest.raises(Malformed):
        untrusted.parse(data)


@pytest.mark.parametrize("data", ["[1]", '"s"', "3", "null"])
def test_an_object_must_be_an_object(data: str) -> None:
    with pytest.raises(Malformed, match="not an object"):
        untrusted.parse_object(data)


def test_fields_have_the_type_the_writer_gives_them() -> None:
    record = {"s": "text", "i": 3, "f": 0.5, "b": True, "l": ["a", "b"], "o": [{"x": 1}], "m": {}, "n": None}
    assert untrusted.text(record, "s") == "text" and untrusted.text(record, "s", limit=2) == "te"
    assert untrusted.integer(record, "i") == 3 and untrusted.number(record, "i") == 3.0
    assert untrusted.number(record, "f") == 0.5 and untrusted.flag(record, "b") is True
    assert untrusted.texts(record, "l") == ("a", "b") and untrusted.objects(record, "o") == ({"x": 1},)
    assert untrusted.mapping(record, "m") == {} and untrusted.items(record, "l") == ["a", "b"]
    assert untrusted.optional_text(record, "n") is None and untrusted.optional_integer(record, "absent") is None
    assert untrusted.text(record, "absent", "fallback") == "fallback"
    assert untrusted.texts(record, "absent", []) == ()


@pytest.mark.parametrize(("reader", "key"), [
    (untrusted.text, "i"), (untrusted.integer, "b"), (untrusted.integer, "f"), (untrusted.number, "b"),
    (untrusted.number, "s"), (untrusted.flag, "i"), (untrusted.items, "m"), (untrusted.mapping, "l"),
    (untrusted.texts, "o"), (untrusted.objects, "l"), (untrusted.text, "absent"), (untrusted.integer, "absent"),
    (untrusted.optional_text, "i"), (untrusted.optional_integer, "s"),
])
def test_a_missing_or_wrong_typed_field_is_malformed_never_a_default(reader: object, key: str) -> None:
    record = {"s": "text", "i": 3, "f": 0.5, "b": True, "l": ["a", "b"], "o": [{"x": 1}], "m": {}}
    with pytest.raises(Malformed):
        reader(record, key)  # type: ignore[operator]
