"""Truncation on the record: the model endpoint's ``finish_reason``, from the model server to the ledger."""

from __future__ import annotations

from logomesh.purple.model_server import finish_reason


def test_the_model_server_says_length_only_when_generation_hit_max_tokens() -> None:
    end = {2}
    assert finish_reason([5, 6, 7], 3, end) == "length"
    assert finish_reason([5, 6, 2], 3, end) == "stop"  # the model ended its turn on the last allowed token
    assert finish_reason([5, 2], 3, end) == "stop"
    assert finish_reason([5, 6], 3, end) == "stop"  # stopped early for another reason
