"""The operating-system wall: a process takes away its own file, network and code-loading rights (Linux).

The gate and the plan wall read Cypher; this wall does not, so it holds even where they read a
query wrongly. A process calls `restrict` once, after it has imported everything it needs and
before it handles hostile input, and from then on (with every thread it starts later):

- **Landlock** (no root, Linux 5.13+): every file-system right the kernel's ABI knows is handled,
  and only the folders given are reachable, read-only or read-write as asked; nothing else can be
  opened, listed, created, written or executed; TCP bind/connect are handled with no rule (ABI 4+),
  abstract unix sockets and signals are scoped to the process (ABI 6+);
- **a private file-system view** (`oswall_view.py`, first, while mounting is still allowed): a new
  user and mount namespace in which only the given folders exist, so even the calls Landlock does
  not govern (stat, access, readlink) find nothing outside;
- **a fresh session keyring**, so the inherited one's keys cannot be named;
- **seccomp** (`oswall_syscalls.py`): a BPF filter refuses (EPERM) what Landlock cannot express:
  mapping memory executable (a readable library could still be loaded with `mmap(PROT_EXEC)`), exec,
  sockets, io_uring (whose operations bypass the filter), ptrace, SysV IPC, key calls, file metadata
  changes (chmod, chown, utime, xattrs), inotify/fanotify, prlimit on another process, namespaces,
  every new process and session (only threads may be started), mounts;
- **capabilities**: all dropped (for a process started by root, or by anyone inside its new namespace).

Landlock and seccomp filters bind the calling thread and its future children only, and the kernel gives
a new user namespace only to a single-threaded process, so `restrict` must run before the process
starts threads (LadybugDB starts its workers when a database is opened).
Where the kernel lacks either, `restrict` says which walls hold (`WallStatus`) and never raises for
that: the caller reports it and keeps its other walls.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.graph.oswall_syscalls import ARCHES, bpf, seccomp_program
from t2c_lib.graph.oswall_view import private_view

ENV_SWITCH = "T2C_OS_WALL"
"""`T2C_OS_WALL=0` turns the wall off (for measuring its cost); anything else, or unset, keeps it on."""

# --- Landlock (include/uapi/linux/landlock.h) ---------------------------------------------------

_SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture (added after the unified table)
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
"""The rights a rule on a file (not a folder) may carry; any other right on a file is EINVAL."""
READ_RIGHTS = FS_READ_FILE | FS_READ_DIR
WRITE_RIGHTS = FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG | FS_TRUNCATE | FS_REFER
"""What a database needs in a folder it builds: create, write, truncate, rename and remove files and folders."""


def _fs_rights(abi: int) -> int:
    """Every file-system right Landlock ABI `abi` knows (all of them handled: whatever is not allowed is denied)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


# --- seccomp (include/uapi/linux/seccomp.h): the filter itself is `oswall_syscalls` ---------------

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_bpf = bpf


@dataclass(frozen=True)
class WallStatus:
    """Which parts of the wall hold in this process: Landlock's ABI (0: none), its parts, and seccomp."""

    landlock_abi: int = 0
    landlock: tuple[str, ...] = ()  # "fs", "net", "scope"
    seccomp: bool = False
    problems: tuple[str, ...] = field(default=())
    capabilities_dropped: bool = False  # a process started by root keeps no capability either
    view: bool = False  # only the allowed folders exist in its file system (`oswall_view`)
    keyring: bool = False  # a fresh, empty session keyring (the inherited one cannot be named)

    @property
    def complete(self) -> bool:
        """Files (opened and looked up), network, code loading and the other calls all walled."""
        return "fs" in self.landlock and self.seccomp and self.view

    def describe(self) -> str:
        """One line for logs and reports."""
        if not self.landlock and not self.seccomp:
            return "off" + (f" ({'; '.join(self.problems)})" if self.problems else "")
        parts = []
        if self.landlock:
            parts.append(f"landlock ABI {self.landlock_abi} ({', '.join(self.landlock)})")
        if self.seccomp:
            parts.append("seccomp (no exec mappings, exec, sockets, new processes, IPC, keys, file metadata)")
        if self.view:
            parts.append("private file-system view")
        if self.capabilities_dropped:
            parts.append("no capabilities")
        text = " + ".join(parts)
        return text + (f"; missing: {'; '.join(self.problems)}" if self.problems else "")

    def as_dict(self) -> dict[str, object]:
        return {
            "landlock_abi": self.landlock_abi,
            "landlock": list(self.landlock),
            "seccomp": self.seccomp,
            "problems": list(self.problems),
            "capabilities_dropped": self.capabilities_dropped,
            "view": self.view,
            "keyring": self.keyring,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WallStatus:  # the wall's report as a child process sent it (JSON)
        return cls(
            int(data.get("landlock_abi", 0) or 0),
            tuple(str(x) for x in data.get("landlock", ()) or ()),
            bool(data.get("seccomp", False)),
            tuple(str(x) for x in data.get("problems", ()) or ()),
            bool(data.get("capabilities_dropped", False)),
            bool(data.get("view", False)),
            bool(data.get("keyring", False)),
        )


OFF = WallStatus(problems=("turned off (T2C_OS_WALL=0)",))


def wall_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether the wall is on: `T2C_OS_WALL` unset or anything but 0/false/no/off."""
    value = (environ if environ is not None else os.environ).get(ENV_SWITCH, "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 where Landlock is missing or disabled)."""
    if sys.platform != "linux":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(
        ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(0, int(abi))


def system_library_dirs() -> list[Path]:
    """Folders of Python's own modules and the system's shared libraries (read-only for a lazy import)."""
    candidates = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    dirs = [p / "lib" for p in candidates] + [p / "lib64" for p in candidates]
    dirs += [Path(p) for p in ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib")]
    return sorted({d for d in dirs if d.is_dir()})


def restrict(read: Iterable[Path] = (), write: Iterable[Path] = ()) -> WallStatus:
    """Wall this process in: read only `read` (and below), read and write only `write`; no network,
    no exec, no executable mappings, no new process; nothing else even exists in its file system.
    Best effort: report what holds, never raise for a missing kernel feature. Call it single-threaded."""
    if sys.platform != "linux":
        return WallStatus(problems=(f"not Linux ({sys.platform})",))
    libc = _libc()
    read, write = [Path(p) for p in read], [Path(p) for p in write]
    problems: list[str] = []
    view_problem = private_view(read, write)  # before no_new_privs and Landlock, which forbid mounting
    if view_problem:
        problems.append(view_problem)
    keyring = _fresh_keyring(libc, problems)
    if _prctl(libc, _PR_SET_NO_NEW_PRIVS, 1) != 0:
        return WallStatus(problems=(f"no_new_privs refused ({os.strerror(ctypes.get_errno())})",))
    abi, parts = _landlock(libc, read, write, problems)
    seccomp = _seccomp(libc, problems)
    dropped = _drop_capabilities(libc, problems)
    return WallStatus(abi, parts, seccomp, tuple(problems), dropped, view_problem is None, keyring)


_KEYCTL_JOIN_SESSION_KEYRING = 1


def _fresh_keyring(libc: ctypes.CDLL, problems: list[str]) -> bool:
    """Join a new anonymous session keyring, so keys of the inherited session cannot be named (seccomp
    then refuses every key call; this holds where it cannot)."""
    numbers = ARCHES.get(platform.machine(), (0, {}))[1]
    if (
        "keyctl" not in numbers
        or _syscall(libc, numbers["keyctl"], ctypes.c_long(_KEYCTL_JOIN_SESSION_KEYRING), None) < 0
    ):
        problems.append("the inherited session keyring stays joined (keyctl refused)")
        return False
    return True


_CAPABILITY_VERSION_3 = 0x20080522


def _drop_capabilities(libc: ctypes.CDLL, problems: list[str]) -> bool:
    """Clear the effective, permitted and inheritable capability sets (a no-op for an ordinary user; for root
    it takes away what Landlock does not govern: loading kernel modules, raw devices, ...)."""
    header = ctypes.create_string_buffer(struct.pack("=Ii", _CAPABILITY_VERSION_3, 0), 8)
    data = ctypes.create_string_buffer(bytes(24), 24)  # two {effective, permitted, inheritable} words
    capset = getattr(libc, "capset", None)
    if capset is None or capset(header, data) != 0:
        problems.append("capabilities kept (capset refused)")
        return False
    return True


def _prctl(libc: ctypes.CDLL, option: int, arg2: int = 0, arg3: int = 0) -> int:
    """prctl with every argument as an unsigned long (it is variadic: an int would leave the upper half undefined)."""
    libc.prctl.restype = ctypes.c_int
    zero = ctypes.c_ulong(0)
    return int(libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), ctypes.c_ulong(arg3), zero, zero))


def _syscall(libc: ctypes.CDLL, number: int, *args: object) -> int:
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(ctypes.c_long(number), *args))


def _landlock(
    libc: ctypes.CDLL, read: list[Path], write: list[Path], problems: list[str]
) -> tuple[int, tuple[str, ...]]:
    abi = landlock_abi()
    if abi < 1:
        problems.append("Landlock unavailable in this kernel (file and network access not walled)")
        return 0, ()
    fs = _fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", fs, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _syscall(libc, _SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        problems.append(f"Landlock ruleset refused ({os.strerror(ctypes.get_errno())})")
        return 0, ()
    try:
        for path, rights in [(p, READ_RIGHTS) for p in read] + [(p, READ_RIGHTS | WRITE_RIGHTS) for p in write]:
            _allow(libc, ruleset, path, rights & fs, problems)
        if _syscall(libc, _SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            problems.append(f"Landlock restrict_self refused ({os.strerror(ctypes.get_errno())})")
            return 0, ()
    finally:
        os.close(ruleset)
    parts = ["fs"] + (["net"] if net else []) + (["scope"] if scoped else [])
    if not net:
        problems.append(f"Landlock ABI {abi} cannot wall TCP (seccomp refuses sockets instead)")
    return abi, tuple(parts)


def _allow(libc: ctypes.CDLL, ruleset: int, path: Path, rights: int, problems: list[str]) -> None:
    """One path-beneath rule; a file (not a folder) gets only file rights, else the kernel says EINVAL."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if _syscall(libc, _SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), rule, 0):
            problems.append(f"Landlock rule for a path refused ({errno.errorcode.get(ctypes.get_errno(), '?')})")
    finally:
        os.close(fd)


def _seccomp(libc: ctypes.CDLL, problems: list[str]) -> bool:
    program = seccomp_program(platform.machine())
    if program is None:
        problems.append(f"no seccomp filter for {platform.machine()} (libraries could still be mapped)")
        return False
    count = len(program) // 8
    filters = ctypes.create_string_buffer(program, len(program))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = _Prog(count, ctypes.addressof(filters))
    if _prctl(libc, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog)) != 0:
        problems.append(f"seccomp refused ({os.strerror(ctypes.get_errno())})")
        return False
    return True
