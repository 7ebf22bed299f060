"""`make lab` for real: JupyterLab from the project's environment (tools/lab.sh, what `make lab` runs),
headless, opens the executed 03_comparative_analysis notebook of a small finished run in Debian's
Chromium, and the DOM must hold its tables and every figure. `make test` installs Chromium
(tools/install_chromium.sh); without it this test says so, and fails in CI (T2C_REQUIRE_CHROMIUM=1).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.helpers.lab import finished_run

pytestmark = [pytest.mark.slow, pytest.mark.browser]  # papermill, JupyterLab and headless Chromium


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        reason = "chromium is not installed: run tools/install_chromium.sh as root (make test does)"
        if os.environ.get("T2C_REQUIRE_CHROMIUM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, seconds: float, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"JupyterLab exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"JupyterLab did not answer at {url} within {seconds:.0f} s")


def test_lab_renders_the_analysis_notebook_tables_and_figures(tmp_path: Path) -> None:
    browser = chromium()
    params_file = finished_run(tmp_path)
    env = {
        **os.environ,
        "T2C_RESULTS_DIR": str(tmp_path / "results"),
        "T2C_FIGURES_DIR": str(tmp_path / "figures"),
        "T2C_CACHE_DIR": str(tmp_path / "cache"),
        "T2C_LAB_ROOT": str(tmp_path),
    }
    executed = tmp_path / "03_comparative_analysis.ipynb"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "t2c_lib.study.notebook_engine",
            "--no-progress-bar",
            "-k",
            "python3",
            "--cwd",
            str(ROOT),
            str(ROOT / "notebooks" / "03_comparative_analysis.ipynb"),
            str(executed),
            "-p",
            "params_file",
            str(params_file),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    port, token = free_port(), secrets.token_hex(16)
    server = subprocess.Popen(
        [str(ROOT / "tools" / "lab.sh"), sys.executable, f"--port={port}", f"--IdentityProvider.token={token}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", 180, server)
        page = f"http://127.0.0.1:{port}/lab/tree/{executed.name}?token={token}"
        dom = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1400,1800",
                "--virtual-time-budget=60000",
                "--dump-dom",
                page,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        ).stdout
        shot = tmp_path / "lab.png"
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1400,1800",
                "--virtual-time-budget=60000",
                f"--screenshot={shot}",
                page,
            ],
            capture_output=True,
            timeout=300,
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            log = server.communicate(timeout=60)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            log = server.communicate()[0].decode(errors="replace")
    assert "jp-Notebook" in dom, "JupyterLab did not open the notebook"
    assert len(re.findall(r'<table[^>]*class="dataframe"', dom)) >= 3, "the comparison, agentic and strata tables"
    assert "Zero-Shot_Full" in dom and "pass_at_1_final__t2c_sp" in dom
    from t2c_lib.report.plots import FIGURES

    assert len(re.findall(r'<img[^>]*src="data:image/png', dom)) >= len(FIGURES), "every figure is shown"
    assert "Traceback" not in dom and 'data-mime-type="application/vnd.jupyter.stderr"' not in dom
    assert shot.is_file() and shot.stat().st_size > 50_000  # a rendered page, not a blank one
    assert "127.0.0.1" in log and "without encryption" not in log
