"""Hostile submissions, in both backends: each is contained, scored right, and leaves the box usable.

The suite under attack is ``ADD_TESTS`` (four tests, all calling ``add``).
Most attacks trigger only in ``add(1, 2)`` (``test_small``), so the other
three tests must still pass: that proves the harness recovered from the
attack within the same suite. Every test ends by checking the box still
scores a good solution 4/4.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from logomesh.sandbox import Limits, Sandbox, SuiteRun, open_sandbox

from .suites import ADD_TESTS, GOOD_ADD

SMALL = "test_add.TestAdd.test_small"
HOST_SECRET_ENV = "LOGOMESH_TEST_HOST_SECRET"
HOST_SECRET_VALUE = "host-secret-7f3a9c"
LIMITS = Limits(test_timeout_s=4.0, output_bytes=32 * 1024)


@pytest.fixture(
    scope="module",
    params=[pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    os.environ[HOST_SECRET_ENV] = HOST_SECRET_VALUE  # the box must not see it
    sandbox = open_sandbox(str(request.param), LIMITS)
    yield sandbox
    sandbox.close()
    os.environ.pop(HOST_SECRET_ENV, None)


def attack_in_small(body: str, prelude: str = "") -> str:
    """A solution that adds correctly except in ``add(1, 2)``, where it runs ``body``."""
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return f"{prelude}\ndef add(a, b):\n    if (a, b) == (1, 2):\n{indented}\n    return a + b\n"


def outcome(run: SuiteRun, name: str = SMALL) -> tuple[str, str]:
    found = next(o for o in run.outcomes if o.name == name)
    return found.status, found.reason


def assert_box_still_works(box: Sandbox) -> None:
    run = box.run_suite(GOOD_ADD, ADD_TESTS)
    assert (run.passed, run.total, run.tampered) == (4, 4, False), run


def test_fork_bomb_is_contained(box: Sandbox) -> None:
    solution = attack_in_small("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass")
    run = box.run_suite(solution, ADD_TESTS, timeout_s=20)
    assert outcome(run)[0] in ("timeout", "error", "crashed")
    assert run.passed == 3
    assert_box_still_works(box)


BOMBS = {
    "private": "hog = []\nwhile True:\n    hog.append(b'x' * (32 << 20))",  # touched pages
    # MAP_SHARED|MAP_ANONYMOUS, which RLIMIT_DATA does not count: the address space and the cgroup do
    "shared": "import mmap\nhog = []\nwhile True:\n    m = mmap.mmap(-1, 32 << 20)\n    m.write(b'x' * (32 << 20))\n"
              "    hog.append(m)",
}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_memory_bomb_is_contained(box: Sandbox, bomb: str) -> None:
    solution = attack_in_small(BOMBS[bomb])
    run = box.run_suite(solution, ADD_TESTS, timeout_s=20)
    status, reason = outcome(run)
    assert status in ("crashed", "error"), (status, reason)
    assert any(word in reason for word in ("MemoryError", "signal 9", "Cannot allocate memory")), reason
    assert run.passed == 3
    assert_box_still_works(box)


def test_infinite_loop_times_out_and_the_rest_still_run(box: Sandbox) -> None:
    run = box.run_suite(attack_in_small("while True:\n    pass"), ADD_TESTS, timeout_s=20)
    status, reason = outcome(run)
    assert status == "timeout" and "4 s" in reason
    assert run.passed == 3
    assert_box_still_works(box)


def test_sleep_forever_hits_the_suite_wall_clock(box: Sandbox) -> None:
    sleeper = "import time\ndef add(a, b):\n    time.sleep(10**6)\n"
    run = box.run_suite(sleeper, ADD_TESTS, timeout_s=3)
    assert run.passed == 0 and run.error is not None and "wall clock" in run.error
    assert all(o.status == "timeout" for o in run.outcomes)
    assert_box_still_works(box)


def test_a_million_lines_of_output_are_capped(box: Sandbox) -> None:
    flood = "import sys\nfor _ in range(100):\n    sys.stdout.write('spam spam spam\\n' * 10000)"
    streamed: list[int] = []
    run = box.run_suite(attack_in_small(flood), ADD_TESTS, timeout_s=20,
                        on_output=lambda _o, _s, text: streamed.append(len(text)))
    assert run.passed == 4  # printing is allowed, it just goes nowhere past the cap
    assert len(run.stdout.encode()) <= LIMITS.output_bytes
    assert sum(streamed) <= LIMITS.output_bytes
    assert "bytes dropped by the output cap" in run.stdout
    assert_box_still_works(box)


def test_a_flood_keeps_the_last_line_of_a_script(box: Sandbox) -> None:
    flood = "import sys\nfor _ in range(100):\n    sys.stdout.write('noise ' * 20000)\nprint()\nprint('RESULT 42')\n"
    run = box.run_script({}, flood, timeout_s=20)
    assert run.exit_code == 0 and run.truncated
    assert len(run.stdout.encode()) <= LIMITS.output_bytes
    assert run.stdout.splitlines()[-1] == "RESULT 42"


def test_filling_the_disk_is_contained(box: Sandbox) -> None:
    filler = (
        "import os\nchunk = b'x' * (1 << 20)\nwritten = 0\n"
        "try:\n"
        "    with open('big.bin', 'wb') as handle:\n"
        "        while written < (1 << 30):\n"
        "            handle.write(chunk)\n"
        "            written += len(chunk)\n"
        "except OSError as exc:\n"
        "    print('stopped', type(exc).__name__, written >> 20)\n"
    )
    run = box.run_script({}, filler, timeout_s=20)
    assert run.stdout.startswith("stopped"), run
    assert int(run.stdout.split()[-1]) <= 64  # the file-size rlimit or the tmpfs size, whichever first
    assert_box_still_works(box)


def test_network_is_unreachable(box: Sandbox) -> None:
    probe = (
        "import socket\n"
        "for host in [('1.1.1.1', 53), ('127.0.0.1', 22), ('deb.debian.org', 80)]:\n"
        "    try:\n"
        "        socket.create_connection(host, timeout=2).close()\n"
        "        print('connected', host)\n"
        "    except OSError as exc:\n"
        "        print('blocked', type(exc).__name__)\n"
    )
    run = box.run_script({}, probe, timeout_s=15)
    assert run.exit_code == 0, run
    assert "connected" not in run.stdout and run.stdout.count("blocked") == 3


KEYRINGS = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
add_key, request_key, keyctl = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]
for ring in (-4, -5, -3):  # the user, user session and session keyrings
    made = libc.syscall(add_key, b"user", b"left-for-later", b"1", 1, ring)
    print("add", ring, made, errno.errorcode.get(ctypes.get_errno(), "0") if made < 0 else "made")
found = libc.syscall(keyctl, 10, -4, b"user", b"left-for-later", 0)  # KEYCTL_SEARCH
print("search", found, errno.errorcode.get(ctypes.get_errno(), "0") if found < 0 else "found")
"""


def test_the_kernel_keyrings_are_refused(box: Sandbox) -> None:
    """A key outlives its process, and bubblewrap's user namespace gives a box no keyrings of its own: refused on
    both backends (Docker's seccomp profile; ``sandbox/seccomp.py`` for bubblewrap), so no run leaves a key for a
    later run or box."""
    run = box.run_script({}, KEYRINGS, timeout_s=15)
    assert run.exit_code == 0, run
    assert run.stdout.split("\n")[:4] == ["add -4 -1 EPERM", "add -5 -1 EPERM", "add -3 -1 EPERM",
                                           "search -1 EPERM"], run.stdout


def test_host_files_are_invisible_and_the_root_is_read_only(box: Sandbox) -> None:
    with tempfile.TemporaryDirectory() as host_dir:
        secret = Path(host_dir) / "secret.txt"
        secret.write_text("do not read")
        probe = (
            "import os\n"
            f"print('secret visible', os.path.exists({str(secret)!r}))\n"
            f"print('home visible', os.path.exists({str(Path.home() / '.bashrc')!r}) and "
            f"{str(Path.home())!r} != '/')\n"
            "for target in ['/usr/evil', '/etc/evil', '/evil', '/bin/evil']:\n"
            "    try:\n"
            "        open(target, 'w').write('x')\n"
            "        print('wrote', target)\n"
            "    except OSError:\n"
            "        print('refused')\n"
            "open('inside.txt', 'w').write('fine')\n"
            "print('work dir writable')\n"
        )
        run = box.run_script({}, probe)
        assert "secret visible False" in run.stdout, run
        assert "home visible False" in run.stdout
        assert "wrote" not in run.stdout and run.stdout.count("refused") == 4
        assert "work dir writable" in run.stdout
        assert secret.read_text() == "do not read"


def test_host_environment_is_not_visible(box: Sandbox) -> None:
    probe = (
        "import os\nprint(sorted(os.environ))\n"
        "for pid in os.listdir('/proc'):\n"
        "    try:\n"
        "        print(open(f'/proc/{pid}/environ', 'rb').read())\n"
        "    except (OSError, ValueError):\n"
        "        pass\n"
    )
    run = box.run_script({}, probe)
    assert run.exit_code == 0, run
    assert HOST_SECRET_VALUE not in run.stdout and HOST_SECRET_ENV not in run.stdout


def test_fake_passed_output_does_not_count(box: Sandbox) -> None:
    liar = (
        "import sys\nprint('Ran 99 tests in 0.1s\\n\\nOK\\n99 passed')\n"
        "print('99 passed', file=sys.stderr)\ndef add(a, b):\n    print('PASSED')\n    return 0\n"
    )
    run = box.run_suite(liar, ADD_TESTS)
    assert run.passed == 1  # only add(0, 0) == 0 is right
    assert outcome(run, "test_add.TestAdd.test_zero")[0] == "passed"


def test_exit_zero_at_import_fails_every_test(box: Sandbox) -> None:
    """The code runs in a process of its own: its exit ends the tests' connection to it, so every import fails."""
    run = box.run_suite("import os\nos._exit(0)\n", ADD_TESTS)
    assert run.passed == 0 and run.total == 4
    assert run.error is not None and "Lost" in run.error


def test_forged_verdicts_then_exit_fail_every_test(box: Sandbox) -> None:
    """The code's process holds no descriptor the host reads: what it writes to every one it has reaches
    nobody, and its exit is a crash of every test."""
    forger = (
        "import json, os\n"
        "for fd in range(3, 32):\n"
        "    for i in range(4):\n"
        "        for rec in ({'k': 'imported', 'errors': {}, 'tamper': []},\n"
        "                    {'k': 'verdict', 'i': i, 'nonce': '0' * 32, 'status': 'passed',\n"
        "                     'reason': '', 'tamper': []}):\n"
        "            try:\n"
        "                os.write(fd, (json.dumps(rec) + '\\n').encode())\n"
        "            except OSError:\n"
        "                pass\n"
        "os._exit(0)\n"
    )
    run = box.run_suite(forger, ADD_TESTS)
    assert run.passed == 0 and run.total == 4
    assert {o.status for o in run.outcomes} <= {"crashed", "error"} and not run.tampered


def test_system_exit_counts_as_a_failure(box: Sandbox) -> None:
    at_import = box.run_suite("raise SystemExit(0)\n", ADD_TESTS)
    assert at_import.passed == 0 and all("SystemExit" in o.reason for o in at_import.outcomes)
    in_test = box.run_suite(attack_in_small("raise SystemExit(0)"), ADD_TESTS)
    assert in_test.passed == 3 and outcome(in_test)[0] == "error"


WRONG_ADD = "def add(a, b):\n    return 0\n"


@pytest.mark.parametrize("patch", [
    "import unittest\nunittest.TestCase.assertEqual = lambda self, *a, **k: None\n",
    "import unittest\ndef fake_run(self, result=None):\n    return result\n"
    "unittest.TestCase.run = fake_run\nunittest.TestResult.wasSuccessful = lambda self: True\n",
], ids=["assertEqual", "TestCase.run"])
def test_patching_unittest_changes_nothing(box: Sandbox, patch: str) -> None:
    """The tests run in a process the code cannot reach: patching its own unittest leaves every verdict as the
    plain wrong code's."""
    plain = box.run_suite(WRONG_ADD, ADD_TESTS)
    run = box.run_suite(patch + WRONG_ADD, ADD_TESTS)
    assert [(o.name, o.status) for o in run.outcomes] == [(o.name, o.status) for o in plain.outcomes]
    assert run.passed == plain.passed == 1 and not run.tampered  # only add(0, 0) == 0 is right


def test_the_test_module_is_not_in_the_codes_process(box: Sandbox) -> None:
    # add() would replace the remaining tests with no-ops, if it could reach them.
    patcher = (
        "import sys\n"
        "def add(a, b):\n"
        "    cls = sys.modules['test_add'].TestAdd\n"
        "    for name in ('test_negative', 'test_small', 'test_zero'):\n"
        "        setattr(cls, name, lambda self: None)\n"
        "    return -1\n"
    )
    run = box.run_suite(patcher, ADD_TESTS)
    assert run.passed == 0 and not run.tampered
    assert all("KeyError" in o.reason for o in run.outcomes), run.outcomes


def test_killing_the_harness_is_contained(box: Sandbox) -> None:
    killer = attack_in_small("import os, signal\nfor pid in (1, os.getppid()):\n    try:\n"
                             "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass")
    run = box.run_suite(killer, ADD_TESTS)
    assert run.passed == 4 and run.error is None  # the kill failed: PID 1 ignores signals from inside
    assert_box_still_works(box)


def test_stray_background_processes_do_not_outlive_the_run(box: Sandbox) -> None:
    spawner = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    open('/tmp/marker', 'w').write('alive')\n"
        "    time.sleep(1000)\n"
        "print('parent done')\n"
    )
    first = box.run_script({}, spawner, timeout_s=5)
    assert "parent done" in first.stdout
    check = box.run_script({}, "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))\n")
    # only the harness (PID 1) and this probe are alive
    assert check.stdout.strip() == "2", check
