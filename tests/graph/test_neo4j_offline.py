"""The Neo4j store without a server: an unreachable server is one clear line naming the URI."""

from __future__ import annotations

import socket

import pytest

from t2c_lib import config
from t2c_lib.graph.base import StoreUnavailable, value_bytes
from t2c_lib.graph.neo4j import Neo4jStore, _map_types, _unquote_rel_type
from t2c_lib.schema import PropType


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_one_clear_line(monkeypatch):
    uri = f"bolt://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("NEO4J_URI", uri)
    with pytest.raises(StoreUnavailable) as info:
        Neo4jStore()
    message = str(info.value)
    assert uri in message and "make neo4j" in message
    assert "\n" not in message


def test_invalid_uri_is_named():
    with pytest.raises(StoreUnavailable, match="invalid NEO4J_URI 'htp://x'"):
        Neo4jStore(uri="htp://x")


def test_type_names_map_onto_prop_types():
    assert _map_types(["String"], "L.p") is PropType.STRING
    assert _map_types(["Long"], "L.p") is PropType.INTEGER
    assert _map_types(["Long", "Double"], "L.p") is PropType.FLOAT
    assert _map_types(["StringArray"], "L.p") is PropType.LIST_STRING
    assert _map_types(["DoubleArray"], "L.p") is PropType.LIST_FLOAT
    with pytest.raises(StoreUnavailable, match="Point"):
        _map_types(["Point"], "L.p")
    assert _unquote_rel_type(":`PURSUED_IN`") == "PURSUED_IN"
    assert _unquote_rel_type(":`A``B`") == "A`B"


def test_the_local_servers_password_is_read_for_loopback_only(tmp_path, monkeypatch):
    """NEO4J_PASSWORD wins; without it a loopback URI reads <T2C_NEO4J_DIR>/password while the local launcher
    runs on that port, any other URI nothing."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    (tmp_path / "password").write_text("generated-password-0123456789abc\n")
    monkeypatch.setenv("T2C_NEO4J_DIR", str(tmp_path))
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    # no launcher running: whatever listens on the port gets no password
    assert config.neo4j_password("bolt://127.0.0.1:7687") is None
    stand_in = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "t2c.neo4j.Launcher", "home", "7687"]
    )
    try:
        # Popen can return before the child has exec'd: until then /proc/<pid>/cmdline is empty
        cmdline = Path(f"/proc/{stand_in.pid}/cmdline")
        deadline = time.monotonic() + 10
        while b"t2c.neo4j.Launcher" not in cmdline.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        (tmp_path / "neo4j.pid").write_text(f"{stand_in.pid}\n")
        for uri in ("bolt://127.0.0.1:7687", "neo4j://localhost", "bolt://[::1]:7687", "bolt://127.0.1.1"):
            assert config.neo4j_password(uri) == "generated-password-0123456789abc", uri
        for uri in (
            "bolt://db.example.org:7687",
            "neo4j+s://abcd.databases.neo4j.io",
            "bolt://10.0.0.5:7687",
            "not a uri",
            "bolt://127.0.0.1:7999",
        ):  # another port: not the launcher's
            assert config.neo4j_password(uri) is None, uri
        monkeypatch.setenv("NEO4J_PASSWORD", "from-the-environment")
        assert config.neo4j_password("bolt://127.0.0.1:7687") == "from-the-environment"
        assert config.neo4j_password("bolt://db.example.org:7687") == "from-the-environment"
        monkeypatch.delenv("NEO4J_PASSWORD")
        (tmp_path / "password").unlink()
        assert config.neo4j_password("bolt://127.0.0.1:7687") is None
    finally:
        stand_in.kill()
        stand_in.wait()


def test_a_refused_local_password_names_the_cache_file(tmp_path, monkeypatch):
    import neo4j.exceptions as nx

    from t2c_lib.graph.neo4j import _unavailable

    monkeypatch.setenv("T2C_NEO4J_DIR", str(tmp_path))
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    message = str(_unavailable(nx.AuthError("unauthorized"), "bolt://127.0.0.1:7687"))
    assert "NEO4J_PASSWORD" in message and str(tmp_path / "password") in message
    assert str(tmp_path) not in str(_unavailable(nx.AuthError("unauthorized"), "bolt://db.example.org:7687"))


def test_value_bytes_counts_values_and_survives_depth():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert value_bytes(deep) == 16 * 5001  # iterative: no RecursionError
    expected = {"abc": 19, 3.5: 16, None: 16, True: 16}
    for value, size in expected.items():
        assert value_bytes(value) == size
    assert value_bytes([1, [2, "x"]]) == 16 + 16 + 16 + 16 + 17
    assert value_bytes({"a": [1, 2.5], "b": None}) == 16 + 17 + 16 + 16 + 16 + 17 + 16


class _BoltSocketLike:
    """What the driver's BoltSocket offers the watch: `recv_into`, and the OS socket as `_socket`."""

    def __init__(self, raw):
        self._socket = raw

    def recv_into(self, buffer, nbytes=0):
        return self._socket.recv_into(buffer, nbytes)


def _session_on(raw):
    from types import SimpleNamespace

    return SimpleNamespace(_connection=SimpleNamespace(socket=_BoltSocketLike(raw), local_port=1))


def test_the_deadline_cuts_a_read_that_would_block_for_ever():
    """No server needed: a socket nobody writes to; the watch shuts it down at the deadline plus the grace."""
    import time

    from t2c_lib.graph.neo4j_limits import GRACE_S, Watch

    terminated = []
    mine, peer = socket.socketpair()
    try:
        started = time.perf_counter()
        with Watch(_session_on(mine), timeout_s=0.2, terminate=terminated.append) as watch:
            data = mine.recv(16)  # blocks until the watch cuts the socket
        took = time.perf_counter() - started
    finally:
        mine.close()
        peer.close()
    assert data == b"" and watch.reason == "deadline"
    assert 0.2 + GRACE_S - 0.05 < took < 0.2 + GRACE_S + 1.0
    time.sleep(0.1)
    assert terminated == [watch.token] and watch.metadata == {"t2c_query": watch.token}


def test_the_wire_budget_stops_reading_inside_a_message_and_unhooks():
    from t2c_lib.graph.neo4j_limits import Watch, WireBudgetExceeded

    mine, peer = socket.socketpair()
    try:
        session = _session_on(mine)
        sock = session._connection.socket
        peer.sendall(b"x" * 5000)
        buffer = bytearray(1000)
        with Watch(session, timeout_s=5.0, wire_limit=2500) as watch:
            watch.hook()
            with pytest.raises(WireBudgetExceeded):
                while True:
                    sock.recv_into(buffer, 1000)
        assert watch.reason == "wire" and 2500 < watch.wire_bytes <= 3000
        assert "recv_into" not in vars(sock)  # the driver's own method again
        assert sock.recv_into(buffer, 1000) == 1000  # a watch that is over never cuts
    finally:
        mine.close()
        peer.close()
