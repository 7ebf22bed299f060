"""Opening a Neo4j store has a client deadline (issue 36): a server that takes the connection and then says
nothing (as one whose heap ran out did) no longer holds `t2c` for ever. No Neo4j needed: the servers here
are real sockets on 127.0.0.1 that accept and then stay silent, before or after the Bolt handshake."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

import t2c_lib.graph.neo4j as neo4j_store
from t2c_lib.graph.base import StoreUnavailable
from t2c_lib.graph.neo4j_limits import GRACE_S

DEADLINE_S = 1.0
SLACK_S = 1.5
"""Thread wake-ups and the driver's own bookkeeping on a loaded 2-core machine."""


class SilentServer:
    """Listens on 127.0.0.1; with `handshake`, answers the Bolt handshake (version 5.4), then never a byte more."""

    def __init__(self, handshake: bool) -> None:
        self.handshake = handshake
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)
            if self.handshake:
                conn.settimeout(2.0)
                try:
                    conn.recv(20)  # magic + four version proposals
                    conn.sendall(b"\x00\x00\x04\x05")  # Bolt 5.4
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=2)
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture(params=[False, True], ids=["silent after connect", "silent after the Bolt handshake"])
def silent_server(request, monkeypatch) -> Iterator[SilentServer]:
    monkeypatch.setattr(neo4j_store, "OPEN_TIMEOUT_S", DEADLINE_S)
    monkeypatch.setattr(neo4j_store, "CONNECT_TIMEOUT_S", DEADLINE_S)
    monkeypatch.setenv("NEO4J_PASSWORD", "not-a-real-password")
    server = SilentServer(handshake=request.param)
    yield server
    server.close()


def test_opening_a_store_on_a_silent_server_ends_at_the_deadline(silent_server):
    started = time.perf_counter()
    with pytest.raises(StoreUnavailable) as info:
        neo4j_store.Neo4jStore(uri=f"bolt://127.0.0.1:{silent_server.port}")
    took = time.perf_counter() - started
    print(f"silent server: StoreUnavailable after {took:.2f} s: {info.value}")
    assert took < DEADLINE_S + GRACE_S + SLACK_S
    assert "not-a-real-password" not in str(info.value)
