"""What the console tests share: running a scenario, waiting on a condition, reading the screen as a person sees it."""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from textual.app import App
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


HANG_GUARD_S = 60.0  # every wait here returns as soon as its condition holds: the deadline only catches a hang


async def until(pilot: Pilot[None], condition: Callable[[], bool], timeout_s: float = HANG_GUARD_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


def visible_text(app: App[Any]) -> str:
    """The screenshot's text, spaces restored, one string."""
    svg = app.export_screenshot()
    return html.unescape(" ".join(re.findall(r">([^<>]+)</text>", svg))).replace("\xa0", " ")


async def shows(pilot: Pilot[None], app: App[Any], words: Iterable[str], where: str,
                timeout_s: float = HANG_GUARD_S) -> str:
    """The screen's text once every word is on it; fails naming the missing words if they never all appear.

    Widgets such as DataTable size their columns on the next idle after rows arrive, so a screenshot taken at
    a fixed delay can catch a column still at its header's width under load; polling waits for the settled frame.
    Runs of spaces and line ends count as one space, so where the terminal wraps a sentence does not matter.
    """
    wanted = [" ".join(word.split()) for word in words]
    deadline = time.monotonic() + timeout_s
    while True:
        text = visible_text(app)
        flowed = " ".join(text.split())  # a sentence wrapped across lines still reads as one
        missing = [word for word in wanted if word not in flowed]
        if not missing:
            return text
        assert time.monotonic() < deadline, f"{missing} not visible {where}; the screen shows: {text}"
        await pilot.pause(0.05)


async def run_from_palette(pilot: Pilot[None], app: App[Any], title: str) -> None:
    """Open the command palette, type ``title`` and press enter once the palette has found a match.

    The palette searches its providers in the background, so typing and pressing enter at fixed delays can
    press enter on an empty list under load.
    """
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    palette = app.screen
    await pilot.press(*title)
    commands = palette.query_one(CommandList)
    await until(pilot, lambda: commands.highlighted is not None
                and title in str(commands.get_option_at_index(commands.highlighted).prompt))
    await pilot.press("enter")
