"""The operating-system wall's seccomp filter: which system calls a walled process may not make, per architecture.

Landlock walls paths; these calls act on something else (memory, other processes, keyrings, file
metadata, namespaces, the process tree) or on paths in ways Landlock does not govern, so the filter
refuses them with EPERM. Read off strace of the query and builder processes (LadybugDB 0.22 on
Python 3.11): neither needs any of them; threads are started with clone3, which answers ENOSYS here so
that glibc falls back to clone, whose flags the filter can read (clone3 keeps them behind a pointer).
"""

from __future__ import annotations

import errno
import struct
from enum import Enum

_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JSET_K = 0x45
_BPF_JGE_K = 0x35
_BPF_RET_K = 0x06
_X32_SYSCALL_BIT = 0x40000000
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARGS = 0, 4, 16

PROT_EXEC = 0x4
CLONE_THREAD = 0x00010000
CLONE_NEW_ANY = 0x7E020080
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET and NEWTIME: a new namespace of any kind."""


class Rule(Enum):
    """What the filter does with one call."""

    DENY = "deny"  # EPERM, whatever the arguments
    EXEC_PROT = "exec_prot"  # EPERM when the protection argument (index 2) asks for executable memory
    OTHER_PID = "other_pid"  # EPERM when the pid (argument 0) names another process (not 0, "this one")
    CLONE = "clone"  # EPERM for a namespace flag or a new process (only threads may be started)
    NO_SUCH_CALL = "enosys"  # ENOSYS: libc falls back to a call the filter can read


_COMMON = {  # the same number on every architecture (added after the unified table)
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "fchmodat2": 452, "setxattrat": 463,
    "getxattrat": 464, "listxattrat": 465, "removexattrat": 466, "open_tree_attr": 467, "file_getattr": 468,
    "file_setattr": 469,
}  # fmt: skip
_X86_64 = {
    "mmap": 9, "mprotect": 10, "pkey_mprotect": 329, "execve": 59, "execveat": 322, "socket": 41,
    "socketpair": 53, "ptrace": 101, "personality": 135, "process_vm_readv": 310, "process_vm_writev": 311,
    "userfaultfd": 323, "unshare": 272, "setns": 308, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
    "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
    "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "getxattr": 191, "lgetxattr": 192, "fgetxattr": 193,
    "listxattr": 194, "llistxattr": 195, "flistxattr": 196, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "prlimit64": 302, "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294,
    "fanotify_init": 300, "fanotify_mark": 301, "clone": 56, "fork": 57, "vfork": 58, "setsid": 112,
    "setpgid": 109, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "kcmp": 312, "bpf": 321,
    "perf_event_open": 298, "uselib": 134,
}  # fmt: skip
_AARCH64 = {
    "mmap": 222, "mprotect": 226, "pkey_mprotect": 288, "execve": 221, "execveat": 281, "socket": 198,
    "socketpair": 199, "ptrace": 117, "personality": 92, "process_vm_readv": 270, "process_vm_writev": 271,
    "userfaultfd": 282, "unshare": 97, "setns": 268, "open_by_handle_at": 265, "name_to_handle_at": 264,
    "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "msgget": 186, "msgctl": 187, "msgrcv": 188,
    "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193,
    "add_key": 217, "request_key": 218, "keyctl": 219,
    "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "utimensat": 88,
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "getxattr": 8, "lgetxattr": 9, "fgetxattr": 10,
    "listxattr": 11, "llistxattr": 12, "flistxattr": 13, "removexattr": 14, "lremovexattr": 15,
    "fremovexattr": 16, "prlimit64": 261, "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262,
    "fanotify_mark": 263, "clone": 220, "setsid": 157, "setpgid": 154, "mount": 40, "umount2": 39,
    "pivot_root": 41, "chroot": 51, "kcmp": 272, "bpf": 280, "perf_event_open": 241,
}  # fmt: skip
ARCHES = {"x86_64": (0xC000003E, _X86_64 | _COMMON), "aarch64": (0xC00000B7, _AARCH64 | _COMMON)}
"""machine: (AUDIT_ARCH_*, call numbers); a call an architecture lacks (chmod on aarch64) is simply absent."""

RULES = {
    "mmap": Rule.EXEC_PROT,  # a readable library could still be loaded with mmap(PROT_EXEC)
    "mprotect": Rule.EXEC_PROT,
    "pkey_mprotect": Rule.EXEC_PROT,
    "prlimit64": Rule.OTHER_PID,  # glibc's getrlimit/setrlimit are prlimit64(0, ...)
    "clone": Rule.CLONE,
    "clone3": Rule.NO_SUCH_CALL,
}
"""Calls with a conditional rule; every other call of the tables above is refused outright."""


def bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    """One `sock_filter` instruction."""
    return struct.pack("=HBBI", code, jt, jf, k)


def _conditional(rule: Rule, nr: int, deny: int) -> list[bytes]:
    """The instructions of one conditional rule (each starts by loading the call number again)."""
    arg = _OFFSET_ARGS  # argument 0; the low 32 bits (little-endian) hold a flag word or a pid_t
    if rule is Rule.NO_SUCH_CALL:
        return [
            bpf(_BPF_LD_W_ABS, _OFFSET_NR),
            bpf(_BPF_JEQ_K, nr, 0, 1),
            bpf(_BPF_RET_K, _SECCOMP_RET_ERRNO | errno.ENOSYS),
        ]
    head = [bpf(_BPF_LD_W_ABS, _OFFSET_NR)]
    if rule is Rule.EXEC_PROT:
        body = [bpf(_BPF_LD_W_ABS, arg + 16), bpf(_BPF_JSET_K, PROT_EXEC, 0, 1)]
    elif rule is Rule.OTHER_PID:
        body = [bpf(_BPF_LD_W_ABS, arg), bpf(_BPF_JEQ_K, 0, 1, 0)]
    else:  # CLONE: a namespace flag -> deny; no CLONE_THREAD (a new process) -> deny
        body = [bpf(_BPF_LD_W_ABS, arg), bpf(_BPF_JSET_K, CLONE_NEW_ANY, 1, 0), bpf(_BPF_JSET_K, CLONE_THREAD, 1, 0)]
    return head + [bpf(_BPF_JEQ_K, nr, 0, len(body) + 1)] + body + [bpf(_BPF_RET_K, deny)]


def seccomp_program(machine: str) -> bytes | None:
    """The filter for `machine` as raw `sock_filter` instructions, or None for an architecture it does not know."""
    if machine not in ARCHES:
        return None
    arch, numbers = ARCHES[machine]
    deny = _SECCOMP_RET_ERRNO | errno.EPERM
    head = [
        bpf(_BPF_LD_W_ABS, _OFFSET_ARCH),
        bpf(_BPF_JEQ_K, arch, 1, 0),
        bpf(_BPF_RET_K, deny),  # another architecture's calling convention (e.g. int 0x80): refused
        bpf(_BPF_LD_W_ABS, _OFFSET_NR),
    ]
    if machine == "x86_64":  # the x32 ABI numbers calls differently: refused
        head += [bpf(_BPF_JGE_K, _X32_SYSCALL_BIT, 0, 1), bpf(_BPF_RET_K, deny)]
    conditional = [ins for name, rule in RULES.items() for ins in _conditional(rule, numbers[name], deny)]
    plain = sorted(nr for name, nr in numbers.items() if name not in RULES)
    # one load, then a jump to the shared refusal for each plain call: [JEQ]*n, ALLOW, DENY
    jumps = [bpf(_BPF_JEQ_K, nr, len(plain) - i, 0) for i, nr in enumerate(plain)]
    tail = [bpf(_BPF_LD_W_ABS, _OFFSET_NR), *jumps, bpf(_BPF_RET_K, _SECCOMP_RET_ALLOW), bpf(_BPF_RET_K, deny)]
    return b"".join(head + conditional + tail)
