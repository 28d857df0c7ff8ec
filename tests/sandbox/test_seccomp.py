"""The seccomp filters, run by a small classic-BPF interpreter over every case they decide: the bubblewrap box's,
and the one a watched run's code starts under (``watch_filter``).

The kernel runs them in the box (``test_hostile.py::test_the_kernel_keyrings_are_refused``,
``test_egress.py``); here each branch is checked on its own, for the architectures they know and one they do
not."""

from __future__ import annotations

import struct

import pytest

from logomesh.sandbox.seccomp import (
    ALLOW,
    HANDOFF_FD,
    JUMP_AT_LEAST,
    JUMP_EQUAL,
    LOAD_WORD,
    NOTIFY,
    REFUSE,
    RETURN,
    keyring_filter,
    watch_filter,
)

X86_64, I386, AARCH64, ARM, RISCV64 = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028, 0xC00000F3


def run(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the filter returns for a call ``nr`` of ``arch`` with ``args`` (``struct seccomp_data``: nr at 0,
    arch at 4, the instruction pointer at 8, six 64-bit arguments from 16)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *args, *[0] * (6 - len(args)))
    instructions = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        code, jump_true, jump_false, k = instructions[pc]
        if code == LOAD_WORD:
            accumulator = struct.unpack_from("=I", data, k)[0]
        elif code in (JUMP_EQUAL, JUMP_AT_LEAST):
            taken = accumulator == k if code == JUMP_EQUAL else accumulator >= k
            pc += jump_true if taken else jump_false
        elif code == RETURN:
            return int(k)
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
        pc += 1


@pytest.mark.parametrize(("arch", "nr", "expected"), [
    (X86_64, 248, REFUSE), (X86_64, 249, REFUSE), (X86_64, 250, REFUSE),  # add_key, request_key, keyctl
    (X86_64, 0, ALLOW), (X86_64, 251, ALLOW), (X86_64, 217, ALLOW),  # read; ioprio_set; aarch64's add_key
    (X86_64, 0x40000000 | 1, REFUSE),  # any x32 call
    (I386, 286, REFUSE), (I386, 288, REFUSE), (I386, 250, ALLOW),
    (AARCH64, 217, REFUSE), (AARCH64, 219, REFUSE), (AARCH64, 250, ALLOW),
    (ARM, 309, REFUSE), (ARM, 311, REFUSE), (ARM, 0x40000000, ALLOW),
    (RISCV64, 219, ALLOW),  # an architecture it has no numbers for keeps its keyrings
])
def test_the_filter_refuses_the_keyring_calls_and_nothing_else(arch: int, nr: int, expected: int) -> None:
    assert run(keyring_filter(), nr, arch) == expected


AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
ADDRESS = 0x7F00_1234_5678  # a pointer: its high half is not zero


@pytest.mark.parametrize(("arch", "nr", "args", "expected"), [
    (X86_64, 41, (AF_INET, 1), NOTIFY), (X86_64, 41, (AF_INET6, 2), NOTIFY),  # socket: an internet family
    (X86_64, 41, (AF_UNIX, 1), ALLOW),  # a local socket: the box's own, unwatched
    (X86_64, 42, (3, ADDRESS, 16), NOTIFY),  # every connect
    (X86_64, 44, (3, ADDRESS, 5, 0, 0, 0), ALLOW),  # send on a connected socket (no address)
    (X86_64, 44, (3, ADDRESS, 5, 0, ADDRESS, 16), NOTIFY), (X86_64, 44, (3, ADDRESS, 5, 0, 1 << 32, 16), NOTIFY),
    (X86_64, 46, (5, ADDRESS, 0), NOTIFY), (X86_64, 46, (HANDOFF_FD, ADDRESS, 0), ALLOW),  # sendmsg; the hand-over
    (X86_64, 54, (3, 6, 1), NOTIFY), (X86_64, 54, (3, 0, 11), NOTIFY),  # setsockopt: TCP_NODELAY, IP_RECVERR
    (X86_64, 54, (3, 1, 20), ALLOW),  # SOL_SOCKET: a local socket has those
    (X86_64, 425, (8, ADDRESS), REFUSE),  # io_uring_setup
    (X86_64, 0, (0, ADDRESS, 1), ALLOW), (X86_64, 0x40000000 | 42, (3, ADDRESS, 16), REFUSE),  # read; x32
    (AARCH64, 198, (AF_INET, 2), NOTIFY), (AARCH64, 203, (3, ADDRESS, 16), NOTIFY),
    (AARCH64, 211, (HANDOFF_FD, ADDRESS, 0), ALLOW), (AARCH64, 41, (AF_INET, 1), ALLOW),  # x86_64's socket number
    (I386, 102, (3, ADDRESS), REFUSE), (RISCV64, 198, (AF_INET, 1), REFUSE),  # socketcall; an unlisted arch
])
def test_the_watch_filter_hands_over_connections_and_nothing_else(arch: int, nr: int, args: tuple[int, ...],
                                                                   expected: int) -> None:
    assert run(watch_filter(), nr, arch, args) == expected
