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


def keyring_filter() -> bytes:
    """The filter's instructions (``struct sock_filter``, native byte order), ready for ``bwrap --seccomp``.

    Load the arch; per known arch a block: not this arch, skip the block; load the call's number; a refused
    one jumps to the refusal at the end; else allow. An arch with no block is allowed."""
    checks = {arch: [(JUMP_AT_LEAST, X32_BIT)] * (arch == X86_64) + [(JUMP_EQUAL, nr) for nr in calls]
              for arch, calls in KEYRING_CALLS.items()}
    refuse_at = 1 + sum(3 + len(block) for block in checks.values()) + 1
    program: list[tuple[int, int, int, int]] = [(LOAD_WORD, 0, 0, 4)]  # (code, jump if true, if false, k)
    for arch, block in checks.items():
        program += [(JUMP_EQUAL, 0, len(block) + 2, arch), (LOAD_WORD, 0, 0, 0)]
        program += [(code, refuse_at - (len(program) + index) - 1, 0, nr) for index, (code, nr) in enumerate(block)]
        program.append((RETURN, 0, 0, ALLOW))
    program += [(RETURN, 0, 0, ALLOW), (RETURN, 0, 0, REFUSE)]  # an architecture not listed; the refusal
    assert len(program) == refuse_at + 1 and len(program) < 256  # jumps are 8-bit
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
