"""The battle form with no task to offer: it opens, and asking it for a battle names the fix.

Textual's blank value of a ``Select`` is ``Select.NULL`` (``Select.BLANK`` is ``False`` in Textual 8): the form
compared against ``BLANK``, so an empty task library could not even compose the form.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult

from tui.widgets.battle.setup_form import SetupForm
from tui.widgets.form_values import FormError


class _FormApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SetupForm([], [], id="form")


def test_a_form_with_no_task_opens_and_refuses_with_the_fix() -> None:
    async def scenario() -> None:
        app = _FormApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            form = app.query_one("#form", SetupForm)
            with pytest.raises(FormError, match="no task: add a task folder"):
                form.choice()

    asyncio.run(scenario())
