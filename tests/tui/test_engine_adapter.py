"""The adapter's batching rule: node additions are never dropped, superseded updates are."""

from __future__ import annotations

from logomesh.events import Event, MctsNodeAdded, MctsNodeUpdated, SandboxOutput
from tui.engine import coalesce_updates


def test_coalescing_keeps_every_addition_and_the_last_update_per_node_in_order() -> None:
    events: list[Event] = [
        MctsNodeAdded("b", 0, None, "root"),
        MctsNodeUpdated("b", 0, 1, 0.1),
        MctsNodeAdded("b", 1, 0, "a"),
        MctsNodeUpdated("b", 1, 1, 0.5),
        SandboxOutput("b", "probe", "stdout", "x"),
        MctsNodeUpdated("b", 0, 2, 0.3),
        MctsNodeUpdated("b", 1, 2, 0.25),
    ]
    assert coalesce_updates(events) == [
        MctsNodeAdded("b", 0, None, "root"),
        MctsNodeAdded("b", 1, 0, "a"),
        SandboxOutput("b", "probe", "stdout", "x"),
        MctsNodeUpdated("b", 0, 2, 0.3),
        MctsNodeUpdated("b", 1, 2, 0.25),
    ]


def test_coalescing_an_addition_only_batch_changes_nothing() -> None:
    events: list[Event] = [MctsNodeAdded("b", n, n - 1 if n else None, "x") for n in range(50)]
    assert coalesce_updates(events) == events
