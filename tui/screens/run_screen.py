"""What the battle and campaign screens share: a setup form that starts a run, and a runner to cancel it."""

from __future__ import annotations

from typing import Protocol, cast

from textual.screen import Screen


class Runner(Protocol):
    running: bool


class RunForm(Protocol):
    def request_start(self) -> None: ...

    def focus_first(self) -> None: ...


class RunScreen(Screen[None]):
    """A screen whose form (id ``setup``) starts runs of ``runner``: start while idle, cancel while running."""

    runner: Runner

    def setup_form(self) -> RunForm:
        return cast(RunForm, self.query_one("#setup"))

    def on_mount(self) -> None:
        self.setup_form().focus_first()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return not self.runner.running
        if action == "cancel":
            return self.runner.running
        return True

    def action_start(self) -> None:
        self.setup_form().request_start()

    def toggle_form(self) -> None:
        """Show or hide the setup form between runs; the focus goes to its first field when it shows."""
        if self.runner.running:
            return
        self.toggle_class("hide-form")
        if not self.has_class("hide-form"):
            self.setup_form().focus_first()
