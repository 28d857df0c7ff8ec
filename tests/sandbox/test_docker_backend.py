"""The Docker backend end to end: a real container, the real harness, real limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from logomesh.sandbox import Sandbox, SandboxUnavailable, open_sandbox
from logomesh.sandbox.docker import DockerSandbox

from .suites import ADD_NAMES, ADD_TESTS, GOOD_ADD, WRONG_ADD

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    sandbox = open_sandbox("docker")
    yield sandbox
    sandbox.close()


def test_reports_backend_and_image(box: Sandbox) -> None:
    assert box.backend == "docker"
    assert box.image_id.startswith("sha256:") and len(box.image_id) == 71


def test_good_solution_passes_every_test(box: Sandbox) -> None:
    run = box.run_suite(GOOD_ADD, ADD_TESTS)
    assert [o.name for o in run.outcomes] == list(ADD_NAMES)
    assert (run.passed, run.failed, run.total) == (4, 0, 4)
    assert not run.tampered and run.error is None


def test_wrong_solution_fails_with_reason(box: Sandbox) -> None:
    run = box.run_suite(WRONG_ADD, ADD_TESTS)
    by_name = {o.name: o for o in run.outcomes}
    assert run.passed == 3
    bad = by_name["test_add.TestAdd.test_negative"]
    assert bad.status == "failed" and "0 != -5" in bad.reason


def test_output_is_streamed_with_its_origin(box: Sandbox) -> None:
    seen: list[tuple[str, str, str]] = []
    solution = (
        "import sys\ndef add(a, b):\n    print('adding', a, b)\n    print('warn', file=sys.stderr)\n    return a + b\n"
    )
    run = box.run_suite(solution, ADD_TESTS, on_output=lambda *item: seen.append(item))
    assert run.passed == 4
    stdout = [(origin, text) for origin, stream, text in seen if stream == "stdout"]
    assert stdout == [
        ("test_add.TestAdd.test_large", f"adding {10**20} 1\n"),
        ("test_add.TestAdd.test_negative", "adding -2 -3\n"),
        ("test_add.TestAdd.test_small", "adding 1 2\n"),
        ("test_add.TestAdd.test_zero", "adding 0 0\n"),
    ]
    assert any(stream == "stderr" and "warn" in text for _, stream, text in seen)
    assert "adding 1 2" in run.stdout


def test_script_sees_its_files_and_reports_exit_code(box: Sandbox) -> None:
    run = box.run_script({"solution.py": "VALUE = 41\n"}, "import sys\nfrom solution import VALUE\nprint(VALUE + 1)\n"
                         "sys.exit(3)\n")
    assert run.stdout == "42\n" and run.exit_code == 3 and not run.timed_out


def test_import_error_of_the_solution_fails_every_test(box: Sandbox) -> None:
    run = box.run_suite("def add(a, b) return a\n", ADD_TESTS)
    assert run.passed == 0 and run.total == 4
    assert all("SyntaxError" in o.reason for o in run.outcomes)
    assert run.error is not None and run.error.startswith("import failed: test_add: ") and "SyntaxError" in run.error


def test_runs_are_isolated_from_each_other(box: Sandbox) -> None:
    first = box.run_script({}, "open('left_behind.txt', 'w').write('x')\nimport os\nprint(os.getcwd())\n")
    second = box.run_script({}, "import os\nprint(os.path.exists('left_behind.txt'))\n")
    assert first.exit_code == 0 and second.stdout == "False\n"


def test_unknown_kind_is_one_clear_line() -> None:
    with pytest.raises(SandboxUnavailable, match="unknown sandbox 'vm'"):
        open_sandbox("vm")


def test_the_harness_does_not_leak_descriptors(box: Sandbox) -> None:
    probe = "import os\nprint(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))\n"
    box.run_suite(GOOD_ADD, ADD_TESTS)
    first = box.run_script({}, probe)
    for _ in range(5):
        box.run_suite(GOOD_ADD, ADD_TESTS)
        box.run_script({}, "print(1)")
    assert box.run_script({}, probe).stdout == first.stdout == "[0, 1, 2, 3]\n"


PYTEST_STYLE = {
    "test_submission.py": """
from solution import add


def test_adds():
    assert add(2, 3) == 5


def test_wrong_expectation():
    assert add(2, 2) == 5, "two and two"


class TestPlain:
    def setup_method(self, method):
        self.base = 10

    def test_with_setup(self):
        assert add(self.base, 1) == 11

    def test_raises(self):
        raise KeyError("nope")
""",
}


def test_pytest_style_functions_and_classes_run(box: Sandbox) -> None:
    run = box.run_suite(GOOD_ADD, PYTEST_STYLE)
    status = {o.name: (o.status, o.reason) for o in run.outcomes}
    assert status == {
        "test_submission.test_adds": ("passed", ""),
        "test_submission.test_wrong_expectation": ("failed", "AssertionError: two and two"),
        "test_submission.TestPlain.test_raises": ("error", "KeyError: 'nope'"),
        "test_submission.TestPlain.test_with_setup": ("passed", ""),
    }


def test_solution_files_never_shadow_modules_the_tests_import(box: Sandbox) -> None:
    shadowing = "open('fractions.py', 'w').write('raise SystemExit(0)')\n" + GOOD_ADD
    tests = {
        "test_frac.py": "from solution import add\nimport fractions\nimport unittest\n\n\n"
        "class T(unittest.TestCase):\n    def test_half(self):\n"
        "        self.assertEqual(fractions.Fraction(add(1, 0), 2), fractions.Fraction(1, 2))\n"
    }
    run = box.run_suite(shadowing, tests)
    assert (run.passed, run.total) == (1, 1), run


def test_container_has_every_limit(box: Sandbox) -> None:
    import docker

    client = docker.from_env()
    try:
        assert isinstance(box, DockerSandbox)
        attrs = client.containers.get(box.container_id).attrs
    finally:
        client.close()
    host = attrs["HostConfig"]
    assert host["Memory"] == host["MemorySwap"] == 128 * 1024 * 1024
    assert host["NanoCpus"] == 500_000_000
    assert host["PidsLimit"] == 50
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert set(host["Tmpfs"]) == {"/work", "/tmp", "/home", "/srv"}  # /home, /srv: ordinary settings' folders
    assert all("size=" in options for options in host["Tmpfs"].values())
    assert host["LogConfig"]["Type"] == "none"
    assert attrs["Config"]["User"] == "65534:65534"
    whoami = box.run_script({}, "import os\nprint(os.getuid(), os.getgid())\n")
    assert whoami.stdout == "65534 65534\n"


def test_container_is_removed_on_close() -> None:
    import docker

    sandbox = DockerSandbox()
    container_id = sandbox.container_id
    assert container_id
    sandbox.close()
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(container_id)
    finally:
        client.close()


def test_failed_class_set_up_fails_only_that_class(box: Sandbox) -> None:
    tests = {
        "test_setup.py": "import unittest\nfrom solution import add\n\n\n"
        "class Broken(unittest.TestCase):\n"
        "    @classmethod\n    def setUpClass(cls):\n        raise RuntimeError('no fixture')\n\n"
        "    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n\n\n"
        "class Fine(unittest.TestCase):\n"
        "    @classmethod\n    def setUpClass(cls):\n        cls.base = add(1, 1)\n\n"
        "    def test_c(self):\n        self.assertEqual(self.base, 2)\n"
    }
    run = box.run_suite(GOOD_ADD, tests)
    status = {o.name: (o.status, o.reason) for o in run.outcomes}
    assert status == {
        "test_setup.Broken.test_a": ("error", "set-up failed: RuntimeError: no fixture"),
        "test_setup.Broken.test_b": ("error", "set-up failed: RuntimeError: no fixture"),
        "test_setup.Fine.test_c": ("passed", ""),
    }
