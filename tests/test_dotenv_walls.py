"""A `.env` is hostile input: it sets t2c's settings, never a wall switch or the process environment (issue 55, item 3).

A `.env` once copied every line into `os.environ`: `T2C_OS_WALL=0` turned the operating-system wall
off with no word, `PYTHONPATH` reached the query process, `T2C_STRATEGY_MODULES` imported a module.
Now such a line is ignored with one stderr line naming the key (never the value), a wall switch
counts only from the real environment, and every process that imports t2c says which are in effect.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from t2c_lib import config
from tests.helpers import ROOT

T2C = Path(sys.executable).with_name("t2c")
SECRET = "value-that-must-not-be-shown"
REFUSED = [
    *config.WALL_SWITCHES,
    *config.READ_BEFORE_DOTENV,
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "PATH",
    "BASH_ENV",
    "JAVA_TOOL_OPTIONS",
    "MPLCONFIGDIR",
]
KEPT = {"T2C_LLM_API_KEY": "sk-1", "T2C_MODEL": "m", "NEO4J_URI": "bolt://127.0.0.1:7687", "GROQ_API_KEY": "g"}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [*REFUSED, *KEPT]:
        monkeypatch.setenv(key, "")  # records the key's real state, so what load_dotenv sets is undone after the test
        monkeypatch.delenv(key)


@pytest.mark.parametrize("key", REFUSED)
def test_a_dotenv_line_that_weakens_a_wall_is_ignored_and_named(tmp_path, clean_env, capsys, key):
    before = os.environ.get(key)
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"{key}={SECRET}\nexport {key}='{SECRET}'\n", encoding="utf-8")
    config.load_dotenv(dotenv)
    assert os.environ.get(key) == before
    err = capsys.readouterr().err
    assert err.count(f"t2c: .env: {key} ignored") == 2, err
    assert SECRET not in err


def test_a_dotenv_still_sets_keys_endpoints_models_and_neo4j(tmp_path, clean_env, capsys):
    dotenv = tmp_path / ".env"
    dotenv.write_text("".join(f'{k}="{v}"\n' for k, v in KEPT.items()) + "# a comment\nnot a line\n", encoding="utf-8")
    config.load_dotenv(dotenv)
    assert {k: os.environ.get(k) for k in KEPT} == KEPT
    assert capsys.readouterr().err == ""


def test_a_malformed_key_is_ignored_without_echoing_the_line(tmp_path, clean_env, capsys):
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"$(touch x) {SECRET}=1\n", encoding="utf-8")
    config.load_dotenv(dotenv)
    err = capsys.readouterr().err
    assert err == "t2c: .env: line 1 ignored (not a KEY=VALUE line)\n"


def test_switches_in_effect_come_from_the_real_environment_only():
    assert config.wall_switches_in_effect({}) == []
    assert config.wall_switches_in_effect({"T2C_OS_WALL": "1", "T2C_NEO4J_REPLACE": "0"}) == []
    lines = config.wall_switches_in_effect({"T2C_OS_WALL": " Off ", "T2C_STRATEGY_MODULES": "my.strategies"})
    assert lines == [
        "t2c: T2C_OS_WALL=Off in the environment turns the operating-system wall off",
        "t2c: T2C_STRATEGY_MODULES=my.strategies in the environment imports Python modules",
    ]


def _python(code: str, root: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in (*config.WALL_SWITCHES, "PYTHONPATH")}
    environ.update(env, T2C_ROOT=str(root))
    return subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_a_dotenv_neither_turns_the_wall_off_nor_imports_a_module(tmp_path):
    """The issue's probe: a project `.env` with the wall switch, a strategy module and PYTHONPATH."""
    evil = tmp_path / "evil"
    evil.mkdir()
    mark = tmp_path / "imported"
    (evil / "evil_strategies.py").write_text(f"open({str(mark)!r}, 'w').close()\n", encoding="utf-8")
    (tmp_path / ".env").write_text(
        f"T2C_OS_WALL=0\nT2C_STRATEGY_MODULES=evil_strategies\nPYTHONPATH={evil}\n", encoding="utf-8"
    )
    code = (
        "import os, sys\n"
        "from t2c_lib.agent.strategies import strategy_names\n"
        "from t2c_lib.graph.oswall import wall_enabled\n"
        f"sys.path.append({str(evil)!r})  # as if PYTHONPATH had reached the interpreter\n"
        "strategy_names()\n"
        "print(wall_enabled(), os.environ.get('PYTHONPATH'), os.environ.get('T2C_STRATEGY_MODULES'))\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "None", "None"]
    assert not mark.exists()
    for key in ("T2C_OS_WALL", "T2C_STRATEGY_MODULES", "PYTHONPATH"):
        assert f"t2c: .env: {key} ignored" in done.stderr, done.stderr


@pytest.mark.skipif(not T2C.exists(), reason="needs the t2c script")
def test_a_command_announces_the_wall_switched_off_in_the_real_environment(tmp_path):
    done = subprocess.run(
        [str(T2C), "study", "run-id", "--params", "params/quick.yaml"],
        env={**os.environ, "T2C_OS_WALL": "0"},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stdout == "quick\n", done.stderr
    assert "t2c: T2C_OS_WALL=0 in the environment turns the operating-system wall off\n" in done.stderr


@pytest.mark.slow  # builds a store
@pytest.mark.skipif(not T2C.exists(), reason="needs the t2c script")
def test_db_query_announces_the_wall_switched_off(tmp_path):
    done = subprocess.run(
        [str(T2C), "db", "query", "--dataset", str(ROOT / "tests/fixtures/tiny"), "MATCH (n) RETURN count(n) AS n"],
        env={**os.environ, "T2C_OS_WALL": "0", "T2C_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("T2C_OS_WALL=0 in the environment turns the operating-system wall off") == 1
