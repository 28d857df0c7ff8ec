"""The bubblewrap box's seccomp filter, run by a small classic-BPF interpreter over every case it decides.

The kernel runs it in the box (``test_hostile.py::test_the_kernel_keyrings_are_refused``); here each branch is
checked on its own, for the architectures it knows and one it does not."""

from __future__ import annotations

import struct

import pytest

from logomesh.sandbox.seccomp import ALLOW, JUMP_AT_LEAST, JUMP_EQUAL, LOAD_WORD, REFUSE, RETURN, keyring_filter

X86_64, I386, AARCH64, ARM, RISCV64 = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028, 0xC00000F3


def run(program: bytes, nr: int, arch: int) -> int:
    """What the filter returns for a call ``nr`` of ``arch`` (``struct seccomp_data``: nr at 0, arch at 4)."""
    data = struct.pack("=iI", nr, arch)
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
