"""A seccomp filter for the bwrap sandboxes, assembled by hand (no libseccomp needed).

Defence in depth on top of the namespaces: sockets other than AF_UNIX fail with EAFNOSUPPORT
(there is no network in the sandbox anyway; this also stops netlink), and the syscalls a
sandboxed program has no business making (kernel keyrings, bpf, perf, ptrace, mounts, new
namespaces, io_uring, module loading, ...) fail with EPERM. Calls from a non-native ABI (i386,
x32) fail with ENOSYS so the numbers below cannot be sidestepped. x86_64 only; elsewhere
`program()` returns None and the sandbox runs without a filter (the namespaces still apply)."""

from __future__ import annotations

import errno
import platform
import struct

# linux/filter.h, linux/seccomp.h, linux/audit.h
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_RET_K = 0x06
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
AF_UNIX = 1

# x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl)
DENY_EPERM = {
    "personality": 135, "pivot_root": 155, "chroot": 161, "acct": 163, "mount": 165,
    "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "init_module": 175,
    "delete_module": 176, "quotactl": 179, "ptrace": 101, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
}  # fmt: skip
SOCKET_CALLS = (41, 53)  # socket, socketpair: domain is args[0]
AF_INET, AF_INET6 = 2, 10
OFF_NR, OFF_ARCH, OFF_ARG0 = 0, 4, 16


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program(allow_inet: bool = False) -> bytes | None:
    """The filter as `struct sock_filter[]` bytes, as `bwrap --seccomp FD` reads it.
    `allow_inet` (sandboxes with `network=True`): IPv4 and IPv6 sockets are allowed too."""
    if platform.machine() != "x86_64":
        return None
    ret_allow = _ins(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW)
    ret_enosys = _ins(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS)
    ret_eperm = _ins(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM)
    ret_eafnosupport = _ins(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT)
    out = [
        _ins(BPF_LD_W_ABS, 0, 0, OFF_ARCH),
        _ins(BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),  # native: skip the ENOSYS
        ret_enosys,
        _ins(BPF_LD_W_ABS, 0, 0, OFF_NR),
        _ins(BPF_JGE_K, 0, 1, X32_SYSCALL_BIT),  # x32 ABI: ENOSYS
        ret_enosys,
    ]
    for nr in sorted(DENY_EPERM.values()):
        out += [_ins(BPF_JEQ_K, 0, 1, nr), ret_eperm]
    allowed = (AF_UNIX, AF_INET, AF_INET6) if allow_inet else (AF_UNIX,)
    for nr in SOCKET_CALLS:
        # nr == socket/socketpair ? (load domain; allowed ? allow : EAFNOSUPPORT) : next
        checks = []
        for i, fam in enumerate(allowed):  # jump over the remaining checks to the allow
            checks.append(_ins(BPF_JEQ_K, len(allowed) - 1 - i, 0, fam))
        out += [
            _ins(BPF_JEQ_K, 0, 3 + len(checks), nr),
            _ins(BPF_LD_W_ABS, 0, 0, OFF_ARG0),
            *checks[:-1],
            _ins(BPF_JEQ_K, 0, 1, allowed[-1]),
            ret_allow,
            ret_eafnosupport,
        ]
    out.append(ret_allow)
    return b"".join(out)
