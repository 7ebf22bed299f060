"""The local server script (tools/neo4j/neo4j.sh): one server, loopback only, start/stop/status."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import neo4j
import pytest

from t2c_lib import config

pytestmark = pytest.mark.neo4j

SCRIPT = config.PROJECT_ROOT / "tools" / "neo4j" / "neo4j.sh"
LOCAL_DIR = config.PROJECT_ROOT / ".cache" / "neo4j"


def run_script(*args: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def listeners_of(pid: int) -> list[str]:
    """Local addresses (host:port) on which process `pid` listens for TCP."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


def local_pid() -> int:
    pidfile = LOCAL_DIR / "neo4j.pid"
    if not pidfile.is_file():
        pytest.skip("the Neo4j under test was not started by tools/neo4j/neo4j.sh")
    return int(pidfile.read_text().strip())


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "::1", "::ffff:127.0.0.1") or host.startswith("127.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
def test_the_server_listens_on_loopback_only(neo4j_kurikulum):
    addresses = listeners_of(local_pid())
    assert addresses, "the server process listens nowhere"
    assert all(is_loopback(a) for a in addresses), addresses
    assert any(a.endswith(f":{os.environ.get('NEO4J_PORT') or 7687}") for a in addresses)


def test_starting_twice_keeps_one_server(neo4j_kurikulum):
    pid = local_pid()
    result = run_script("start")
    assert result.returncode == 0, result.stderr
    assert "already running" in result.stdout
    assert local_pid() == pid
    status = run_script("status")
    assert status.returncode == 0 and f"pid {pid}" in status.stdout


def test_start_stop_status_on_a_second_port(tmp_path: Path, monkeypatch):
    """A second server in a scratch directory: start waits for Bolt, stop ends it, status tells.

    Without NEO4J_PASSWORD the first start generates a password into <dir>/password (0600), the
    server refuses connections without it, t2c finds it for a loopback URI, and a restart keeps it."""
    from t2c_lib.graph.base import StoreUnavailable
    from t2c_lib.graph.neo4j import Neo4jStore

    port = free_port()
    uri = f"bolt://127.0.0.1:{port}"
    home = tmp_path / "n4j"
    env = {
        "T2C_NEO4J_DIR": str(home),
        "NEO4J_PORT": str(port),
        "NEO4J_HEAP": "512m",
        "NEO4J_PAGECACHE": "64m",
        "NEO4J_USER": "neo4j",
    }
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    assert run_script("status", env=env).returncode == 3
    started = run_script("start", env=env)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"bolt://127.0.0.1:{port}" in started.stdout and "auth=on" in started.stdout
        assert "websocket=refused" in started.stdout
        password_file = home / "password"
        password = password_file.read_text().strip()
        assert len(password) == 32 and (password_file.stat().st_mode & 0o777) == 0o600
        assert password not in started.stdout + started.stderr + (home / "neo4j.log").read_text()
        pid = int((home / "neo4j.pid").read_text())
        with neo4j.GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
            driver.verify_connectivity()  # start returned only once Bolt answers
        for wrong in (None, ("neo4j", "wrong-password")):
            with neo4j.GraphDatabase.driver(uri, auth=wrong) as driver:
                with pytest.raises(neo4j.exceptions.AuthError):
                    driver.verify_connectivity()
        monkeypatch.setenv("T2C_NEO4J_DIR", str(home))
        store = Neo4jStore(uri=uri)  # the password comes from the server's cache
        try:
            assert store.query("RETURN 1 AS one").rows == [[1]]
        finally:
            store.close()
        monkeypatch.setenv("NEO4J_PASSWORD", "not-the-password")  # the environment wins over the cache
        with pytest.raises(StoreUnavailable, match="refused the credentials"):
            Neo4jStore(uri=uri)
        monkeypatch.delenv("NEO4J_PASSWORD")
        again = run_script("start", env=env)
        assert again.returncode == 0 and "already running" in again.stdout
        assert int((home / "neo4j.pid").read_text()) == pid
        if shutil.which("ss"):
            assert all(is_loopback(a) for a in listeners_of(pid))
    finally:
        stopped = run_script("stop", env=env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert run_script("status", env=env).returncode == 3
    time.sleep(0.5)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the port still answers after stop"
    assert (home / "password").read_text().strip() == password  # kept for the next start


def test_a_short_password_is_refused_before_starting(tmp_path: Path):
    env = {"T2C_NEO4J_DIR": str(tmp_path / "n4j"), "NEO4J_PORT": str(free_port()), "NEO4J_PASSWORD": "short"}
    result = run_script("start", env=env, timeout=120)
    assert result.returncode != 0 and "at least 8 characters" in result.stderr
    assert not (tmp_path / "n4j" / "neo4j.pid").exists()


WEBSOCKET_UPGRADE = (
    "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n"
)


@pytest.mark.parametrize(
    "request_text",
    [
        WEBSOCKET_UPGRADE.replace("{origin}", "https://attacker.example"),
        WEBSOCKET_UPGRADE.replace("{origin}", "http://127.0.0.1:{port}"),
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
    ],
    ids=["websocket-cross-origin", "websocket-same-origin", "plain-http"],
)
def test_http_and_websocket_are_refused_on_the_bolt_port(neo4j_kurikulum, request_text):
    """Neo4j 5.26 would switch any HTTP request on the Bolt port to Bolt-over-WebSocket (no setting
    turns it off, no Origin is checked); the launcher answers 403 and closes instead."""
    parts = urlsplit(neo4j_kurikulum.uri)
    if not config.is_loopback_uri(neo4j_kurikulum.uri):
        pytest.skip("the server under test is not the local one")
    port = parts.port or 7687
    with socket.create_connection((parts.hostname, port), timeout=5) as s:
        s.sendall(request_text.replace("{port}", str(port)).encode())
        reply = b""
        while chunk := s.recv(4096):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 403"), reply[:200]
    assert b"101 Switching Protocols" not in reply
    assert neo4j_kurikulum.query("MATCH (m:MK) RETURN count(m)").rows == [[63]]  # Bolt itself is untouched


def test_start_that_times_out_fails_with_the_log(tmp_path: Path):
    env = {
        "T2C_NEO4J_DIR": str(tmp_path / "n4j"),
        "NEO4J_PORT": str(free_port()),
        "NEO4J_START_TIMEOUT": "1",
        "NEO4J_HEAP": "512m",
        "NEO4J_PAGECACHE": "64m",
    }
    result = run_script("start", env=env)
    assert result.returncode != 0
    assert "did not answer" in result.stderr and "tail of" in result.stderr
    assert not (tmp_path / "n4j" / "neo4j.pid").exists()
    assert run_script("status", env=env).returncode == 3
