"""One interpreter for both backends, newer than the host's, with pytest: the image's root runs everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.purple.a2a_request import task_prompt
from logomesh.sandbox import Sandbox, SandboxUnavailable, open_sandbox
from logomesh.sandbox.image import PYTHON_VERSION
from logomesh.tasks import load_task
from logomesh.tasks.hidden_suite import ReferenceCache, run_hidden

# A correct validator for tasks/email-validator written with possessive quantifiers and an atomic group.
# CPython 3.11.2 (the host's Python when bubblewrap bound the host's /usr) rejects user@example.com with it.
POSSESSIVE_VALIDATOR = r'''
import re

_ATOM = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]++"
_LABEL = r"[A-Za-z0-9]++(?:-++[A-Za-z0-9]++)*+"
_ADDRESS = re.compile(rf"(?>{_ATOM}(?:\.{_ATOM})*+)@((?:{_LABEL}\.)++[A-Za-z]{{2,63}}+)")


def is_valid_email(address):
    if not isinstance(address, str):
        return False
    found = _ADDRESS.fullmatch(address)
    if found is None:
        return False
    domain = found.group(1)
    local_length = len(address) - len(domain) - 1
    return local_length <= 64 and len(domain) <= 255 and all(len(label) <= 63 for label in domain.split("."))
'''

PYTEST_TESTS = {
    "test_email.py": '''
import pytest
from solution import is_valid_email


@pytest.mark.parametrize("address", ["user@example.com", "first.last+tag@sub.example.co.uk", "a@b--c.io"])
def test_accepts(address):
    assert is_valid_email(address) is True


@pytest.mark.parametrize("address", ["user@", "a..b@example.com", "user@example.com\\n", "a@b.c1"])
def test_rejects(address):
    assert is_valid_email(address) is False


@pytest.fixture
def long_local():
    return "a" * 65 + "@example.com"


def test_fixture_and_tmp_path(long_local, tmp_path):
    (tmp_path / "address.txt").write_text(long_local)
    assert is_valid_email((tmp_path / "address.txt").read_text()) is False


def test_raises_is_pytest_s():
    with pytest.raises(TypeError):
        is_valid_email()


class TestGrouped:
    def test_method(self):
        assert is_valid_email("x@y.zz")


def test_wrong_claim():
    with pytest.raises(ValueError):
        is_valid_email("user@example.com")


@pytest.mark.parametrize("address", ["ok@example.com", "bad@", "ok2@example.org"])
def test_one_case_wrong(address):
    assert is_valid_email(address)


def test_crashes():
    return 1 / 0


@pytest.mark.skip(reason="not written yet")
def test_skipped():
    pass
''',
    "test_plain_unittest.py": '''
import unittest
from solution import is_valid_email


class TestPlain(unittest.TestCase):
    def test_accepts(self):
        self.assertTrue(is_valid_email("user@example.com"))
''',
}


@pytest.fixture(
    scope="module",
    params=[pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = open_sandbox(str(request.param))
    yield sandbox
    sandbox.close()


def _version(box: Sandbox) -> str:
    probe = "import site, sys\nsys.path += site.getsitepackages()\nimport pytest\n"  # scripts run with -S
    run = box.run_script({}, probe + "print(sys.version.split()[0], pytest.__version__)\n")
    assert run.exit_code == 0, run
    return run.stdout.strip()


def test_the_box_runs_the_stated_python_with_pytest(box: Sandbox) -> None:
    python, _pytest_version = _version(box).split()
    assert python.startswith(PYTHON_VERSION + ".")
    assert f"Python {PYTHON_VERSION}" in task_prompt(load_task("email-validator"))
    assert "tests may use unittest or pytest" in task_prompt(load_task("email-validator"))


@pytest.mark.docker
@pytest.mark.bwrap
def test_both_backends_run_the_same_interpreter() -> None:
    versions = []
    for kind in ("docker", "bwrap"):
        sandbox = open_sandbox(kind)
        try:
            versions.append(_version(sandbox))
        finally:
            sandbox.close()
    assert versions[0] == versions[1]


def test_possessive_quantifier_validator_passes_the_hidden_suite(box: Sandbox, tmp_path: Path) -> None:
    run = run_hidden(box, load_task("email-validator"), POSSESSIVE_VALIDATOR, cache=ReferenceCache(tmp_path))
    assert run.suite.error is None
    failing = [(o.name, o.reason) for o in run.suite.outcomes if o.status != "passed"]
    assert failing == [] and run.suite.total >= 10


def test_pytest_style_purple_tests_run_with_pytest(box: Sandbox) -> None:
    run = box.run_suite(POSSESSIVE_VALIDATOR, PYTEST_TESTS)
    assert run.error is None and not run.tampered, run
    outcomes = {o.name: (o.status, o.reason) for o in run.outcomes}
    assert outcomes == {
        "test_email.test_accepts": ("passed", ""),
        "test_email.test_rejects": ("passed", ""),
        "test_email.test_fixture_and_tmp_path": ("passed", ""),
        "test_email.test_raises_is_pytest_s": ("passed", ""),
        "test_email.TestGrouped.test_method": ("passed", ""),
        "test_email.test_wrong_claim": ("failed", "Failed: DID NOT RAISE <class 'ValueError'>"),
        "test_email.test_one_case_wrong": ("failed", "[bad@] AssertionError"),
        "test_email.test_crashes": ("error", "ZeroDivisionError: division by zero"),
        "test_email.test_skipped": ("failed", "skipped: not written yet"),
        "test_plain_unittest.TestPlain.test_accepts": ("passed", ""),
    }


def test_pytest_is_used_for_fixtures_and_imports_inside_tests(box: Sandbox) -> None:
    """No top-level ``import pytest``: a fixture argument or an import inside a test still needs pytest."""
    tests = {"test_quiet.py": '''
from solution import is_valid_email


def test_reads_a_file(tmp_path):
    (tmp_path / "a.txt").write_text("user@example.com")
    assert is_valid_email((tmp_path / "a.txt").read_text())


def test_raises_inside():
    import pytest
    with pytest.raises(TypeError):
        is_valid_email()


class TestGrouped:
    def test_capsys(self, capsys):
        print(is_valid_email("x@y.zz"))
        assert capsys.readouterr().out == "True\\n"
'''}
    run = box.run_suite(POSSESSIVE_VALIDATOR, tests)
    assert run.error is None and not run.tampered, run
    assert {o.name: o.status for o in run.outcomes} == {
        "test_quiet.test_reads_a_file": "passed",
        "test_quiet.test_raises_inside": "passed",
        "test_quiet.TestGrouped.test_capsys": "passed",
    }


TAMPER = "\nimport unittest\nunittest.TestCase.run = lambda self, result=None: None\n"


def test_tampering_is_still_seen_under_pytest(box: Sandbox) -> None:
    """Tests that patch the test machinery are caught under pytest too; the code, in a process of its own,
    patches only its own copy, which changes no verdict."""
    tampering_tests = {name: text + TAMPER for name, text in PYTEST_TESTS.items()}
    run = box.run_suite(POSSESSIVE_VALIDATOR, tampering_tests)
    assert run.tampered and "TestCase.run was replaced" in run.tamper_reason
    assert run.passed == 0
    plain = box.run_suite(POSSESSIVE_VALIDATOR, PYTEST_TESTS)
    patched = box.run_suite(POSSESSIVE_VALIDATOR + TAMPER, PYTEST_TESTS)
    assert not patched.tampered and patched.passed == plain.passed > 0


def test_bwrap_without_the_root_names_the_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from logomesh.sandbox.bwrap import BwrapSandbox

    monkeypatch.setenv("LOGOMESH_ROOTFS", str(tmp_path))
    with pytest.raises(SandboxUnavailable) as info:
        BwrapSandbox()
    message = str(info.value)
    assert "\n" not in message and str(tmp_path) in message
    assert "logomesh sandbox build --offline" in message
