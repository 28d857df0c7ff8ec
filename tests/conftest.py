"""Shared test plumbing: the ``docker`` and ``bwrap`` markers, and a box of each backend.

A test marked ``docker`` skips when no Docker engine answers or the sandbox
image is missing, unless ``LOGOMESH_REQUIRE_DOCKER=1`` (CI), which turns that
skip into a failure. ``bwrap`` likewise with ``LOGOMESH_REQUIRE_BWRAP=1``.

Two tiers (``--tier``, see ``scripts/test.sh``): ``full`` runs everything (CI);
``fast`` leaves out tests marked ``slow`` and runs each suite that is
parametrized over both backends on one of them: Docker when it answers, else
bubblewrap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

import pytest
from tiers import heaviest_first

if TYPE_CHECKING:
    from logomesh.sandbox import Sandbox


@cache
def _docker_problem() -> str | None:
    if shutil.which("docker") is None:
        return "the docker CLI is not installed"
    try:
        info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "docker info timed out"
    if info.returncode != 0:
        return "no Docker engine answers (start dockerd)"
    from logomesh.sandbox.image import image_tag

    image = subprocess.run(
        ["docker", "image", "inspect", image_tag()], capture_output=True, timeout=20
    )
    if image.returncode != 0:
        return f"sandbox image {image_tag()} missing (run: logomesh sandbox build --offline)"
    return None


@cache
def _bwrap_problem() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed"
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"], capture_output=True, timeout=20
    )
    if probe.returncode != 0:
        return f"bwrap cannot create namespaces here: {probe.stderr.decode()[:200]}"
    from logomesh.sandbox.image import root_dir

    if not root_dir().is_dir():
        return f"sandbox root {root_dir()} missing (run: logomesh sandbox build --offline)"
    return None


def _gate(item: pytest.Item, marker: str, problem: str | None, require_env: str) -> None:
    if item.get_closest_marker(marker) is None or problem is None:
        return
    if os.environ.get(require_env) == "1":
        pytest.fail(f"{require_env}=1 but {marker} is unavailable: {problem}", pytrace=False)
    pytest.skip(f"{marker} unavailable: {problem}")


BACKENDS = ("docker", "bwrap")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=("fast", "full"), default="full",
                     help="fast: leave out tests marked slow and run two-backend suites on one backend; "
                          "full (default): everything")


def _second_backend_twin(item: pytest.Item, primary: str) -> bool:
    """Whether ``item`` is the other backend's copy of a test parametrized over both backends."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    values = {value for value in callspec.params.values() if isinstance(value, str)}
    return any(backend != primary and backend in values and item.get_closest_marker(backend) is not None
               for backend in BACKENDS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heaviest_first(items, config.getoption("tier"))
    if config.getoption("tier") != "fast":
        return
    primary = "docker" if _docker_problem() is None else "bwrap"
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        slow = item.get_closest_marker("slow") is not None
        (left_out if slow or _second_backend_twin(item, primary) else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("docker") is not None:
        _gate(item, "docker", _docker_problem(), "LOGOMESH_REQUIRE_DOCKER")
    if item.get_closest_marker("bwrap") is not None:
        _gate(item, "bwrap", _bwrap_problem(), "LOGOMESH_REQUIRE_BWRAP")


@pytest.fixture(
    scope="module",
    params=[pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def either_box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """One box of each backend, default limits, for a module's tests: they run once on each."""
    from logomesh.sandbox.choose import open_sandbox

    sandbox = open_sandbox(str(request.param))
    try:
        yield sandbox
    finally:
        sandbox.close()
