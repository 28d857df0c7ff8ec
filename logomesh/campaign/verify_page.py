"""The page a person reads: an HTML report's visible text against the page re-rendered from the ledger.

``verify report`` recomputes the report from the signed entries; for an HTML
report that recomputed report is rendered again (``render_html`` is a pure
function of the report) and compared with the file, outside the embedded JSON
block (which is checked number by number on its own). The first difference is
named by its section and the text shown against the text the ledger gives.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from logomesh.campaign.html_report import EMBED_ID

_EMBED_BLOCK = re.compile(r'<script type="application/json" id="' + EMBED_ID + r'">.*?</script>', re.S)
_TAG = re.compile(r"<[^>]*>")
_HEADING = re.compile(r"<h2>(.*?)</h2>")


def _visible_lines(page: str) -> list[str]:
    return _EMBED_BLOCK.sub("", page).splitlines()


def _cells(line: str) -> list[str]:
    """The line's text between tags, unescaped, empty pieces dropped."""
    return [html.unescape(piece).strip() for piece in _TAG.split(line) if piece.strip()]


def _sections(lines: list[str]) -> Iterator[str]:
    """For each line, the heading of the section it is in ("top" before the first)."""
    current = "top"
    for line in lines:
        found = _HEADING.search(line)
        if found:
            current = html.unescape(found.group(1))
        yield current


def page_difference(rendered: str, page: str) -> str | None:
    """None when ``page`` shows what ``rendered`` (from the ledger) shows, else one line naming the first change."""
    ours, theirs = _visible_lines(rendered), _visible_lines(page)
    for number, (section, want, got) in enumerate(zip(_sections(ours), ours, theirs, strict=False), start=1):
        if want == got:
            continue
        shown, given = _cells(got), _cells(want)
        pairs = [(a, b) for a, b in zip(shown, given, strict=False) if a != b]
        if pairs:
            what = f"the page shows {pairs[0][0]!r}, the ledger gives {pairs[0][1]!r}"
        elif len(shown) != len(given):
            what = f"the page shows {len(shown)} cells, the ledger gives {len(given)}"
        else:
            what = "the markup differs from the page the ledger gives"
        return f"html line {number} ({section}): {what}"
    if len(ours) != len(theirs):
        return f"html: the page has {len(theirs)} lines, the page rendered from the ledger {len(ours)}"
    return None
