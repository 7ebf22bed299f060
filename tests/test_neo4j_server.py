"""The local server script (tools/neo4j/neo4j.sh): one server, loopback only, start/stop/status."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import neo4j
import pytest

from neo4j_fixtures import neo4j_kurikulum, neo4j_session_store  # noqa: F401  (fixtures)
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


def test_start_stop_status_on_a_second_port(tmp_path: Path):
    """A second server in a scratch directory: start waits for Bolt, stop ends it, status tells."""
    port = free_port()
    env = {"T2C_NEO4J_DIR": str(tmp_path / "n4j"), "NEO4J_PORT": str(port), "NEO4J_HEAP": "512m",
           "NEO4J_PAGECACHE": "64m", "NEO4J_PASSWORD": "t2c-test-pw", "NEO4J_USER": "neo4j"}
    assert run_script("status", env=env).returncode == 3
    started = run_script("start", env=env)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"bolt://127.0.0.1:{port}" in started.stdout and "auth=on" in started.stdout
        pid = int((tmp_path / "n4j" / "neo4j.pid").read_text())
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "t2c-test-pw")) as driver:
            driver.verify_connectivity()  # start returned only once Bolt answers
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "wrong-password")) as driver:
            with pytest.raises(neo4j.exceptions.AuthError):
                driver.verify_connectivity()
        again = run_script("start", env=env)
        assert again.returncode == 0 and "already running" in again.stdout
        assert int((tmp_path / "n4j" / "neo4j.pid").read_text()) == pid
        if shutil.which("ss"):
            assert all(is_loopback(a) for a in listeners_of(pid))
    finally:
        stopped = run_script("stop", env=env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert run_script("status", env=env).returncode == 3
    time.sleep(0.5)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the port still answers after stop"


def test_start_that_times_out_fails_with_the_log(tmp_path: Path):
    env = {"T2C_NEO4J_DIR": str(tmp_path / "n4j"), "NEO4J_PORT": str(free_port()), "NEO4J_START_TIMEOUT": "1",
           "NEO4J_HEAP": "512m", "NEO4J_PAGECACHE": "64m"}
    result = run_script("start", env=env)
    assert result.returncode != 0
    assert "did not answer" in result.stderr and "tail of" in result.stderr
    assert not (tmp_path / "n4j" / "neo4j.pid").exists()
    assert run_script("status", env=env).returncode == 3
