"""Client-side walls around one call to a Neo4j server: a deadline that cuts the connection, a wire byte budget.

The official Python driver has no read timeout of its own: it waits for the server's answer as
long as the server takes. The server's transaction timeout does not stop work inside one
expression (a regex with nested quantifiers ran 29 s under a 5 s limit, and a list built in one
comprehension until the heap ran out), and a parser stack overflow on deeply nested parentheses
leaves the client waiting for ever. So every call that runs a query is watched by a `Watch`:

- a deadline fires `timeout_s + GRACE_S` after the call began (the server's own timeout gets the
  grace to answer first, with its own message). It shuts the connection's socket down, so the
  read the caller is blocked in fails at once, and asks the server, from another session, to
  terminate the call's transaction (found by the random token in its metadata), so the server
  stops as soon as its work next checks for termination;
- a counting hook on the connection's socket stops reading as soon as the bytes received for
  the call pass the wire limit, inside a message: one huge record is never unpacked into
  Python objects. The server's transaction is terminated the same way.

Either wall leaves the connection defunct; the driver then discards it. Both reach into the
driver's connection (`session._connection.socket`), which the public API does not expose;
`socket_of` fails loudly if a driver version keeps it elsewhere.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from t2c_lib.graph.base import StoreError

log = logging.getLogger(__name__)

GRACE_S = 0.5
"""Seconds past the time limit before the client cuts the connection: the server's own timeout answers first."""
CUT_RETRY_S = 0.05
"""While the caller has not yet got a connection (pool acquisition, BEGIN), the cut is retried this often."""
METADATA_KEY = "t2c_query"

_WATCHED_PORTS: set[int] = set()
"""Local ports of connections under a Watch: the driver's ERROR line when one turns defunct is dropped,
since the store reports that failure itself (as a timeout, a result too large or a lost server)."""


class _WatchedConnectionErrors(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (str(record.msg).startswith("[#%04X]  _: <CONNECTION> error") and args and args[0] in _WATCHED_PORTS)


logging.getLogger("neo4j.io").addFilter(_WatchedConnectionErrors())


class _Deadlines:
    """One daemon thread for every watch: it sleeps until the earliest deadline and starts that watch's
    cut on a thread of its own. Arming costs a heap push (a thread per call cost ~0.15 ms to start)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[list[Any]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, delay_s: float, callback: Callable[[], None]) -> list[Any]:
        entry = [time.monotonic() + delay_s, next(self._seq), callback]
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None or not self._thread.is_alive():  # first use, or after a fork
                self._thread = threading.Thread(target=self._run, name="t2c-neo4j-deadlines", daemon=True)
                self._thread.start()
            if self._heap[0] is entry:
                self._cond.notify()
        return entry

    @staticmethod
    def disarm(entry: list[Any]) -> None:
        entry[2] = None  # dropped when it reaches the top of the heap

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2] is None:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                delay = self._heap[0][0] - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                callback = heapq.heappop(self._heap)[2]
                threading.Thread(target=callback, name="t2c-neo4j-cut", daemon=True).start()


_DEADLINES = _Deadlines()


class WireBudgetExceeded(OSError):
    """Raised inside the driver's socket read: an OSError, so the driver marks the connection defunct."""


def socket_of(session: Any) -> Any:
    """The driver's socket object (with `recv_into`) under a session's current connection."""
    connection = getattr(session, "_connection", None)
    sock = getattr(connection, "socket", None)
    if sock is None or not callable(getattr(sock, "recv_into", None)):
        raise StoreError(
            "this neo4j driver keeps its connection where t2c's client-side limits cannot reach it "
            "(session._connection.socket); install a neo4j driver 5.x or 6.x"
        )
    return sock


def _raw_socket(session: Any) -> socket.socket | None:
    """The OS socket under a session's current connection, or None when it has none yet."""
    try:
        raw = session._connection.socket._socket
    except AttributeError:
        return None
    return raw if isinstance(raw, socket.socket) else None


class Watch:
    """Deadline and wire budget for one call on one session (or several, see `add`); a context manager.

    `reason` says which wall stopped the call: None, "deadline" or "wire". Use: begin the
    transaction with `metadata=watch.metadata`, then `watch.hook()`, then run; on any
    exception, `watch.reason` tells whether a wall caused it.
    """

    def __init__(
        self,
        session: Any | None,
        timeout_s: float,
        wire_limit: int | None = None,
        terminate: Callable[[str], None] | None = None,
    ) -> None:
        self.session = session
        self.sessions: list[Any] = [] if session is None else [session]
        self.timeout_s = timeout_s
        self.wire_limit = wire_limit
        self.token = uuid.uuid4().hex
        self.metadata = {METADATA_KEY: self.token}
        self.reason: str | None = None
        self.wire_bytes = 0
        self.started = time.perf_counter()
        self._terminate = terminate
        self._lock = threading.Lock()
        self._done = False
        self._hooked: Any = None
        self._ports: set[int] = set()
        self._armed: list[Any] | None = None

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started

    def __enter__(self) -> Watch:
        self._armed = _DEADLINES.arm(max(self.timeout_s, 0.0) + GRACE_S, self._on_deadline)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """The call is over: no cut from now on, and the connection's socket is the driver's own again."""
        with self._lock:
            self._done = True
        if self._armed is not None:
            _DEADLINES.disarm(self._armed)
        _WATCHED_PORTS.difference_update(self._ports)
        if self._hooked is not None:
            self._hooked.__dict__.pop("recv_into", None)
            self._hooked = None

    def add(self, session: Any) -> None:
        """Watch another session too (a library that opens its own, like CyVer): the deadline cuts it as well."""
        with self._lock:
            self.sessions.append(session)

    def hook(self) -> None:
        """Count the bytes read on the session's connection from now on (only the watching without a wire limit)."""
        sock = socket_of(self.session)
        self._watch_port(self.session)
        limit = self.wire_limit
        if limit is None:
            return
        original = sock.recv_into

        def recv_into(buffer: Any, nbytes: int = 0) -> int:
            received = original(buffer, nbytes)
            self.wire_bytes += received
            if self.wire_bytes > limit:
                self._stop("wire")
                raise WireBudgetExceeded(f"more than {limit} bytes received for one query")
            return received

        sock.recv_into = recv_into
        self._hooked = sock

    def _watch_port(self, session: Any) -> None:
        port = getattr(getattr(session, "_connection", None), "local_port", None)
        if isinstance(port, int):
            self._ports.add(port)
            _WATCHED_PORTS.add(port)

    def _stop(self, reason: str) -> bool:
        """Record the first wall that fired and have the server terminate the transaction; False once the call is over."""
        with self._lock:
            if self._done:
                return False
            first = self.reason is None
            self.reason = self.reason or reason
        if first and self._terminate is not None:
            threading.Thread(
                target=self._terminate, args=(self.token,), name="t2c-neo4j-terminate", daemon=True
            ).start()
        return True

    def _on_deadline(self) -> None:
        """On a thread of its own: cut the callers' connections, and any they get later, until the call is over."""
        if not self._stop("deadline"):
            return
        cut: list[socket.socket] = []  # kept alive, so a new socket never shares an old one's identity
        while True:
            with self._lock:
                if self._done:
                    return
                for session in self.sessions:
                    raw = _raw_socket(session)
                    if raw is not None and not any(raw is done for done in cut):
                        self._watch_port(session)
                        try:
                            raw.shutdown(socket.SHUT_RDWR)
                        except OSError:  # already closed
                            pass
                        cut.append(raw)
            time.sleep(CUT_RETRY_S)
