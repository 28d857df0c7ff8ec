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


# The injection oracles' watch (``harness/egress.py``): the calls a connection goes through, per architecture.
NOTIFY = 0x7FC00000  # SECCOMP_RET_USER_NOTIF
JUMP = 0x05  # BPF_JMP|BPF_JA
WATCHED_CALLS: dict[int, dict[str, int]] = {
    0xC000003E: {"socket": 41, "connect": 42, "sendto": 44, "sendmsg": 46, "setsockopt": 54,
                 "io_uring_setup": 425},  # x86_64
    0xC00000B7: {"socket": 198, "connect": 203, "sendto": 206, "sendmsg": 211, "setsockopt": 208,
                 "io_uring_setup": 425},  # aarch64
}
INTERNET = (2, 10)  # AF_INET, AF_INET6
IP_LEVELS = (0, 6, 17, 41)  # IPPROTO_IP, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_IPV6: options a local socket lacks
HANDOFF_FD = 1023  # the descriptor the filter's listener leaves the code's process by (``harness/egress.py``)


def _arg(index: int, high: bool = False) -> int:
    """The offset of a call's argument in ``struct seccomp_data`` (its low or high 32 bits, little-endian)."""
    return 16 + 8 * index + 4 * high


Instruction = tuple[int, "str | int", "str | int", int]  # (code, jump if true, if false, k); a jump may name a label


def watch_filter() -> bytes:
    """The filter the code's process starts under when its connections are watched: ``socket`` of an internet
    family, every ``connect`` and ``sendmsg`` (but one from ``HANDOFF_FD``, above any descriptor the code may
    hold, which hands the filter's listener to the server), ``sendto`` with an address and ``setsockopt`` of an
    internet protocol's level go to the harness server (user notification); ``io_uring_setup``, whose rings
    make calls seccomp never sees, is refused; so is every call of an architecture whose numbers are not listed
    here (x32, i386 through ``int 0x80``)."""
    program: list[Instruction | str] = [(LOAD_WORD, 0, 0, 4)]  # a string marks where the next instruction is
    for arch, calls in WATCHED_CALLS.items():
        here = f"arch{arch}"
        program += [(JUMP_EQUAL, 0, f"after-{here}", arch), (LOAD_WORD, 0, 0, 0)]
        if arch == X86_64:
            program.append((JUMP_AT_LEAST, "refuse", 0, X32_BIT))
        program += [
            (JUMP_EQUAL, f"socket-{here}", 0, calls["socket"]),
            (JUMP_EQUAL, "notify", 0, calls["connect"]),
            (JUMP_EQUAL, f"sendmsg-{here}", 0, calls["sendmsg"]),
            (JUMP_EQUAL, f"sendto-{here}", 0, calls["sendto"]),
            (JUMP_EQUAL, f"setsockopt-{here}", 0, calls["setsockopt"]),
            (JUMP_EQUAL, "refuse", "allow", calls["io_uring_setup"]),
            f"socket-{here}", (LOAD_WORD, 0, 0, _arg(0)),
            (JUMP_EQUAL, "notify", 0, INTERNET[0]),
            (JUMP_EQUAL, "notify", "allow", INTERNET[1]),
            f"sendmsg-{here}", (LOAD_WORD, 0, 0, _arg(0)),
            (JUMP_EQUAL, "allow", "notify", HANDOFF_FD),
            f"setsockopt-{here}", (LOAD_WORD, 0, 0, _arg(1)),
            *[(JUMP_EQUAL, "notify", 0, level) for level in IP_LEVELS[:-1]],
            (JUMP_EQUAL, "notify", "allow", IP_LEVELS[-1]),
            f"sendto-{here}", (LOAD_WORD, 0, 0, _arg(4)),
            (JUMP_EQUAL, 0, "notify", 0),
            (LOAD_WORD, 0, 0, _arg(4, high=True)),
            (JUMP_EQUAL, "allow", "notify", 0),
            f"after-{here}",
        ]
    program += [(RETURN, 0, 0, REFUSE), "allow", (RETURN, 0, 0, ALLOW), "notify", (RETURN, 0, 0, NOTIFY),
                "refuse", (RETURN, 0, 0, REFUSE)]
    return _assemble(program)


def _assemble(program: list[Instruction | str]) -> bytes:
    """Instructions with their labels resolved to the 8-bit relative jumps classic BPF takes."""
    at: dict[str, int] = {}
    code: list[Instruction] = []
    for item in program:
        if isinstance(item, str):
            at[item] = len(code)
        else:
            code.append(item)

    def offset(target: str | int, index: int) -> int:
        jump = at[target] - index - 1 if isinstance(target, str) else target
        assert 0 <= jump < 256, "classic BPF jumps are 8-bit and forward"
        return jump

    return b"".join(struct.pack("=HBBI", op, offset(yes, i), offset(no, i), k)
                    for i, (op, yes, no, k) in enumerate(code))


def watched_calls() -> dict[str, dict[str, str]]:
    """The calls' numbers per architecture as the harness server reads them (JSON keys are strings)."""
    return {str(arch): {str(nr): name for name, nr in calls.items()} for arch, calls in WATCHED_CALLS.items()}
