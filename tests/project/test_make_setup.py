"""`make setup` builds llama.cpp for one instruction-set level: portable (x86-64-v3) by default, native on request.

GNU make runs the real Makefile dry (`-n`) in a scratch project: which build it would make,
with which CMake options, and that a venv keeps its level until `LLAMA_BUILD` changes it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = [
    pytest.mark.slow,  # runs make
    pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make"),
]


def _project(tmp_path: Path, stamps: tuple[str, ...]) -> Path:
    """A checkout's Makefile beside a venv that holds `stamps` (made after pyproject.toml)."""
    project = tmp_path / "project"
    (project / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", project / "Makefile")
    (project / "pyproject.toml").write_text("", encoding="utf-8")
    (project / ".venv" / "bin" / "python").write_text("", encoding="utf-8")
    (project / ".venv" / "bin" / "python").chmod(0o755)
    time.sleep(0.01)
    for stamp in stamps:
        (project / ".venv" / stamp).write_text("", encoding="utf-8")
        time.sleep(0.01)
    return project


def _dry_setup(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-n", "setup", *args], cwd=project, capture_output=True, text=True, timeout=60)


def _llama_install(out: str) -> str:
    joined = out.replace("\\\n", " ")  # a recipe line continued with a backslash is one command
    lines = [line for line in joined.splitlines() if "pip install" in line and "llama-cpp-python==" in line]
    assert len(lines) == 1, out
    return lines[0]


def test_a_new_venv_gets_the_portable_build(tmp_path: Path) -> None:
    done = _dry_setup(_project(tmp_path, ()))
    assert done.returncode == 0, done.stderr
    install = _llama_install(done.stdout)
    for option in ("-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_AVX512=OFF"):
        assert option in install
    for option in ("-DGGML_CPU_ALL_VARIANTS=OFF", "-DGGML_BACKEND_DL=OFF", "FORCE_CMAKE=1"):
        assert option in install
    # a wheel pip built earlier (for another CPU level) is never reused
    assert "--no-binary llama-cpp-python" in install and "--no-cache-dir" in install
    assert "-m t2c_lib.llm.build --expect x86-64-v3" in done.stdout  # the build is checked: no AVX-512
    assert done.stdout.index("pip uninstall --yes --quiet llama-cpp-python") < done.stdout.index("FORCE_CMAKE=1")


def test_a_venv_with_its_build_is_left_alone(tmp_path: Path) -> None:
    project = _project(tmp_path, (".llama-portable", ".installed"))
    done = _dry_setup(project)
    assert done.returncode == 0 and "pip" not in done.stdout, done.stdout


def test_native_is_one_option_away_and_stays_chosen(tmp_path: Path) -> None:
    project = _project(tmp_path, (".llama-portable", ".installed"))
    done = _dry_setup(project, "LLAMA_BUILD=native")
    install = _llama_install(done.stdout)
    assert "-DGGML_NATIVE=ON" in install and "-DGGML_AVX512=OFF" not in install
    assert "--expect" not in done.stdout and "rm -f .venv/.llama-*" in done.stdout
    # the venv remembers its level: later targets neither rebuild nor switch back
    native = _project(tmp_path / "n", (".llama-native", ".installed"))
    assert "pip" not in _dry_setup(native).stdout
    back = _dry_setup(native, "LLAMA_BUILD=portable")
    assert "-DGGML_NATIVE=OFF" in _llama_install(back.stdout)


def test_an_unknown_level_is_refused(tmp_path: Path) -> None:
    done = _dry_setup(_project(tmp_path, ()), "LLAMA_BUILD=avx9000")
    assert done.returncode != 0 and "LLAMA_BUILD must be portable or native, got 'avx9000'" in done.stderr


def test_the_makefile_builds_the_version_pyproject_pins() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pinned = re.search(r'"llama-cpp-python==([0-9.]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pinned and f"LLAMA_CPP_PYTHON := llama-cpp-python=={pinned.group(1)}" in makefile
