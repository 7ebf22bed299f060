"""The parent's side of the embedded store's query process: start it, send it a query, bound it.

`QueryProcess.call` sends one request to `graph/ladybug_worker.py` and waits for the reply
while it watches the clock and the resident memory of the process and everything it started. Past the time limit (plus
GRACE_S for the process to answer with the database's own timeout) or over the memory budget
the process is killed and the caller gets QueryTimeout or ResourceLimit; the next query
starts a fresh process (about a third of a second). A process that dies by itself (a crash
in the database) gives ResourceLimit too. The user's process never holds the database, so
no query can take it down.

The process starts with a fixed environment in an isolated interpreter, and a kill stops its whole
tree (`graph/ladybug_child.py`). It walls itself in at start (`graph/oswall.py`, unless `T2C_OS_WALL=0`) and says which
walls hold in its ready frame (`QueryProcess.wall`); where the kernel lacks a part, this module
says so once per user process, and the other walls stay.
"""

from __future__ import annotations

import io
import logging
import os
import select
import signal
import subprocess
import time
import weakref
from pathlib import Path
from typing import Any

from t2c_lib.config import int_setting
from t2c_lib.errors import (
    QueryError,
    QueryTimeout,
    ResourceLimit,
    ResultTooLarge,
    StoreUnavailable,
    UnsafeQuery,
)
from t2c_lib.graph.ladybug_child import kill_tree, start_child, tree_resident_bytes
from t2c_lib.graph.ladybug_worker import HEADER, SafeUnpickler, write_frame
from t2c_lib.graph.messages import safe_message
from t2c_lib.graph.oswall import WallStatus, wall_enabled

log = logging.getLogger(__name__)
_SAID: set[tuple[str, str]] = set()

GRACE_S = 1.0
"""Seconds past the time limit the process gets to answer with the database's own timeout before it is killed."""
START_TIMEOUT_S = 60.0
MAX_REPLY_BYTES = 512 * 1024**2
"""A reply frame larger than this is refused unread (the worker's byte budget keeps real replies far below)."""
POLL_S = 0.02
DEFAULT_QUERY_MEMORY = 2 * 1024**3
"""Resident memory the query process may use (`T2C_QUERY_MEMORY_MB`), the database's buffer pool included."""
WORKER_MODULE = "t2c_lib.graph.ladybug_worker"
"""The module the query process runs (a test may name a compromised copy of it, to show what the walls hold)."""


def query_memory_setting() -> int:
    """The query process's memory budget in bytes, from `T2C_QUERY_MEMORY_MB` (a positive integer), else 2 GiB."""
    return int_setting("T2C_QUERY_MEMORY_MB", DEFAULT_QUERY_MEMORY // 1024**2, minimum=64) * 1024**2


class QueryProcess:
    """One child process holding the database read-only; serve one request at a time (the store locks)."""

    def __init__(self, db_path: Path, buffer_pool_bytes: int, memory_bytes: int, os_wall: bool | None = None) -> None:
        """`os_wall`: wall the process in (default: on unless `T2C_OS_WALL=0`)."""
        self.memory_bytes = memory_bytes
        wall_on = wall_enabled() if os_wall is None else os_wall
        db_path = Path(db_path).resolve()  # the process starts in the database's folder
        parent_read, child_write = os.pipe()
        child_read, parent_write = os.pipe()
        args = [str(db_path), str(child_read), str(child_write), str(buffer_pool_bytes), str(memory_bytes)]
        try:
            self.proc = start_child(
                WORKER_MODULE, [*args, "1" if wall_on else "0"], (child_read, child_write), db_path.parent
            )
        finally:
            os.close(child_read)
            os.close(child_write)
        self._requests = os.fdopen(parent_write, "wb")
        self._replies = parent_read
        self._finalizer = weakref.finalize(self, _stop, self.proc, self._requests, parent_read)
        ready = self._receive(time.perf_counter() + START_TIMEOUT_S, starting=True)
        if "error" in ready:
            self.close()
            raise StoreUnavailable(safe_message(str(ready["message"])))
        self.wall = WallStatus.from_dict(ready.get("wall") or {})
        if wall_on:
            report_wall(self.wall)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, request: dict[str, Any], started: float, timeout_s: float) -> dict[str, Any]:
        """Send a request, wait for its reply within `timeout_s` of `started`; raise the store error a failed reply names."""
        remaining = timeout_s - (time.perf_counter() - started)
        if remaining <= 0:
            raise QueryTimeout(
                f"query stopped after {time.perf_counter() - started:.2f} s (time limit {timeout_s:g} s)"
            )
        request = dict(request, timeout_ms=max(1, int(remaining * 1000)))
        try:
            write_frame(self._requests, request)
        except (BrokenPipeError, OSError):
            self.close()
            raise ResourceLimit("the database process had stopped; the query was not run (try again)") from None
        try:
            reply = self._receive(started + timeout_s + GRACE_S, timeout_s=timeout_s, started=started)
        except BaseException:
            self.close()
            raise
        if "error" in reply:
            raise _error(reply, started, timeout_s)
        return reply

    def _receive(
        self, deadline: float, timeout_s: float = 0.0, started: float = 0.0, starting: bool = False
    ) -> dict[str, Any]:
        """Read one reply frame, watching the deadline and the process's memory."""
        header = self._read(HEADER.size, deadline, timeout_s, started, starting)
        (size,) = HEADER.unpack(header)
        if size > MAX_REPLY_BYTES:
            self.close()
            raise ResultTooLarge(
                f"the database process sent a reply of {size:,} bytes, over {MAX_REPLY_BYTES:,}; it was restarted"
            )
        payload = self._read(size, deadline, timeout_s, started, starting)
        return SafeUnpickler(io.BytesIO(payload)).load()

    def _read(self, size: int, deadline: float, timeout_s: float, started: float, starting: bool) -> bytes:
        chunks: list[bytes] = []
        left = size
        while left:
            now = time.perf_counter()
            if now > deadline:
                self.close()
                if starting:
                    raise StoreUnavailable("the database process did not start in time")
                raise QueryTimeout(
                    f"query stopped after {now - started:.2f} s (time limit {timeout_s:g} s); the database process was restarted"
                )
            ready, _, _ = select.select([self._replies], [], [], min(POLL_S, deadline - now))
            if not ready:
                self._check_memory()
                continue
            chunk = os.read(self._replies, min(left, 1 << 20))
            if not chunk:
                code = self.proc.wait()
                self.close()
                if starting:
                    raise StoreUnavailable(f"the database process exited at start (status {code})")
                raise ResourceLimit(f"the query made the database process stop ({_status(code)}); it was restarted")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _check_memory(self) -> None:
        used = tree_resident_bytes(self.proc.pid)  # every process it started counts
        if used > self.memory_bytes:
            self.close()
            raise ResourceLimit(
                f"the query used more than {self.memory_bytes // 1024**2:,} MB of memory (T2C_QUERY_MEMORY_MB) "
                "and was stopped; the database process was restarted"
            )

    def close(self) -> None:
        self._finalizer()


def report_wall(wall: WallStatus, what: str = "query process") -> None:
    """Log, once per user process, that the operating-system wall around `what` is incomplete on this machine."""
    if wall.complete or (what, wall.describe()) in _SAID:
        return
    _SAID.add((what, wall.describe()))
    log.warning(
        "the embedded store's operating-system wall around its %s is incomplete here (%s); its other walls stay",
        what,
        wall.describe(),
    )


def _stop(proc: subprocess.Popen, requests: Any, replies_fd: int) -> None:
    """Kill the process and everything it started (it holds nothing that needs a clean close: the database is
    read-only) and free the pipes."""
    if proc.poll() is None:
        kill_tree(proc.pid)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process SIGKILL cannot stop
        pass
    for close in (requests.close, lambda: os.close(replies_fd)):
        try:
            close()
        except OSError:
            pass


def _status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _error(reply: dict[str, Any], started: float, timeout_s: float) -> Exception:
    """The store error a failed reply stands for, with a message safe to show and store."""
    kind, message = reply["error"], safe_message(str(reply.get("message", "")))
    if kind == "timeout":
        return QueryTimeout(f"query stopped after {time.perf_counter() - started:.2f} s (time limit {timeout_s:g} s)")
    if kind == "several":
        return UnsafeQuery(message)
    if kind == "unsafe":
        return UnsafeQuery(message)
    if kind == "too_large":
        return ResultTooLarge(message)
    if kind == "resource":
        return ResourceLimit(message)
    if kind == "unavailable":
        return StoreUnavailable(message)
    return QueryError(message, kind=kind)
