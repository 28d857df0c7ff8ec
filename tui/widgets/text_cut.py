"""Cutting a column's texts to a width so that texts that differ still look different.

Texts are cut at the end (``mock:go…``) while that keeps them apart. An id cut at its end can lose what tells it
apart (``task-b:no-lock:c-…:r1`` and ``…:r2``, ``id`` and ``id-2``); then every text is cut in its middle, keeping
a head and a tail, with the split closest to the middle under which no two different texts look the same.
"""

from __future__ import annotations

from collections.abc import Iterable

ELLIPSIS = "…"


def middle_cut(text: str, width: int, tail: int) -> str:
    """``text`` as its first ``width - 1 - tail`` and last ``tail`` characters around ``…``, or whole if it fits."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = max(0, min(tail, width - 1))
    head = width - 1 - tail
    return text[:head] + ELLIPSIS + (text[len(text) - tail:] if tail else "")


def distinct_cuts(texts: Iterable[str], width: int) -> dict[str, str]:
    """Each text as shown in ``width`` cells: whole when it fits; else cut at the end if the texts stay distinct,
    else in the middle where they do (tails tried from the middle outwards); else at the middle."""
    unique = sorted(set(texts))
    if width <= 1 or all(len(text) <= width for text in unique):
        return {text: middle_cut(text, width, 0) for text in unique}
    middle = (width - 1) // 2
    tails = [0, *sorted(range(1, width), key=lambda tail: (abs(tail - middle), -tail))]
    for tail in tails:
        shown = {text: middle_cut(text, width, tail) for text in unique}
        if len(set(shown.values())) == len(unique):
            return shown
    return {text: middle_cut(text, width, middle) for text in unique}
