"""Fixtures the sandbox suites share: a module's box of each backend, and a reference cache of its own."""

from __future__ import annotations

import pytest

from logomesh.sandbox import Sandbox
from logomesh.tasks.hidden_suite import ReferenceCache


@pytest.fixture(scope="module")
def box(either_box: Sandbox) -> Sandbox:
    """One box of each backend for the module (a module that opens its own box defines ``box`` itself)."""
    return either_box


@pytest.fixture(scope="module")
def cache() -> ReferenceCache:
    """The references' observations, kept for the module only (never the process-wide cache)."""
    return ReferenceCache(None)
