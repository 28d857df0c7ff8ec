"""What every setup form does when asked to start: read its fields, then post its request or say what to fix."""

from __future__ import annotations

from typing import Generic, TypeVar

from textual import on
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Button, Input

from tui.widgets.form_values import FormError

Choice = TypeVar("Choice")


class StartForm(Vertical, Generic[Choice]):
    """A setup form. Its Start button, Enter in any of its fields, and ctrl+r on its screen
    (``request_start``) post ``requested(choice())``, or show the one line ``FormError`` gives."""

    def choice(self) -> Choice:
        """The form's values, checked; raises ``FormError`` naming the bad field."""
        raise NotImplementedError

    def requested(self, choice: Choice) -> Message:
        """The message that asks the screen to start the job ``choice`` describes."""
        raise NotImplementedError

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.request_start()

    def request_start(self) -> None:
        try:
            choice = self.choice()
        except FormError as exc:
            self.notify(str(exc), severity="error", timeout=6)
            return
        self.post_message(self.requested(choice))
