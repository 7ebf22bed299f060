"""The operating-system wall's private view of the file system: only the allowed folders exist (Linux).

Landlock refuses to open, list, change or run what lies outside the allowed folders, but the calls
that only look a path up (stat, access, readlink, statfs) are no right it governs: they would still
tell whether a file outside exists, its size, owner and access bits. So before the other walls go up,
`private_view` moves the process into a new user and mount namespace (no root needed where the
kernel lets an ordinary user make one) whose root is an empty read-only tmpfs that holds only the
allowed folders, bind-mounted at their own paths (read-only where only reading is allowed), and the
symbolic links on the way to them. Everything else (/proc, /etc, /home, the project, the cache's
other folders) does not exist there. The kernel gives a new user namespace only to a process that
has not started threads yet, so the caller runs this first.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from t2c_lib.graph.oswall_syscalls import ARCHES

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
_KEPT_FLAGS = {  # statvfs flag -> the mount flag a remount must repeat (a locked flag cannot be dropped)
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
    os.ST_NOATIME: MS_NOATIME,
    os.ST_NODIRATIME: MS_NODIRATIME,
    os.ST_RELATIME: MS_RELATIME,
}
MAX_LINKS = 16


@dataclass(frozen=True)
class _Step:
    """One thing to make in the new root: a folder, an empty file, a symbolic link, or a bind of an open folder."""

    kind: str  # "dir", "file", "link", "bind"
    path: str
    target: str = ""  # a link's text
    fd: int = -1  # the real folder or file, opened before the new root hides anything
    writable: bool = False


def _way_to(path: str, steps: list[_Step], links: int = 0) -> str:
    """Add the folders and links that lead to `path` to `steps`; return the real path they end at."""
    here = "/"
    parts = Path(path).parts[1:]
    for i, part in enumerate(parts):
        nxt = os.path.join(here, part)
        if os.path.islink(nxt) and links < MAX_LINKS:
            target = os.readlink(nxt)
            steps.append(_Step("link", nxt, target))
            rest = os.path.normpath(os.path.join(here, target, *parts[i + 1 :]))
            return _way_to(rest, steps, links + 1)
        steps.append(_Step("dir" if i < len(parts) - 1 or os.path.isdir(nxt) else "file", nxt))
        here = nxt
    return here


def _plan(read: list[Path], write: list[Path]) -> list[_Step]:
    """Every step of the new root, binds last and outer folders first; the real folders are opened now (in the
    new mount namespace: a bind takes its source from the caller's own namespace). The first bind is the
    folder the new root's tmpfs is mounted on (the first allowed folder: reachable until the binds are made)."""
    steps: list[_Step] = []
    binds: list[_Step] = []
    for path, writable in [(str(p), False) for p in read] + [(str(p), True) for p in write]:
        if not os.path.isabs(path) or not os.path.exists(path):
            continue
        real = _way_to(os.path.normpath(path), steps)
        binds.append(_Step("bind", real, fd=os.open(real, os.O_PATH | os.O_CLOEXEC), writable=writable))
    return steps + binds[:1] + sorted(binds[1:], key=lambda s: s.path.count("/"))


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731 - local shorthand
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    _check(libc.mount(enc(source), enc(target), enc(fstype), flags, None), f"mount {target}")


def _enter_namespace(libc: ctypes.CDLL) -> None:
    """A new user namespace mapping this process's ids to themselves, and a new mount namespace."""
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS)) != 0:
        if uid != 0:  # no user namespaces here (a sysctl, a container's filter); root can still make a mount namespace
            _check(-1, "unshare")
        _check(libc.unshare(ctypes.c_int(CLONE_NEWNS)), "unshare")
        return
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
            handle.write(text)


def _build(libc: ctypes.CDLL, root: str, steps: list[_Step]) -> None:
    """Make every step inside the tmpfs at `root`, then make the read-only binds and the root itself read-only."""
    for step in steps:
        where = root + step.path
        if step.kind == "link" and not os.path.lexists(where):
            os.symlink(step.target, where)
        elif step.kind == "dir" or (step.kind == "bind" and os.path.isdir(f"/proc/self/fd/{step.fd}")):
            os.makedirs(where, exist_ok=True)
        elif not os.path.lexists(where):
            open(where, "x").close()
        if step.kind == "bind":
            _mount(libc, f"/proc/self/fd/{step.fd}", where, None, MS_BIND)  # not MS_REC: the tmpfs is a submount
    for step in steps:
        if step.kind == "bind" and not step.writable:
            kept = os.statvfs(root + step.path).f_flag
            flags = sum(ms for st, ms in _KEPT_FLAGS.items() if kept & st)
            _mount(libc, None, root + step.path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    _mount(libc, None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _pivot(libc: ctypes.CDLL, root: str, cwd: str) -> None:
    """Make `root` the process's root, drop the old one, and return to `cwd` (or / where it is not in view)."""
    os.chdir(root)
    number = ARCHES[platform.machine()][1]["pivot_root"]
    libc.syscall.restype = ctypes.c_long
    _check(libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    _check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")
    try:
        os.chdir(cwd)
    except OSError:
        pass


def private_view(read: list[Path], write: list[Path]) -> str | None:
    """Leave this process a file system holding only `read` (read-only) and `write`; None when it holds, else why not."""
    if sys.platform != "linux" or platform.machine() not in ARCHES:
        return f"no private file-system view on {sys.platform} {platform.machine()}"
    libc = ctypes.CDLL(None, use_errno=True)
    cwd = os.getcwd()
    steps: list[_Step] = []
    try:
        _enter_namespace(libc)
        _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
        steps = _plan(read, write)
        root = next((s.path for s in steps if s.kind == "bind"), None)
        if root is None:
            return "no private file-system view (no allowed folder exists)"
        _mount(libc, "t2c-wall", root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        try:
            _build(libc, root, steps)
            _pivot(libc, root, cwd)
        except OSError:
            libc.umount2(root.encode(), MNT_DETACH)  # the allowed folder itself stays reachable
            os.chdir(cwd)
            raise
    except OSError as exc:
        return f"no private file-system view ({exc.strerror or exc}): paths outside can still be looked up (stat)"
    finally:
        for step in steps:
            if step.kind == "bind":
                os.close(step.fd)
    return None
