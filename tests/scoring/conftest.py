"""Fixtures for the scoring tests: one embedding model per session, suite runs built by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from logomesh.scoring.minilm import MiniLM
from logomesh.tasks import TaskSpec, load_task


@pytest.fixture(scope="session")
def model() -> Iterator[MiniLM]:
    """The process-wide model, loaded once for the whole session."""
    from logomesh.scoring.rationale import load_model

    yield load_model()


@pytest.fixture(scope="session")
def rate_limiter() -> TaskSpec:
    return load_task("rate-limiter")
