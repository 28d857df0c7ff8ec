"""The issue's acceptance check: a battle against the mock served over A2A scores like the in-process mock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.battle.request import BattleRequest
from logomesh.battle.spine import run_battle
from logomesh.purple.mock import MockResponses, mock_app_factory
from logomesh.purple.server import RunningServer, start_in_thread


@pytest.fixture(scope="module")
def library_mock() -> Iterator[RunningServer]:
    with start_in_thread(mock_app_factory(MockResponses())) as server:
        yield server


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.parametrize("protocol", ["0.3", "1.0"])
def test_served_mock_scores_like_the_in_process_mock(library_mock: RunningServer, tmp_path: Path,
                                                     protocol: str) -> None:
    local = run_battle(BattleRequest("rate-limiter", "local", 5, tmp_path, mock_variant="good", red_budget_s=2.0))
    served = run_battle(BattleRequest("rate-limiter", "rate-limiter:good:served", 5, tmp_path,
                                      purple_url=library_mock.url, protocol=protocol, red_budget_s=2.0))
    assert local.result.to_json()["status"] == served.result.to_json()["status"] == "scored"
    for key in ("cis_score", "rationale_score", "architecture_score", "testing_score", "logic_score", "tests"):
        assert served.result.to_json()[key] == local.result.to_json()[key], key
    assert served.sequence == 1
