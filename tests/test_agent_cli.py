"""`t2c validate` and `t2c ask` as real subprocesses on the embedded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def t2c(*args: str, cache_dir: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "T2C_CACHE_DIR": str(cache_dir), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "t2c_lib.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("agent-cli-cache")
    loaded = t2c("db", "load", "--dataset", "kurikulum", cache_dir=path)
    assert loaded.returncode == 0, loaded.stderr
    return path


def test_validate_passing_query(cache_dir):
    done = t2c("validate", "--dataset", "kurikulum", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", cache_dir=cache_dir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for step in ("guard", "syntax", "schema", "properties", "execution", "non_empty"):
        assert any(line.startswith(f"ok   {step}") for line in lines), done.stdout
    assert "(1 row)" in done.stdout


def test_validate_failing_query_exits_non_zero_and_names_the_step(cache_dir):
    done = t2c("validate", "--feedback", "MATCH (m:MK)-[:PURSUED_IN]->(t:topic) RETURN t.nama", cache_dir=cache_dir)
    assert done.returncode == 1
    assert "FAIL schema      [SCHEMA_ERROR]" in done.stdout
    assert "skip execution" in done.stdout and "skip non_empty" in done.stdout
    assert "tulis (:topic)-[:PURSUED_IN]->(:MK)" in done.stdout


def test_validate_json(cache_dir):
    done = t2c("validate", "--json", "MATCH (m:MK) RETURN m.semster", cache_dir=cache_dir)
    assert done.returncode == 1
    results = json.loads(done.stdout)
    assert [r["validator"] for r in results] == ["guard", "syntax", "schema", "properties"]
    assert results[-1]["error_type"] == "PROPERTIES_ERROR" and results[-1]["details"]["suggestions"] == {"semster": ["semester"]}


def test_validate_refuses_writes_without_touching_the_graph(cache_dir):
    done = t2c("validate", "--json", "MATCH (m:MK) DETACH DELETE m", cache_dir=cache_dir)
    assert done.returncode == 1
    assert json.loads(done.stdout)[-1]["error_type"] == "UNSAFE_QUERY"
    count = t2c("db", "query", "--json", "MATCH (m:MK) RETURN count(m)", cache_dir=cache_dir)
    assert json.loads(count.stdout)["rows"] == [[63]]


def test_ask_with_unknown_configuration_is_a_one_line_error(cache_dir):
    done = t2c("ask", "--prompt", "Two-Shot", "Berapa SKS 'Basis Data'?", cache_dir=cache_dir)
    assert done.returncode == 1
    assert done.stderr.strip().startswith("t2c: error: unknown prompt type 'Two-Shot'")
