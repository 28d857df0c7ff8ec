"""The seccomp filter of a bubblewrap box: the kernel keyrings refused, as Docker's default profile refuses them.

A key in a user keyring outlives the process that added it, and bubblewrap's user namespace does not give a box
keyrings of its own (measured: a key one box added was found by a later box on the same host). So code could
leave a mark for its own later runs, in the same box or the next, and learn that the judge ran it before (see
``harness/server.py: clear_places`` for the marks a run can leave in its box's files). Docker's default seccomp
profile refuses ``add_key``, ``request_key`` and ``keyctl``; this filter does the same for bubblewrap
(``bwrap --seccomp FD`` reads it), with ``EPERM``.

The program is classic BPF over ``struct seccomp_data`` (``nr`` at offset 0, ``arch`` at 4), one block per
architecture whose syscall numbers are known here; a process of another architecture keeps the keyrings (none
runs in a box built for x86_64 or aarch64). On x86_64 every x32 call is refused too, as Docker does.
"""

from __future__ import annotations

import errno
import struct

LOAD_WORD, JUMP_EQUAL, JUMP_AT_LEAST, RETURN = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
ALLOW, REFUSE = 0x7FFF0000, 0x00050000 | errno.EPERM  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
X32_BIT = 0x40000000

# arch (AUDIT_ARCH_*) -> add_key, request_key, keyctl
KEYRING_CALLS: dict[int, tuple[int, int, int]] = {
    0xC000003E: (248, 249, 250),  # x86_64
    0x40000003: (286, 287, 288),  # i386 (int 0x80 from an x86_64 process)
    0xC00000B7: (217, 218, 219),  # aarch64
    0x40000028: (309, 310, 311),  # arm (aarch32 compat)
}
X86_64 = 0xC000003E


def _instruction(code: int, k: int, jump_true: int = 0, jump_false: int = 0) -> tuple[int, int, int, int]:
    return code, jump_true, jump_false, k


def keyring_filter() -> bytes:
    """The filter's instructions (``struct sock_filter``, native byte order), ready for ``bwrap --seccomp``."""
    blocks: list[list[tuple[int, int, int, int]]] = []
    for arch, calls in KEYRING_CALLS.items():
        checks = [("at least", X32_BIT)] if arch == X86_64 else []
        checks += [("equal", nr) for nr in calls]
        blocks.append([_instruction(JUMP_EQUAL, arch), _instruction(LOAD_WORD, 0)]
                      + [_instruction(JUMP_AT_LEAST if kind == "at least" else JUMP_EQUAL, nr)
                         for kind, nr in checks]
                      + [_instruction(RETURN, ALLOW)])
    program: list[tuple[int, int, int, int]] = [_instruction(LOAD_WORD, 4)]
    refuse_at = 1 + sum(len(block) for block in blocks) + 1  # after every block and the unknown arch's allow
    for block in blocks:
        start = len(program)
        for offset, (code, _, _, k) in enumerate(block):
            here = start + offset
            if offset == 0:  # not this arch: skip to the next block
                program.append((code, 0, len(block) - 1, k))
            elif code in (JUMP_EQUAL, JUMP_AT_LEAST):  # a refused call: to the refusal, else on
                program.append((code, refuse_at - here - 1, 0, k))
            else:
                program.append((code, 0, 0, k))
    program.append(_instruction(RETURN, ALLOW))  # an architecture not listed
    program.append(_instruction(RETURN, REFUSE))
    assert len(program) == refuse_at + 1 and len(program) < 256  # jumps are 8-bit
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
