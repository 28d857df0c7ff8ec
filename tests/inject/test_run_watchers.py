"""The run's watchers (``on_attempt``, ``observer``) see every query and node without changing the outcome, and a
cancelled run keeps what it recorded and is recorded as cancelled."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ledger import Ledger
from logomesh.cancel import Cancelled, CancelToken
from logomesh.inject.attempts import AttemptRecord
from logomesh.inject.objectives import OBJECTIVES
from logomesh.inject.record import ATTEMPT_STATUS, RUN_STATUS
from logomesh.inject.report import dumps
from logomesh.inject.run import InjectRequest, Target, run_injection
from logomesh.red.mcts import Node

pytestmark = [pytest.mark.slow, pytest.mark.docker]


class Watcher:
    def __init__(self) -> None:
        self.added: list[tuple[int, int | None]] = []
        self.updated: list[int] = []
        self.attempts: list[AttemptRecord] = []

    def node_added(self, node: Node) -> None:
        self.added.append((node.id, node.parent.id if node.parent is not None else None))

    def node_updated(self, node: Node) -> None:
        self.updated.append(node.id)


def _request(home: Path) -> InjectRequest:
    return InjectRequest("rate-limiter", Target(kind="inject-obeying", kind_seed=1), tuple(OBJECTIVES), 10, 1,
                         "mcts", "docker", home, utility=False)


def test_watchers_see_every_query_and_node_and_change_nothing(tmp_path: Path) -> None:
    plain = run_injection(_request(tmp_path / "a"))
    watcher = Watcher()
    watched = run_injection(dataclasses.replace(_request(tmp_path / "b"), on_attempt=watcher.attempts.append,
                                                observer=watcher))
    assert dumps(watched) == dumps(plain)
    assert [r.query for r in watcher.attempts] == list(range(1, watched.queries + 1))
    assert watcher.added[0] == (0, None) and len(watcher.added) > watched.queries
    assert {node_id for node_id, _ in watcher.added} >= set(watcher.updated)


def _run_id(led: Ledger) -> str:
    return next(e.battle_id for e in led.entries() if e.status == RUN_STATUS)


def test_a_cancelled_run_keeps_its_queries_and_is_recorded_as_cancelled(tmp_path: Path) -> None:
    token = CancelToken()
    seen: list[AttemptRecord] = []

    def on_attempt(record: AttemptRecord) -> None:
        seen.append(record)
        if len(seen) == 2:
            token.cancel()

    with pytest.raises(Cancelled):
        run_injection(dataclasses.replace(_request(tmp_path), cancel=token, on_attempt=on_attempt))
    with Ledger.open(tmp_path) as led:
        statuses = [e.status for e in led.entries()]
        run = led.get(_run_id(led))
    assert statuses == [ATTEMPT_STATUS, ATTEMPT_STATUS, RUN_STATUS]
    assert run is not None and run.result["cancelled"] is True and run.result["queries"] == 2
