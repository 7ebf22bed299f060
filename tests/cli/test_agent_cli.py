"""`t2c validate` and `t2c ask` as real subprocesses on the embedded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # subprocesses: the t2c command


def t2c(*args: str, cache_dir: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "T2C_CACHE_DIR": str(cache_dir), **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-m", "t2c_lib.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("agent-cli-cache")
    loaded = t2c("db", "load", "--dataset", "kurikulum", cache_dir=path)
    assert loaded.returncode == 0, loaded.stderr
    return path


def test_validate_passing_query(cache_dir):
    done = t2c(
        "validate", "--dataset", "kurikulum", "MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks", cache_dir=cache_dir
    )
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
    assert results[-1]["error_type"] == "PROPERTIES_ERROR" and results[-1]["details"]["suggestions"] == {
        "semster": ["semester"]
    }


def test_validate_refuses_writes_without_touching_the_graph(cache_dir):
    done = t2c("validate", "--json", "MATCH (m:MK) DETACH DELETE m", cache_dir=cache_dir)
    assert done.returncode == 1
    assert json.loads(done.stdout)[-1]["error_type"] == "UNSAFE_QUERY"
    count = t2c("db", "query", "--json", "MATCH (m:MK) RETURN count(m)", cache_dir=cache_dir)
    assert json.loads(count.stdout)["rows"] == [[63]]


def test_ask_with_unknown_configuration_is_a_one_line_error(cache_dir):
    done = t2c("ask", "--prompt", "Two-Shot", "Berapa SKS 'Basis Data'?", cache_dir=cache_dir)
    assert done.returncode == 2  # a usage error: the option, the bad value and the valid ones
    assert (
        "Invalid value for '--prompt' / '-p': unknown prompt type 'Two-Shot' (valid: Zero-Shot, Few-Shot, CoT)"
        in done.stderr
    )


def test_ask_through_a_loopback_endpoint_prints_every_attempt(cache_dir):
    """`t2c ask` against a real OpenAI-compatible HTTP server on 127.0.0.1 that answers badly, then well."""
    from tests.helpers.fault_server import FaultServer, ok

    bad = "<cypher>MATCH (m:MK)-[:PURSUED_IN]->(t:topic {nama: 'x'}) RETURN m.sks</cypher>"
    good = "<cypher>MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks</cypher>"
    with FaultServer() as server:
        server.queue(ok(bad), ok(good))
        env = {"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key", "T2C_MODEL": ""}
        done = t2c(
            "ask",
            "--model",
            "loopback-model",
            "--no-cache",
            "--max-iterations",
            "3",
            "Berapa SKS mata kuliah 'Basis Data'?",
            cache_dir=cache_dir,
            extra_env=env,
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # the measured defaults (ASK_DEFAULTS: Few-Shot, only_paths since issue 25); feedback = the thesis's agentic loop
    assert "Few-Shot_Only-Paths, feedback, model loopback-model@127.0.0.1" in out
    assert "Attempt 1 (temperature 0;" in out and "Attempt 2 (temperature 0.1;" in out
    assert "failed:    schema [SCHEMA_ERROR] (:MK)-[:PURSUED_IN]->(:topic) has the wrong direction" in out
    assert "feedback sent:" in out and "tulis (:topic)-[:PURSUED_IN]->(:MK)" in out
    assert "SUCCESS after 2 attempt(s)" in out and "(1 row)" in out
    assert len(requests) == 2
    first, second = (r.body["messages"] for r in requests)
    assert first[0] == second[0] and first[0]["role"] == "system"
    assert "tulis (:topic)-[:PURSUED_IN]->(:MK)" in second[-1]["content"]
    assert [r.body["temperature"] for r in requests] == [0.0, 0.1]


def test_ask_json_single_pass_failure_exits_non_zero(cache_dir):
    from tests.helpers.fault_server import FaultServer, ok

    with FaultServer() as server:
        server.queue(ok("Saya tidak tahu."))
        env = {"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key"}
        done = t2c(
            "ask",
            "--json",
            "--model",
            "loopback-model",
            "--no-cache",
            "--max-iterations",
            "1",
            "--prompt",
            "Few-Shot",
            "--schema",
            "Only-Paths",
            "Apa kode 'Basis Data'?",
            cache_dir=cache_dir,
            extra_env=env,
        )
    assert done.returncode == 1
    state = json.loads(done.stdout)
    assert state["mode"] == "single-pass" and state["config"] == "Few-Shot_Only-Paths"
    assert state["iterations"] == 1 and state["attempts"][0]["error_type"] == "NO_QUERY"
    assert state["attempts"][0]["feedback"] and state["attempts"][0]["status"] == "FAILED"


def test_ask_without_a_query_prints_the_reply_and_the_verdict_is_explained(cache_dir):
    from tests.helpers.fault_server import FaultServer, ok

    reply = "Maaf,   saya tidak bisa\n menulis query untuk pertanyaan ini. " + "x" * 400
    with FaultServer() as server:
        server.queue(ok(reply))
        env = {"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key"}
        failed = t2c(
            "ask",
            "--model",
            "loopback-model",
            "--no-cache",
            "--max-iterations",
            "1",
            "Apa kode 'Basis Data'?",
            cache_dir=cache_dir,
            extra_env=env,
        )
        server.queue(ok("<cypher>MATCH (m:MK) RETURN m.nama</cypher>"))
        passed = t2c(
            "ask",
            "--model",
            "loopback-model",
            "--no-cache",
            "--max-iterations",
            "1",
            "Apa kode 'Basis Data'?",
            cache_dir=cache_dir,
            extra_env=env,
        )
    assert failed.returncode == 1 and "FAILED (NO_QUERY)" in failed.stdout
    reply_line = next(line for line in failed.stdout.splitlines() if line.startswith("  reply:"))
    assert "Maaf, saya tidak bisa menulis query untuk pertanyaan ini." in reply_line and reply_line.endswith("…")
    assert len(reply_line) < 330
    assert passed.returncode == 0 and "SUCCESS after 1 attempt(s)" in passed.stdout
    assert "Neither says the answer is correct: that needs a gold query" in passed.stdout


def test_ask_defaults_are_the_measured_best_configuration():
    from t2c_lib.cli.agent import ASK_DEFAULTS, ASK_DEFAULTS_MEASUREMENT, ask

    params = ask.make_context("ask", ["Berapa SKS 'Basis Data'?"]).params
    assert (params["prompt_type"], params["schema_format"], params["max_tokens"]) == ("Few-Shot", "only_paths", 256)
    assert (
        ASK_DEFAULTS["prompt_type"] == "Few-Shot"
        and "| Few-Shot_Only-Paths | 6/8 | 0.875 |" in ASK_DEFAULTS_MEASUREMENT
    )
    assert "Qwen2.5-Coder-1.5B-Instruct" in ASK_DEFAULTS_MEASUREMENT


def test_ask_strategy_vote_json_has_strategy_and_llm_calls_and_sends_one_seed_per_sample(cache_dir):
    """`--strategy vote` through a real loopback HTTP endpoint: k samples, each with its own seed."""
    from tests.helpers.fault_server import FaultServer, ok

    good = "<cypher>MATCH (m:MK {nama: 'Basis Data'}) RETURN m.sks</cypher>"
    with FaultServer() as server:
        server.queue(ok("Saya tidak tahu."), ok(good))
        env = {"T2C_LLM_BASE_URL": server.base_url, "T2C_LLM_API_KEY": "test-key", "T2C_LLM_SEED": "7"}
        done = t2c(
            "ask",
            "--json",
            "--strategy",
            "vote",
            "--model",
            "loopback-model",
            "--no-cache",
            "--max-iterations",
            "2",
            "Berapa SKS mata kuliah 'Basis Data'?",
            cache_dir=cache_dir,
            extra_env=env,
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["strategy"] == "vote" and state["llm_calls"] == 2 and state["final_iteration"] == 2
    assert [r.body["seed"] for r in requests] == [7, 8]
    assert [r.body["temperature"] for r in requests] == [0.7, 0.7]
