"""How the embedded store starts, measures and stops its child processes (the query process and the builder).

- **A fixed environment, an isolated interpreter.** The child gets `CHILD_ENV` and nothing of the
  user's (a `.env` or shell may have set `PYTHONPATH`, `PYTHONSTARTUP`, `LD_PRELOAD`, ...), and runs
  `python -I` (no `PYTHON*` variable, no user site, no script folder on the import path), so no
  `sitecustomize` or planted module runs inside it. The folders it imports `t2c_lib` and `ladybug`
  from are the ones this process imports them from, passed as arguments (`import_roots`).
- **The whole tree.** The memory watch counts every process the child started (`tree_resident_bytes`),
  and `kill_tree` stops them all first (SIGSTOP, so none can start another), then kills them: a
  descendant that left the process group with `setsid` is still found through its parent.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

CHILD_ENV = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
"""The child's whole environment: the same on every machine, nothing inherited."""

_BOOT = (
    "import sys, runpy; n = int(sys.argv.pop(1)); roots = sys.argv[1 : 1 + n]; del sys.argv[1 : 1 + n]; "
    "sys.path[:0] = roots[:1]; sys.path += [r for r in roots[1:] if r not in sys.path]; "
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
)
"""`python -I -c _BOOT <n> <root>... <module> <args...>`: t2c_lib's root first, ladybug's after the standard
library (where it is not there already), then run the module as __main__."""
_PAGE = os.sysconf("SC_PAGE_SIZE")
MAX_TREE = 4096
"""Processes `descendants` follows at most (a fork bomb under a missing seccomp filter stays bounded here)."""


def import_roots() -> list[str]:
    """The folders holding the `t2c_lib` and `ladybug` packages this process imports (the child imports the same)."""
    roots = [str(Path(__file__).resolve().parents[2])]
    spec = importlib.util.find_spec("ladybug")
    if spec is not None and spec.origin:
        roots.append(str(Path(spec.origin).resolve().parents[1]))
    return list(dict.fromkeys(roots))


def child_command(module: str, args: list[str]) -> list[str]:
    """The command line that runs `module` as __main__ in an isolated interpreter with `args`."""
    roots = import_roots()
    return [sys.executable, "-I", "-c", _BOOT, str(len(roots)), *roots, module, *args]


def start_child(
    module: str, args: list[str], pass_fds: tuple[int, ...], cwd: Path, stdin: int = subprocess.DEVNULL
) -> subprocess.Popen:
    """`module` started as a child (`child_command`): `CHILD_ENV` only, in `cwd`, its own session, no output kept."""
    return subprocess.Popen(
        child_command(module, args),
        pass_fds=pass_fds,
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(CHILD_ENV),
        cwd=str(cwd),
        start_new_session=True,
    )


def children(pid: int) -> list[int]:
    """The direct children of `pid` (every thread's), [] when it is gone."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                found += [int(x) for x in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, their children, ...), at most MAX_TREE."""
    seen: list[int] = []
    todo = children(pid)
    while todo and len(seen) < MAX_TREE:
        child = todo.pop()
        if child not in seen:
            seen.append(child)
            todo += children(child)
    return seen


def resident_bytes(pid: int) -> int:
    """Resident memory of one process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_resident_bytes(pid: int) -> int:
    """Resident memory of `pid` and every process below it."""
    return resident_bytes(pid) + sum(resident_bytes(child) for child in descendants(pid))


def kill_tree(pid: int) -> None:
    """Stop `pid` and every process below it (until no new one appears), then kill them all."""
    stopped: list[int] = []
    for _ in range(8):
        fresh = [p for p in [pid, *descendants(pid)] if p not in stopped]
        if not fresh:
            break
        for target in fresh:
            _signal(target, signal.SIGSTOP)
        stopped += fresh
    for target in reversed(stopped):
        _signal(target, signal.SIGKILL)
    _signal(-pid, signal.SIGKILL)  # the process group too (the child leads its own session)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
