"""Notebooks run by `make all` start their kernel on IPC sockets: no "TCP without encryption" warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # subprocesses: papermill

NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c1",
            "metadata": {"tags": ["parameters"]},
            "outputs": [],
            "source": ["value = 1"],
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c2",
            "metadata": {},
            "outputs": [],
            "source": ["print('value', value * 2)"],
        },
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def test_papermill_through_the_ipc_engine_runs_without_the_tcp_warning(tmp_path: Path) -> None:
    source, out = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    source.write_text(json.dumps(NOTEBOOK))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "t2c_lib.study.notebook_engine",
            "--no-progress-bar",
            "--log-output",
            "-k",
            "python3",
            str(source),
            str(out),
            "-p",
            "value",
            "21",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "without encryption" not in done.stdout + done.stderr
    outputs = json.loads(out.read_text())["cells"][-1]["outputs"]
    assert outputs[0]["text"] == ["value 42\n"]
    makefile = (ROOT / "Makefile").read_text()
    assert "-m t2c_lib.study.notebook_engine" in makefile  # `make all` uses it


def test_engine_start_skips_the_slow_optional_iri_checker() -> None:
    """Importing the engine leaves out rfc3987_syntax (about 3 s of Lark grammar building) and nbformat still validates."""
    import subprocess
    import sys

    code = (
        "import sys; import t2c_lib.study.notebook_engine; import nbformat; "
        "nbformat.validate(nbformat.v4.new_notebook()); print(sys.modules.get('rfc3987_syntax', 'absent'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["None"]  # blocked, not imported


def test_the_kernel_runs_exit_handlers_then_ends_without_teardown(tmp_path: Path) -> None:
    """`t2c_lib.study.kernel`: the notebook's atexit handlers (and weakref finalizers) run; debugpy stays importable."""
    marker = tmp_path / "exit-handler-ran"
    notebook = json.loads(json.dumps(NOTEBOOK))
    notebook["cells"][1]["source"] = [
        "import atexit, sys, pathlib\n",
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n",
        "print(sys.argv[0].endswith('kernel.py'), sys.modules.get('debugpy', 'absent') is not None)",
    ]
    source, out = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    source.write_text(json.dumps(notebook))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "t2c_lib.study.notebook_engine",
            "--no-progress-bar",
            "-k",
            "python3",
            str(source),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["cells"][-1]["outputs"][0]["text"] == ["True True\n"]
    assert marker.read_text() == "yes"


def test_kernel_command_replaces_only_ipykernels_launcher() -> None:
    from t2c_lib.study.kernel import SCRIPT, command

    assert command(["/py", "-m", "ipykernel_launcher", "-f", "c.json"]) == ["/py", SCRIPT, "-f", "c.json"]
    assert command(["/other/kernel", "-f", "c.json"]) == ["/other/kernel", "-f", "c.json"]
